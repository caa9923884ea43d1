import Flows
import HAL
import HALFakes
import MirrorV1
import SerialTestSupport
import StandardScale
import Testing
import Transports
import Peripherals
import VirtualController

/// The bench's mirror as a GATT peripheral, met by the real mirror driver through our host and the
/// virtual controller, on a manual clock. The expectations are the ones the bumble mirror peer is
/// held to (hwprobeTests' DriverPeerTests): the same states, result, fault reasons and refusals.
@Suite struct VirtualMirrorTests {
    static let registry = DriverRegistry(drivers: [MirrorV1Driver(), StandardScaleDriver()])
    static let goodStates: [BodyScanState] = [.connecting, .waitForScale, .preflight, .alignScale, .confirmAlignment, .warmingUp,
                                              .phoneDown, .countdown, .scanning, .stepOff, .processing, .complete]

    /// Runs the body-scan flow (answering itself) against a mirror peripheral playing `script`,
    /// `attempts` times on one controller; returns each outcome and what the mirror went through.
    func scan(_ script: MirrorScript = MirrorScript(), attempts: Int = 1,
              configure: @escaping @Sendable (inout BodyScanConfiguration) -> Void = { _ in })
        async throws -> (outcomes: [BodyScanOutcome], phases: [MirrorPhase], connections: Int) {
        let clock = ManualClock()
        let controller = VirtualController(peripherals: [MirrorPeripheral(script: script)], clock: clock)
        let result = await drive(clock) { () -> Result<[BodyScanOutcome], any Error> in
            let central: BLECentral
            do { central = try await BLECentral.open(stream: controller, uri: .simulatedBench, clock: clock) } catch { return .failure(error) }
            let transport = BLEScaleTransport(central: central, registry: Self.registry, clock: clock)
            var configuration = BodyScanConfiguration(recognizingMirrorsWith: Self.registry)
            configuration.autoAnswer = true
            configuration.makeScanToken = { Array(repeating: 0x5A, count: 16) }
            configure(&configuration)
            var outcomes: [BodyScanOutcome] = []
            for _ in 0..<attempts {
                let flow = BodyScanFlow(transport: transport, clock: clock, configuration: configuration)
                let drain = Task { for await _ in flow.outputs {} }
                outcomes.append(await flow.run())
                flow.close()
                await drain.value
            }
            await central.close()
            return .success(outcomes)
        }
        let mirror = controller.peripheral(script.address, as: MirrorPeripheral.self)
        return (try #require(result).get(), mirror?.simulation.phases ?? [], mirror?.simulation.connectionCount ?? 0)
    }

    @Test func aWholeScanThroughTheDriverOurHostAndTheVirtualController() async throws {
        let (outcomes, phases, _) = try await scan()
        let outcome = try #require(outcomes.first)
        #expect(outcome.kind == .complete, "\(outcome.failure?.description ?? "")")
        #expect(outcome.states == Self.goodStates)
        #expect(outcome.result == ScanResult(scanID: 40_213, kilograms: 72.35, bodyFatPercent: 18.4, pointCount: 412_388))
        #expect(phases == [.connected, .scalePresent, .aligned, .warmingUp, .ready, .scanning, .stepOff, .processing, .complete])
    }

    struct Fault: Sendable, CustomTestStringConvertible {
        var script: MirrorScript
        var reason: BodyScanFailure.Reason
        var code: UInt8?
        var name: String
        var testDescription: String { name }

        init(_ name: String, _ fault: MirrorFault? = nil, battery: UInt8? = nil, reason: BodyScanFailure.Reason, code: UInt8? = nil) {
            script = MirrorScript(fault: fault)
            if let battery { script.info.batteryPercent = battery }
            self.reason = reason
            self.code = code
            self.name = name
        }
    }

    /// DriverPeerTests.faults, as the simulation's own faults.
    static let faults: [Fault] = [
        Fault("disconnect in warmingUp", .disconnect(in: .warmingUp, after: .milliseconds(100)), reason: .disconnected),
        Fault("disconnect in scanning", .disconnect(in: .scanning, after: .milliseconds(100)), reason: .disconnected),
        Fault("error 1 in scanning", .error(.userMoved, in: .scanning, after: .milliseconds(100)), reason: .mirrorError, code: 1),
        Fault("error 3 in ready", .error(.sensorFault, in: .ready, after: .milliseconds(50)), reason: .mirrorError, code: 3),
        Fault("error 2 in ready", .error(.scaleNotLevel, in: .ready, after: .milliseconds(50)), reason: .mirrorError, code: 2),
        Fault("error 5 in ready", .error(.mirrorTimedOut, in: .ready, after: .milliseconds(50)), reason: .mirrorError, code: 5),
        Fault("error 6 in ready", .error(.batteryLow, in: .ready, after: .milliseconds(50)), reason: .mirrorError, code: 6),
        Fault("error 255 in ready", .error(.unknown(0xFF), in: .ready, after: .milliseconds(50)), reason: .mirrorError, code: 255),
        Fault("step off early at 40 %", .stepOffEarly(atProgress: 40), reason: .mirrorError, code: 4),
        Fault("battery at 8 %", battery: 8, reason: .preflight),
        Fault("scale never present", .scaleNeverPresent, reason: .timedOut),
        Fault("never aligned", .neverAligned, reason: .timedOut),
    ]

    @Test(arguments: faults)
    func eachFaultEndsTheScanWithItsReasonThroughGATT(_ fault: Fault) async throws {
        let (outcomes, _, _) = try await scan(fault.script)
        let outcome = try #require(outcomes.first)
        #expect(outcome.kind == .failed)
        #expect(outcome.states.last == .failed)
        #expect(outcome.failure?.reason == fault.reason, "\(outcome.failure?.description ?? "")")
        #expect(outcome.failure?.code == fault.code)
    }

    /// A fault strikes once in the mirror's life: the retry reconnects (reusing the handle) and completes.
    @Test func aRetryAfterTheMirrorDroppedTheLinkReconnectsAndCompletes() async throws {
        let (outcomes, phases, connections) = try await scan(Self.faults[0].script, attempts: 2)
        #expect(outcomes.map(\.kind) == [.failed, .complete])
        #expect(connections == 2)
        #expect(phases.last == .complete)
    }

    /// After a mirror error the flow ends the link itself; the host before issue 14's rewrite
    /// started a 2 s timer on Disconnect that was never cancelled, and the retry's link, which the
    /// controller gives the same handle, was closed by it. This is that defect's regression test
    /// through the whole stack (HostDefectTests has it at the host's level).
    @Test func aRetryAfterAMirrorErrorReconnectsAndCompletes() async throws {
        let (outcomes, phases, connections) = try await scan(Self.faults[2].script, attempts: 2)
        #expect(connections == 2)
        #expect(outcomes.map(\.kind) == [.failed, .complete])
        #expect(phases.last == .complete)
    }

    @Test func aMirrorThatFallsSilentMeetsTheFlowsDeadline() async throws {
        let (outcomes, _, _) = try await scan(MirrorScript(fault: .silence(in: .scanning))) { configuration in
            configuration.deadlines.scanning = Deadline(warning: .milliseconds(300), failure: .milliseconds(800))
        }
        #expect(outcomes.first?.failure?.reason == .timedOut)
        #expect(outcomes.first?.failure?.state == .scanning)
    }

    // MARK: the profile's refusals, through the driver and through raw ATT

    /// Connects the mirror driver to a fresh mirror and hands `body` its HAL connection and the link.
    func withMirror<T: Sendable>(_ body: @escaping @Sendable (any ScaleConnection, BLEConnection, ManualClock) async throws -> T)
        async throws -> T {
        let clock = ManualClock()
        let controller = VirtualController(peripherals: [MirrorPeripheral()], clock: clock)
        let result = await drive(clock) { () -> Result<T, any Error> in
            do {
                let central = try await BLECentral.open(stream: controller, uri: .simulatedBench, clock: clock)
                let link = try await central.connect(MirrorScript().address)
                let mirror = try await MirrorV1Driver().open(link, device: MirrorScript().discoveredDevice, clock: clock)
                let value = try await body(mirror, link, clock)
                await mirror.disconnect()
                await central.close()
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try #require(result).get()
    }

    @Test func theDriverMeetsTheProfilesRefusals() async throws {
        try await withMirror { mirror, _, _ throws -> Void in
            let token = [UInt8](repeating: 7, count: 16)
            await #expect(throws: ScaleError.refused(.scanToken(token), .notInitialized)) { try await mirror.send(.scanToken(token)) }
            await #expect(throws: ScaleError.refused(.startScan, .notReady)) { try await mirror.send(.startScan) }
            await #expect(throws: ScaleError.refused(.confirmAlignment, .notAligned)) { try await mirror.send(.confirmAlignment) }
            await #expect(throws: ScaleError.refused(.startScan, .attError(0x02))) { _ = try await mirror.readResult() }
            #expect(try await mirror.readInfo() == MirrorScript().info)
        }
    }

    @Test func everyWriteIsCheckedBeforeTheSimulationSeesIt() async throws {
        let codes = try await withMirror { _, link, clock -> [String: UInt8] in
            var handles: [BluetoothUUID: UInt16] = [:]
            for tree in try await link.gatt.discoverAll() { for c in tree.characteristics { handles[c.uuid] = c.valueHandle } }
            func code(_ id: UInt8, _ value: [UInt8]) async -> UInt8 {
                guard let handle = handles[MirrorGATT.uuid(id)] else { return 0xEE }
                do { try await link.gatt.write(handle, value); return 0 } catch .att(let failure) { return failure.code } catch { return 0xEF }
            }
            var codes: [String: UInt8] = [:]
            codes["init short"] = await code(0x03, [0x01, 0xA4, 0x06])
            codes["init opcode 2"] = await code(0x03, [0x02, 0xA4, 0x06, 0x00])
            codes["init units 2"] = await code(0x03, [0x01, 0xA4, 0x06, 0x02])
            codes["token 15 bytes"] = await code(0x04, [UInt8](repeating: 1, count: 15))
            codes["token before init"] = await code(0x04, [UInt8](repeating: 1, count: 16))
            codes["control empty"] = await code(0x08, [])
            codes["control 09"] = await code(0x08, [0x09])
            codes["control 02 idle"] = await code(0x08, [0x02])
            codes["deviceInfo write"] = await code(0x02, [0x01])
            codes["init"] = await code(0x03, [0x01, 0xA4, 0x06, 0x00])
            // A Write Command where only Write Requests are taken is ignored: no scan starts.
            if let token = handles[MirrorGATT.uuid(0x04)] { try await link.gatt.writeWithoutResponse(token, [UInt8](repeating: 1, count: 16)) }
            try await clock.sleep(for: .milliseconds(50))
            if let state = handles[MirrorGATT.uuid(0x05)] { codes["state after command"] = try await link.gatt.read(state).first }
            // Reading a write-only characteristic: Read Not Permitted.
            if let control = handles[MirrorGATT.uuid(0x08)] {
                do throws(BLEError) { _ = try await link.gatt.read(control) } catch .att(let failure) { codes["control read"] = failure.code } catch {}
            }
            codes["token after init"] = await code(0x04, [UInt8](repeating: 1, count: 16))
            if let state = handles[MirrorGATT.uuid(0x05)] { codes["state after token"] = try await link.gatt.read(state).first }
            return codes
        }
        #expect(codes == ["init short": 0x0D, "init opcode 2": 0x13, "init units 2": 0x13, "token 15 bytes": 0x0D,
                          "token before init": 0x81, "control empty": 0x0D, "control 09": 0x13, "control 02 idle": 0x82,
                          "deviceInfo write": 0x03, "init": 0, "state after command": 0, "control read": 0x02,
                          "token after init": 0, "state after token": 1])
    }

    @Test func theDatabaseIsTheProfilesWithGAPAndGATTFirst() async throws {
        let trees = try await withMirror { _, link, _ throws -> [GATTServiceTree] in try await link.gatt.discoverAll() }
        #expect(trees.map(\.service.uuid) == [BluetoothUUID(0x1800), BluetoothUUID(0x1801), MirrorGATT.service])
        let mirror = try #require(trees.last)
        #expect(mirror.characteristics.map(\.uuid) == (2...9).map { MirrorGATT.uuid($0) })
        #expect(mirror.characteristics.map(\.properties) == [.read, .write, .write, [.read, .notify], [.read, .notify], [.read, .notify],
                                                             .write, .read])
        // Notifying characteristics, and only they, have a CCCD.
        #expect(mirror.characteristics.map { $0.descriptors.map(\.uuid) }
                == [[], [], [], [GATTCharacteristic.clientConfiguration], [GATTCharacteristic.clientConfiguration],
                    [GATTCharacteristic.clientConfiguration], [], []])
    }

    // MARK: the scale

    @Test func theBenchScaleIndicatesItsSettlingReadingsThroughTheStandardDriver() async throws {
        let device = DiscoveredDevice(address: BLEAddress(string: "D4:12:3A:00:18:1D")!, rssi: -61,
                                      advertisement: Advertisement(flags: 0x06, localName: "Bench Scale", serviceUUIDs: [BluetoothUUID(0x181D)]))
        let scale = FakeScale(device: device, steps: [
            .init(after: .milliseconds(300), reading: WeightReading(kilograms: 71.9, stable: false)),
            .init(after: .milliseconds(400), reading: WeightReading(kilograms: 72.35, stable: false)),
            .init(after: .milliseconds(400), reading: WeightReading(kilograms: 72.35, stable: true)),
        ], disconnectAfterLast: .milliseconds(500))
        let clock = ManualClock()
        let controller = VirtualController(peripherals: [StandardScalePeripheral(scale: scale)], clock: clock)
        let result = await drive(clock) { () -> Result<([ScaleEvent], [Duration], WeightScaleFeature?), any Error> in
            do {
                let central = try await BLECentral.open(stream: controller, uri: .simulatedBench, clock: clock)
                let transport = BLEScaleTransport(central: central, registry: Self.registry, clock: clock)
                var found: DiscoveredDevice?
                for try await seen in transport.discover() where seen.address == device.address {
                    found = seen
                    break
                }
                let connection = try await transport.connect(to: try #require(found))
                let subscribed = clock.now
                var events: [ScaleEvent] = []
                var times: [Duration] = []
                for await event in connection.events {
                    events.append(event)
                    times.append(subscribed.duration(to: clock.now))
                }
                let feature = (connection as? StandardScaleConnection)?.weightScaleFeature
                await central.close()
                return .success((events, times, feature))
            } catch {
                return .failure(error)
            }
        }
        let (events, times, feature) = try #require(result).get()
        // Weights travel in 0.005 kg steps: compared to the gram.
        let described = events.map { event -> String in
            switch event {
            case .weight(let reading): "\((reading.kilograms * 1000).rounded() / 1000) \(reading.stable.map(String.init) ?? "nil")"
            case .disconnected(let reason): "\(reason)"
            default: "\(event)"
            }
        }
        #expect(described == ["71.9 nil", "72.35 nil", "72.35 nil", "\(DisconnectReason.remoteUserTerminated)"])
        #expect(times == [.milliseconds(300), .milliseconds(700), .milliseconds(1100), .milliseconds(1600)])
        #expect(feature?.weightResolution == .step(kilograms: 0.05, pounds: 0.1))
    }
}
