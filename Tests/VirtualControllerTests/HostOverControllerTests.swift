import BLEProtocol
import HAL
import HALFakes
import MirrorV1
import SerialTestSupport
import Testing
import Transports
import Peripherals
import VirtualController

/// Our host stack against the virtual controller, in-process on a manual clock: every test is a
/// timeline that runs in microseconds and repeats exactly.
@Suite struct HostOverControllerTests {
    static let lab = BLEAddress(string: "C2:B0:B0:00:00:01/random")!
    static let second = BLEAddress(string: "C2:B0:B0:00:00:02/random")!

    /// Opens our host over a controller with `peripherals`, runs `body`, closes, and returns
    /// what the body returned (nil when it never finished).
    func withHost<T: Sendable>(_ peripherals: [any VirtualPeripheral], configuration: ControllerConfiguration = ControllerConfiguration(),
                               _ body: @escaping @Sendable (BLECentral, VirtualController, ManualClock) async throws -> T) async throws -> T {
        let clock = ManualClock()
        let controller = VirtualController(peripherals: peripherals, clock: clock, configuration: configuration)
        let outcome = await drive(clock) { () -> Result<T, any Error> in
            do {
                let central = try await BLECentral.open(stream: controller, uri: .simulatedBench, clock: clock)
                do {
                    let value = try await body(central, controller, clock)
                    await central.close()
                    return .success(value)
                } catch {
                    await central.close()
                    return .failure(error)
                }
            } catch {
                return .failure(error)
            }
        }
        guard let outcome else { throw TimelineNeverEnded() }
        return try outcome.get()
    }

    struct TimelineNeverEnded: Error {}

    static func find(_ address: BLEAddress, on central: BLECentral) async throws -> DiscoveredDevice {
        for try await device in central.discover() where device.address == address && device.name != nil { return device }
        throw BLEError.notFound("\(address)")
    }

    @Test func initLearnsTheControllerItTalksTo() async throws {
        let (version, buffers, address) = try await withHost([]) { central, _, _ -> (LocalVersion?, ACLBufferSize, BLEAddress?) in
            (await central.host.localVersion, await central.host.aclBufferSize, await central.host.localAddress)
        }
        #expect(version?.manufacturer == 0xFFFF && version?.hciVersion == 0x0C)
        #expect(buffers == ACLBufferSize(length: 27, count: 8))
        #expect(address == ControllerConfiguration().address)
    }

