import Flows
import Foundation
import HAL
import HALFakes
import MirrorV1
import SerialTestSupport
import StandardScale
import Testing
import Transports
@testable import Peripherals
@testable import VirtualController

/// A cassette as HAL's `ScaleTransport` (issue 17, item 3): the real drivers and flows run on a
/// recorded device through our host and the virtual controller, on a manual clock, with no peer.
/// A driver that changed how it reads these devices fails here.
@Suite struct CassettePlaybackTests {
    static let registry = DriverRegistry(drivers: [MirrorV1Driver(), StandardScaleDriver()])

    static func fixture(_ name: String) throws -> BLECassette {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/cassettes/\(name).cassette").path
        return try CassetteReader.read(path: path)
    }

    /// The first stable weight the standard-scale driver reads from the recorded scale, how far
    /// the manual clock went, and what the replay warned about.
    func weigh(_ cassette: BLECassette, timing: ReplayTiming) async throws -> (WeightReading?, Duration, [String]) {
        let clock = ManualClock()
        let warnings = Locked<[String]>([])
        let result = await drive(clock) { () -> Result<WeightReading?, any Error> in
            do {
                let (transport, close) = try await CassettePlayback.scaleTransport(cassette, registry: Self.registry, clock: clock, timing: timing,
                                                                                  warn: { message in warnings.withLock { $0.append(message) } })
                defer { Task { await close() } }
                var found: DiscoveredDevice?
                for try await device in transport.discover() where Self.registry.claim(.advertisement(device.advertisement))?.descriptor.id == "standard-scale" {
                    found = device
                    break
                }
                guard let found else { return .success(nil) }
                let connection = try await transport.connect(to: found)
                // Stable as `weigh` means it: the device's flag, or the same weight twice running.
                var last: WeightReading?
                for await event in connection.events {
                    guard case .weight(let reading) = event else { continue }
                    if reading.stable == true || (reading.stable == nil && last?.kilograms == reading.kilograms) {
                        await connection.disconnect()
                        return .success(reading)
                    }
                    last = reading
                }
                return .success(nil)
            } catch {
                return .failure(error)
            }
        }
        return (try #require(result).get(), clock.now.offset, warnings.value)
    }

    @Test func theStandardScaleDriverReadsTheRecordedBumbleScale() async throws {
        let started = ContinuousClock.now
        let (reading, virtual, warnings) = try await weigh(try Self.fixture("peer-scale-weigh"), timing: .recorded)
        #expect(abs((reading?.kilograms ?? 0) - 72.35) < 0.001, "\(String(describing: reading))")
        #expect(warnings.isEmpty, "\(warnings)")
        // The recorded delays pass on the manual clock, not on the wall.
        #expect(virtual > .milliseconds(100))
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    /// A scale recorded behind a resolvable private address, with the identity our host resolved
    /// it to (`resolved`, format 1.3): the replay reports it under its identity, resolved from the
    /// private address, and connecting to the identity reaches it, with no IRK anywhere.
    @Test func aRecordedPrivateAddressIsFoundAndConnectedByItsIdentity() async throws {
        var cassette = try Self.fixture("peer-scale-weigh")
        let index = try #require(cassette.peripherals.firstIndex { !$0.connections.isEmpty })
        let rpa = try #require(BLEAddress(string: "4A:11:22:33:44:55", defaultKind: .random))
        let identity = try #require(BLEAddress(string: "D4:12:3A:00:18:99"))
        cassette.peripherals[index].address = rpa
        cassette.peripherals[index].identity = identity
        let replayed = cassette
        let clock = ManualClock()
        let result = await drive(clock) { () -> Result<(DiscoveredDevice?, Bool), any Error> in
            do {
                let (transport, close) = try await CassettePlayback.scaleTransport(replayed, registry: Self.registry, clock: clock, timing: .immediate)
                defer { Task { await close() } }
                var found: DiscoveredDevice?
                for try await device in transport.discover() where device.address == identity {
                    found = device
                    break
                }
                guard let found else { return .success((nil, false)) }
                let connection = try await transport.connect(to: found)
                await connection.disconnect()
                return .success((found, true))
            } catch {
                return .failure(error)
            }
        }
        let (found, connected) = try #require(result).get()
        #expect(found?.resolvedFrom == rpa)
        #expect(connected)
    }

    @Test(arguments: ["peer-bcs-weigh", "sim-weigh"])
    func theStandardScaleDriverReadsEveryRecordedScaleWithTimingIgnored(_ name: String) async throws {
        let (reading, _, warnings) = try await weigh(try Self.fixture(name), timing: .immediate)
        #expect((reading?.kilograms ?? 0) > 0)
        #expect(warnings.isEmpty, "\(warnings)")
    }

    @Test func theBodyScanFlowCompletesOnTheRecordedMirror() async throws {
        let cassette = try Self.fixture("peer-mirror-scan")
        let clock = ManualClock()
        let outcome = await drive(clock) { () -> BodyScanOutcome? in
            guard let (transport, close) = try? await CassettePlayback.scaleTransport(cassette, registry: Self.registry, clock: clock) else { return nil }
            var configuration = BodyScanConfiguration(recognizingMirrorsWith: Self.registry)
            configuration.autoAnswer = true
            let flow = BodyScanFlow(transport: transport, clock: clock, configuration: configuration)
            let drain = Task { for await _ in flow.outputs {} }
            let outcome = await flow.run()
            flow.close()
            await drain.value
            await close()
            return outcome
        }
        let result = try #require(outcome ?? nil)
        #expect(result.kind == .complete, "\(result.failure?.description ?? "")")
        #expect(result.result == ScanResult(scanID: 40_213, kilograms: 72.35, bodyFatPercent: 18.4, pointCount: 412_388))
    }

    @Test func theRecordedMirrorFaultEndsTheFlowTheSameWay() async throws {
        let cassette = try Self.fixture("peer-mirror-scan-user-moved")
        let clock = ManualClock()
        let outcome = await drive(clock) { () -> BodyScanOutcome? in
            guard let (transport, close) = try? await CassettePlayback.scaleTransport(cassette, registry: Self.registry, clock: clock) else { return nil }
            var configuration = BodyScanConfiguration(recognizingMirrorsWith: Self.registry)
            configuration.autoAnswer = true
            let flow = BodyScanFlow(transport: transport, clock: clock, configuration: configuration)
            let drain = Task { for await _ in flow.outputs {} }
            let outcome = await flow.run()
            flow.close()
            await drain.value
            await close()
            return outcome
        }
        let result = try #require(outcome ?? nil)
        #expect(result.failure?.reason == .mirrorError)
        #expect(result.states.last == .failed)
    }
}

/// What a replay advertises is what was recorded, PDU kind included: recording a replay gives the
/// advertising records back, and a broadcaster cannot be connected to.
@Suite struct CassetteAdvertisingRoundTripTests {
    static let broadcaster = BLEAddress(string: "C4:7C:8D:6A:00:01", defaultKind: .public)!
    static let scannable = BLEAddress(string: "C4:7C:8D:6A:00:02", defaultKind: .public)!
    static let connectable = BLEAddress(string: "C4:7C:8D:6A:00:03", defaultKind: .random)!

    static let cassette = BLECassette(peripherals: [
        BLECassette.Peripheral(address: broadcaster, advertising: [
            .init(at: .milliseconds(100), kind: .nonConnectable, rssi: -70, data: [0x02, 0x01, 0x04, 0x05, 0x16, 0x1B, 0x18, 0x01, 0x02]),
            .init(at: .milliseconds(900), kind: .nonConnectable, rssi: -70, data: [0x02, 0x01, 0x04, 0x05, 0x16, 0x1B, 0x18, 0x03, 0x04]),
        ]),
        BLECassette.Peripheral(address: scannable, advertising: [
            .init(at: .milliseconds(150), kind: .scannable, rssi: -60, data: [0x02, 0x01, 0x04]),
            .init(at: .milliseconds(150), kind: .scanResponse, rssi: -60, data: [0x03, 0x09, 0x53, 0x43]),
        ]),
        BLECassette.Peripheral(address: connectable, advertising: [
            .init(at: .milliseconds(200), kind: .connectable, rssi: -50, data: [0x02, 0x01, 0x06]),
        ]),
    ])

    @Test func recordingAReplayGivesTheRecordedAdvertisingKindsBack() async throws {
        let clock = ManualClock()
        let recorder = CassetteRecorder(clock: clock)
        let refused = await drive(clock) { () -> Result<Bool, any Error> in
            do {
                let central = try await CassettePlayback.central(Self.cassette, uri: .replay(path: "(test)"), clock: clock, tap: recorder)
                var heard: Set<BLEAddress> = []
                for try await device in central.discover() {
                    heard.insert(device.address)
                    if heard.count == 3, device.advertisement.serviceData.values.first == [0x03, 0x04] { break }
                }
                // The broadcaster never takes a connection: the attempt meets its deadline.
                let attempt: Bool
                do throws(BLEError) {
                    _ = try await central.connect(Self.broadcaster, timeout: .seconds(2))
                    attempt = false
                } catch {
                    attempt = error == .connectionTimedOut(Self.broadcaster)
                }
                await central.close()
                return .success(attempt)
            } catch {
                return .failure(error)
            }
        }
        #expect(try #require(refused).get() == true)
        let heard = recorder.cassette
        #expect(heard.peripheral(Self.broadcaster)?.advertising.map(\.kind) == [.nonConnectable, .nonConnectable])
        #expect(heard.peripheral(Self.broadcaster)?.advertising.map(\.data) == Self.cassette.peripheral(Self.broadcaster)?.advertising.map(\.data))
        #expect(heard.peripheral(Self.scannable)?.advertising.map(\.kind) == [.scannable, .scanResponse])
        #expect(heard.peripheral(Self.connectable)?.advertising.map(\.kind).first == .connectable)
    }
}