    @Test func discoveryMergesTheMirrorsScanResponseIntoItsAdvertisement() async throws {
        let (device, at) = try await withHost([MirrorPeripheral()]) { central, _, clock -> (DiscoveredDevice, Duration) in
            (try await Self.find(MirrorScript().address, on: central), clock.now.offset)
        }
        #expect(at == .milliseconds(150))
        #expect(device.name == "Mirror 4F2A" && device.rssi == -48)
        #expect(device.advertisement.manufacturerData[0xFFFF] == [0x4D, 0x52, 0x01, 0x00, 0x00, 0x4F, 0x2A])
        #expect(device.advertisement.serviceUUIDs == [MirrorGATT.service])
        #expect(DriverRegistry(drivers: [MirrorV1Driver()]).claim(.advertisement(device.advertisement))?.reason
                == "mirror-v1 by manufacturer FFFF data 4D 52")
    }

    @Test func aConnectionToNothingTimesOutAndIsCancelled() async throws {
        let (error, at, initiating) = try await withHost([MirrorPeripheral()]) { central, controller, clock -> (BLEError?, Duration, Bool) in
            do {
                _ = try await central.connect(BLEAddress(string: "11:22:33:44:55:66")!)
                return (nil, clock.now.offset, controller.isInitiating)
            } catch let error as BLEError {
                return (error, clock.now.offset, controller.isInitiating)
            }
        }
        #expect(error == .connectionTimedOut(BLEAddress(string: "11:22:33:44:55:66")!))
        #expect(at == .seconds(10), "the host's connect deadline, then Create Connection Cancel")
        #expect(!initiating)
    }

    @Test func longValuesCrossTheLinkInLinkLayerFragmentsBothWays() async throws {
        var configuration = ControllerConfiguration()
        configuration.leBufferCount = 3
        // Each packet waits for a connection event of its own before its buffer is free again.
        configuration.airDelay = .microseconds(7500)
        let (value, counters, writes) = try await withHost([LabPeripheral()], configuration: configuration) {
            central, controller, _ -> ([UInt8], ControllerCounters, [[UInt8]]) in
            let connection = try await central.connect(Self.lab)
            #expect(try await connection.bearer.exchangeMTU(247) == 247)
            var characteristics: [BluetoothUUID: GATTCharacteristic] = [:]
            for tree in try await connection.gatt.discoverAll() { for c in tree.characteristics { characteristics[c.uuid] = c } }
            let long = try #require(characteristics[LabPeripheral.long])
            let sink = try #require(characteristics[LabPeripheral.sink])
            let value = try await connection.gatt.read(long.valueHandle)
            try await connection.gatt.write(sink.valueHandle, Array(repeating: 0xA5, count: 240))
            let writes = controller.peripheral(Self.lab, as: LabPeripheral.self)?.behaviour.writes ?? []
            await connection.disconnect()
            return (value, controller.counters, writes)
        }
        #expect(value == LabPeripheral.longValue, "a Read then a Read Blob, each response in 27-byte fragments")
        #expect(writes == [Array(repeating: 0xA5, count: 240)], "ten fragments through three buffers")
        #expect(counters.mostBuffersInUse == 3)
        #expect(counters.bufferOverflows == 0 && counters.droppedHostPackets == 0, "the host kept within its credits")
        // A 246-byte Read Response is a 250-byte L2CAP PDU: ten ACL packets to the host.
        #expect(counters.aclToHost >= 20)
    }

    struct Ending: Sendable, CustomTestStringConvertible {
        var action: PeripheralAction
        var reason: DisconnectReason
        var after: Duration
        var testDescription: String { "\(action) → \(reason)" }
    }

    @Test(arguments: [
        Ending(action: .disconnect(reason: 0x13), reason: .remoteUserTerminated, after: .zero),
        Ending(action: .disconnect(reason: 0x08), reason: .supervisionTimeout, after: .zero),
        Ending(action: .disconnect(reason: 0x15), reason: .hciError(0x15), after: .zero),
        // Gone quiet: the host's supervision timeout (0x01F4, 5 s) passes before the controller says so.
        Ending(action: .vanish, reason: .supervisionTimeout, after: .seconds(5)),
    ])
    func aLinkThePeripheralEndsReachesTheHostWithItsReason(_ ending: Ending) async throws {
        let (reason, took) = try await withHost([LabPeripheral()]) { central, controller, clock -> (DisconnectReason?, Duration) in
            let connection = try await central.connect(Self.lab)
            let start = clock.now
            controller.peripheral(Self.lab, does: ending.action)
            for await reason in connection.disconnection() { return (reason, start.duration(to: clock.now)) }
            return (nil, start.duration(to: clock.now))
        }
        #expect(reason == ending.reason)
        #expect(took == ending.after)
    }

    @Test func aLinkTheHostEndsIsReportedAsOursAndThePeripheralHearsTheHostsReason() async throws {
        let (reason, heard, handles) = try await withHost([LabPeripheral()]) { central, controller, _ -> (DisconnectReason?, [UInt8], [UInt16]) in
            let connection = try await central.connect(Self.lab)
            await connection.disconnect()
            return (connection.disconnectReason, controller.peripheral(Self.lab, as: LabPeripheral.self)?.downReasons ?? [],
                    controller.connectionHandles)
        }
        #expect(reason == .localHostTerminated)
        #expect(heard == [0x13])
        #expect(handles.isEmpty)
    }

    @Test func handlesAreReusedTheWayControllersReuseThem() async throws {
        let handles = try await withHost([LabPeripheral(), LabPeripheral(address: Self.second, firstAdvertisement: .milliseconds(130))]) {
            central, _, _ -> [UInt16] in
            let first = try await central.connect(Self.lab)
            let second = try await central.connect(Self.second)
            await first.disconnect()
            let third = try await central.connect(Self.lab)
            let handles = [first.handle, second.handle, third.handle]
            await second.disconnect()
            await third.disconnect()
            return handles
        }
        #expect(handles == [0x0040, 0x0041, 0x0040], "the lowest free handle again, right after its link ended")
    }

    @Test func theHostsConnectionUpdateCompletesAtTheInstant() async throws {
        let (status, before, after, changes) = try await withHost([LabPeripheral()]) {
            central, controller, clock -> (UInt8, [UInt16]?, [UInt16]?, [VirtualLinkChange]) in
            let connection = try await central.connect(Self.lab)
            let event = try await central.host.send(.leConnectionUpdate(handle: connection.handle, minInterval: 0x0050, maxInterval: 0x0060,
                                                                        latency: 4, supervisionTimeout: 0x0258))
            guard case .commandStatus(let status, _, _) = event else { return (0xFF, nil, nil, []) }
            let before = controller.parameters(of: connection.handle)
            // Six connection events of 30 ms.
            try await clock.sleep(for: .milliseconds(200))
            let after = controller.parameters(of: connection.handle)
            return (status, before.map { [$0.interval, $0.latency, $0.timeout] }, after.map { [$0.interval, $0.latency, $0.timeout] },
                    controller.peripheral(Self.lab, as: LabPeripheral.self)?.changes ?? [])
        }
        #expect(status == 0x00)
        #expect(before == [0x0018, 0, 0x01F4])
        #expect(after == [0x0050, 4, 0x0258])
        #expect(changes == [.parametersUpdated(interval: 0x0050, latency: 4, supervisionTimeout: 0x0258)])
    }

    /// A peripheral's L2CAP Connection Parameter Update Request passes through the controller as
    /// data: the host answers it and asks its controller for the update, which then completes.
    @Test func aPeripheralsL2CAPParameterRequestIsAnsweredAndCarriedOut() async throws {
        var lab = LabPeripheral()
        let request = LESignalingPacket.connectionParameterUpdateRequest(identifier: 7, minInterval: 0x0030, maxInterval: 0x0040,
                                                                         latency: 0, timeout: 0x0190)
        lab.onLinkUp = [.send(L2CAPFrame(channel: L2CAPFrame.leSignaling, payload: request.encoded))]
        let (answers, parameters) = try await withHost([lab]) { central, controller, clock -> ([Bool], [UInt16]?) in
            let connection = try await central.connect(Self.lab)
            // The request at the first connection event (30 ms), the update six events later.
            try await clock.sleep(for: .milliseconds(300))
            let peripheral = controller.peripheral(Self.lab, as: LabPeripheral.self)
            return (peripheral?.signalingAnswers ?? [], controller.parameters(of: connection.handle).map { [$0.interval, $0.timeout] })
        }
        #expect(answers == [true])
        #expect(parameters == [0x0030, 0x0190])
    }

    @Test func aLinkLayerParameterRequestGoesToTheHostAsAnEvent() async throws {
        let (parameters, changes) = try await withHost([LabPeripheral()]) { central, controller, clock -> ([UInt16]?, [VirtualLinkChange]) in
            let connection = try await central.connect(Self.lab)
            controller.peripheral(Self.lab, does: .requestParameters(minInterval: 0x0020, maxInterval: 0x0028, latency: 2, timeout: 0x0200))
            try await clock.sleep(for: .milliseconds(200))
            return (controller.parameters(of: connection.handle).map { [$0.interval, $0.latency, $0.timeout] },
                    controller.peripheral(Self.lab, as: LabPeripheral.self)?.changes ?? [])
        }
        #expect(parameters == [0x0020, 2, 0x0200])
        #expect(changes == [.parametersUpdated(interval: 0x0020, latency: 2, supervisionTimeout: 0x0200)])
    }

    static let streamer = BLEAddress(string: "C2:B0:B0:00:00:0F/random")!

    /// Connects to the streaming peripheral, exchanges the MTU and discovers everything: the link
    /// and its characteristics by UUID.
    static func connectToStreamer(_ central: BLECentral) async throws -> (BLEConnection, [BluetoothUUID: GATTCharacteristic]) {
        let connection = try await central.connect(streamer)
        _ = try await connection.bearer.exchangeMTU(247)
        var characteristics: [BluetoothUUID: GATTCharacteristic] = [:]
        for tree in try await connection.gatt.discoverAll() {
            for c in tree.characteristics where characteristics[c.uuid] == nil { characteristics[c.uuid] = c }
        }
        return (connection, characteristics)
    }

    /// The stream's sequence number in a value.
    static func sequenceNumber(_ value: [UInt8]) -> UInt32 {
        UInt32(value[0]) | UInt32(value[1]) << 8 | UInt32(value[2]) << 16 | UInt32(value[3]) << 24
    }

    /// The peripheral sends as fast as the link takes; the host's reader sets the pace, the
    /// controller holds what the host has not read within its limits, and nothing is lost.
    @Test func aStreamingPeripheralIsHeldToTheHostsPaceAndLosesNothing() async throws {
        let count = 1_000
        let (sequence, counters) = try await withHost([StreamingPeripheral(address: Self.streamer, count: count)]) {
            central, controller, _ -> ([UInt32], ControllerCounters) in
            let (connection, characteristics) = try await Self.connectToStreamer(central)
            let values = try await connection.gatt.subscribe(try #require(characteristics[StreamingPeripheral.stream]))
            var sequence: [UInt32] = []
            for await value in values {
                sequence.append(Self.sequenceNumber(value))
                if sequence.count == count { break }
            }
            await connection.disconnect()
            return (sequence, controller.counters)
        }
        #expect(sequence == (0..<UInt32(count)).map { $0 })
        #expect(counters.droppedFrames == 0 && counters.droppedEvents == 0)
    }

    /// A subscriber slower than the link for a while loses nothing: past three quarters of its
    /// queue the host stops reading, so the controller holds the peripheral back (the queue used
    /// to keep the newest 1024 and let the rest go).
    @Test func aSlowSubscriberIsWaitedForAndLosesNothing() async throws {
        let count = 6_000
        let (sequence, dropped) = try await withHost([StreamingPeripheral(address: Self.streamer, count: count)]) {
            central, _, clock -> ([UInt32], Int) in
            let (connection, characteristics) = try await Self.connectToStreamer(central)
            let values = try await connection.gatt.subscribe(try #require(characteristics[StreamingPeripheral.stream]))
            var sequence: [UInt32] = []
            for await value in values {
                sequence.append(Self.sequenceNumber(value))
                // Slow now and then: a millisecond of the link's time every 500 values.
                if sequence.count % 500 == 0 { try await clock.sleep(for: .milliseconds(1)) }
                if sequence.count == count { break }
            }
            let dropped = connection.bearer.notificationsDropped
            await connection.disconnect()
            return (sequence, dropped)
        }
        #expect(sequence == (0..<UInt32(count)).map { $0 })
        #expect(dropped == 0)
    }

    /// A subscriber that holds its values but never reads them holds the link up once, for the
    /// congestion limit; then it is given up on (its oldest values go, counted) and everything
    /// else on the link goes on: here a read, answered in the middle of the stream.
    @Test func aSubscriberThatNeverReadsHoldsTheLinkUpOnlyForTheLimit() async throws {
        let count = 5_000
        let (name, dropped, newest, waited) = try await withHost([StreamingPeripheral(address: Self.streamer, count: count)]) {
            central, _, clock -> ([UInt8], Int, UInt32?, Duration) in
            let (connection, characteristics) = try await Self.connectToStreamer(central)
            let values = try await connection.gatt.subscribe(try #require(characteristics[StreamingPeripheral.stream]))
            let start = clock.now
            while connection.bearer.notificationsReceived < count { try await clock.sleep(for: .milliseconds(5)) }
            let waited = start.duration(to: clock.now)
            let name = try await connection.gatt.read(try #require(characteristics[BluetoothUUID(0x2A00)]).valueHandle)
            let dropped = connection.bearer.notificationsDropped
            var iterator = values.makeAsyncIterator()
            let first = await iterator.next()
            await connection.disconnect()
            return (name, dropped, first.map(Self.sequenceNumber), waited)
        }
        #expect(name == Array("Stream".utf8))
        #expect(dropped == count - ATTBearer.subscriberBuffer)
        #expect(newest == UInt32(count - ATTBearer.subscriberBuffer), "the queue kept the newest values")
        #expect(waited >= ATTBearer.congestionLimit && waited < ATTBearer.congestionLimit * 2, "held up once: \(waited)")
    }
}
