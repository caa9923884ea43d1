import BeurerSanitasScale
import Foundation
import HAL
import PeerSupport
import IcomonScale
import OneByoneScale
import QNScale
import Testing
import Transports
import YunmaiScale
@testable import hwprobe

/// The vendor scale drivers (issue 18) against bumble peers that play each family from the same
/// public facts (Tests/Peers/peerkit/vendor_scales.py): `weigh` end to end, and the drivers
/// through the HAL where a test needs a driver setting the CLI does not offer.
@Suite(.serialized, .exclusivePeer, .enabled(if: peerAvailable, "no bumble venv: run scripts/setup-peers (CI does)"))
struct VendorScalePeerTests {
    func run(_ arguments: [String]) async -> TimedRun { await TimedRun.run(arguments) }

    func weigh(_ peer: PeerProcess, timeout: String = "20") async -> TimedRun {
        await run(["weigh", "--hci", peer.tcp.description, peer.address.description, "--timeout", timeout, "--json"])
    }

    func vendorState(_ peer: PeerProcess) async throws -> [String: Any] {
        try await peer.command(["cmd": "state"])["vendor"] as? [String: Any] ?? [:]
    }

    func written(_ peer: PeerProcess) async throws -> [String] {
        (try await vendorState(peer)["written"] as? [[String: Any]] ?? []).compactMap { $0["hex"] as? String }
    }

    /// The first advertisement of `peer` our host sees, through the HAL's transport.
    /// The first weight `driver` gets from the peer's scale, through the HAL as a flow would.
    func firstReading(_ peer: PeerProcess, with driver: any Driver) async throws -> WeightReading? {
        let central = try await BLECentral.open(peer.tcp)
        let transport = BLEScaleTransport(central: central, registry: DriverRegistry(drivers: [driver]))
        let scale = try await transport.connect(to: try await discovered(peer, on: transport))
        var reading: WeightReading?
        for await event in scale.events {
            if case .weight(let weight) = event {
                reading = weight
                break
            }
        }
        await scale.disconnect()
        await central.close()
        return reading
    }

    func discovered(_ peer: PeerProcess, on transport: BLEScaleTransport) async throws -> DiscoveredDevice {
        for try await device in transport.discover() where device.address.bytes == peer.address.bytes { return device }
        throw PeerProcess.StartFailure(description: "the peer was never seen")
    }

    // MARK: QN / Yolanda

    @Test func weighReadsTheQNScalesStableWeightAfterItsHandshake() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "qn"])
        await peer.waitUntilIdle()
        let result = await weigh(peer)
        #expect(result.code == 0, "\(result.err)")
        let json = try JSONShape.parse(result.out)
        // 22.43, 55.71, 69.46 and 72.64 kg come first, unstable; 72.35 is the first stable one.
        #expect(json["weightKg"]?.number == 72.35)
        #expect(json["driver"]?.string == "qn-scale")
        let writes = try await written(peer)
        #expect(writes.first == "130915011000000042", "the unit setting (kilograms) echoing the 0x12 frame's protocol type: \(writes)")
        #expect(writes.dropFirst().first?.hasPrefix("200815") == true, "then the time, after the scale's 0x14: \(writes)")
        let sent = (try await vendorState(peer)["sent"] as? [[String: Any]] ?? []).compactMap { $0["hex"] as? String }
        #expect(sent.filter { $0.hasPrefix("100d15") && $0.dropFirst(10).hasPrefix("00") }.count >= 1, "unstable frames were sent first")
    }

    @Test func aQNScaleAskedForPoundsStillGivesExactKilograms() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "qn"])
        await peer.waitUntilIdle()
        let central = try await BLECentral.open(peer.tcp)
        let transport = BLEScaleTransport(central: central, registry: DriverRegistry(drivers: [QNScaleDriver(displayUnit: .pounds)]))
        let scale = try await transport.connect(to: try await discovered(peer, on: transport))
        var stable: WeightReading?
        for await event in scale.events {
            if case .weight(let reading) = event, reading.stable == true {
                stable = reading
                break
            }
        }
        await scale.disconnect()
        await central.close()
        #expect(stable?.kilograms == 72.35)
        #expect(stable?.displayUnit == .pounds)
        #expect(try await vendorState(peer)["requestedUnit"] as? Int == 2, "the scale was asked for pounds")
    }

    @Test func aRefusedQNHandshakeEndsWeighAtOnceSayingWhat() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "qn"])
        await peer.waitUntilIdle()
        _ = try await peer.command(["cmd": "vendor_fault", "fault": "refuse"])
        let result = await weigh(peer)
        #expect(result.code == 3)
        let message = try #require(try JSONShape.parse(result.out)["error"]?["message"]?.string)
        #expect(message.contains("did not complete its opening exchange: the scale refused the unit setting (0x13)"), "\(message)")
        #expect(result.seconds < 8, "\(result.seconds) s")
    }

    @Test func aQNScaleThatNeverSpeaksFirstMeetsTheHandshakeDeadline() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "qn"])
        await peer.waitUntilIdle()
        let central = try await BLECentral.open(peer.tcp)
        let transport = BLEScaleTransport(central: central,
                                          registry: DriverRegistry(drivers: [QNScaleDriver(handshakeDeadline: .milliseconds(600))]))
        let device = try await discovered(peer, on: transport)
        let writtenBefore = try await written(peer).count
        // Silent for the next connection (the fault is cleared when that link ends).
        _ = try await peer.command(["cmd": "vendor_fault", "fault": "silent"])
        let connecting = Task { try await transport.connect(to: device) }
        await #expect(throws: ScaleError.handshakeFailed("no answer within 0.6 s while waiting for the scale's 0x12 information frame; "
                                                         + "wake the scale by stepping on it and try again")) {
            _ = try await connecting.value
        }
        await central.close()
        #expect(try await written(peer).count == writtenBefore, "nothing was written: the scale never asked")
    }

    @Test func aQNScaleThatDropsTheLinkMidHandshakeSaysSoAtOnce() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "qn"])
        await peer.waitUntilIdle()
        _ = try await peer.command(["cmd": "vendor_fault", "fault": "silent"])
        let central = try await BLECentral.open(peer.tcp)
        // A long deadline: the drop, not the deadline, must end the wait.
        let transport = BLEScaleTransport(central: central, registry: DriverRegistry(drivers: [QNScaleDriver(handshakeDeadline: .seconds(20))]))
        let device = try await discovered(peer, on: transport)
        let clock = ContinuousClock()
        let started = clock.now
        let connecting = Task { try await transport.connect(to: device) }
        // Wait (with a deadline) until our host has subscribed, then drop the link from the scale's side.
        let end = clock.now.advanced(by: .seconds(10))
        while clock.now < end, (try await peer.command(["cmd": "state"])["subscriptions"] as? [String: [String]])?["FFE1"] == nil {
            try await clock.sleep(for: .milliseconds(50)) // polling another process's state
        }
        _ = try await peer.command(["cmd": "disconnect", "reason": 19])
        await #expect(throws: ScaleError.disconnected(.remoteUserTerminated)) { _ = try await connecting.value }
        #expect(started.duration(to: clock.now) < .seconds(8), "well before the 20 s deadline")
        await central.close()
    }

    @Test func weighReadsABroadcastingQNScaleWithoutConnecting() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "qn-broadcast"])
        let weighing = Task { await weigh(peer) }
        _ = try await peer.command(["cmd": "vendor_weigh", "kg": 81.4, "unstable": 3])
        let result = await weighing.value
        #expect(result.code == 0, "\(result.err)")
        let json = try JSONShape.parse(result.out)
        #expect(json["weightKg"]?.number == 81.4)
        #expect(json["driver"]?.string == "qn-broadcast")
        #expect(try await peer.command(["cmd": "state"])["connections"] as? Int ?? 0 == 0, "never connected to")
    }

    @Test func listShowsTheBroadcastingQNScalesLiveReading() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "qn-broadcast"])
        _ = try await peer.command(["cmd": "vendor_weigh", "kg": 64.2, "unstable": 0])
        let result = await run(["list", "--hci", peer.tcp.description, "--scan-seconds", "1", "--json"])
        let entry = try JSONShape.parse(result.out)["peripherals"]?.array?.first { $0["address"]?.string == peer.address.description }
        #expect(entry?["driver"]?.string == "qn-broadcast")
        #expect(entry?["kind"]?.string == "scale")
        #expect(entry?["weightKg"]?.number == 64.2, "\(String(describing: entry))")
    }

    // MARK: LeFu / ICOMON (MGB)

    @Test func weighReadsTheIcomonScalesResultAfterItsConfiguration() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "icomon"])
        await peer.waitUntilIdle()
        let result = await weigh(peer)
        #expect(result.code == 0, "\(result.err)")
        let json = try JSONShape.parse(result.out)
        #expect(json["weightKg"]?.number == 72.3)
        #expect(json["driver"]?.string == "icomon-mgb")
        let configured = try await vendorState(peer)["configured"] as? [String] ?? []
        #expect(configured.suffix(6).first == "f7000000" && configured.suffix(5).first == "fa000000", "\(configured)")
        #expect(configured.suffix(4).first == "fb011eaa", "a 30-year-old man of 170 cm by default: \(configured)")
        #expect(configured.last == "fe060100", "kilograms: \(configured)")
    }

    @Test func anIcomonScaleSetToPoundsStillGivesExactKilograms() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "icomon"])
        await peer.waitUntilIdle()
        let reading = try await firstReading(peer, with: IcomonScaleDriver(displayUnit: .pounds))
        #expect(reading == WeightReading(kilograms: 72.3, stable: true, displayUnit: .pounds, bodyFatPercent: 18.4))
        #expect(try await vendorState(peer)["unit"] as? String == "lb")
    }

    @Test func aRefusedIcomonConfigurationEndsWeighAtOnce() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "icomon"])
        await peer.waitUntilIdle()
        _ = try await peer.command(["cmd": "vendor_fault", "fault": "refuse"])
        let result = await weigh(peer)
        #expect(result.code == 3)
        let message = try #require(try JSONShape.parse(result.out)["error"]?["message"]?.string)
        #expect(message.contains("the scale refused the first opener (F7)"), "\(message)")
        #expect(result.seconds < 8, "\(result.seconds) s")
    }

    // MARK: 1byone / Eufy

    @Test func weighReadsTheEufyScalePastItsStoredMeasurementsWithoutErasingThem() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "onebyone"])
        await peer.waitUntilIdle()
        let result = await weigh(peer)
        #expect(result.code == 0, "\(result.err)")
        let json = try JSONShape.parse(result.out)
        // The stored 80.15 and 79.9 kg come first, then the unstable weights, then 72.35 with impedance.
        #expect(json["weightKg"]?.number == 72.35)
        #expect(json["driver"]?.string == "onebyone-eufy")
        let state = try await vendorState(peer)
        #expect(state["erased"] as? Bool == false, "the owner's history stays on the scale")
        let writes = try await written(peer)
        #expect(writes.first == "fd370001000000000000cb", "kilograms, group 1, XOR: \(writes)")
        #expect(writes.contains("f200"))
    }

    @Test func aEufyScaleAskedForPoundsStillGivesExactKilogramsAndItsImpedance() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "onebyone"])
        await peer.waitUntilIdle()
        let central = try await BLECentral.open(peer.tcp)
        let transport = BLEScaleTransport(central: central, registry: DriverRegistry(drivers: [OneByoneScaleDriver(displayUnit: .pounds)]))
        let scale = try await transport.connect(to: try await discovered(peer, on: transport))
        var readings: [WeightReading] = []
        for await event in scale.events {
            guard case .weight(let reading) = event else { continue }
            readings.append(reading)
            if reading.stable == true { break }
        }
        await scale.disconnect()
        await central.close()
        #expect(readings.last == WeightReading(kilograms: 72.35, stable: true, displayUnit: .pounds, impedanceOhms: 500.3))
        #expect(readings.dropLast().allSatisfy { $0.stable == nil && $0.impedanceOhms == nil }, "the settling ones carry no flag: \(readings)")
        #expect(!readings.contains { $0.kilograms == 80.15 || $0.kilograms == 79.9 }, "stored measurements are not readings")
        #expect(try await vendorState(peer)["requestedUnit"] as? Int == 1, "FD 37 01: pounds")
    }

    @Test func aEufyScaleThatNeverAcknowledgesTheClockMeetsTheDeadline() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "onebyone"])
        await peer.waitUntilIdle()
        _ = try await peer.command(["cmd": "vendor_fault", "fault": "silent"])
        let central = try await BLECentral.open(peer.tcp)
        let transport = BLEScaleTransport(central: central,
                                          registry: DriverRegistry(drivers: [OneByoneScaleDriver(handshakeDeadline: .milliseconds(700))]))
        let device = try await discovered(peer, on: transport)
        await #expect(throws: ScaleError.handshakeFailed("no answer within 0.7 s while waiting for the scale's F1 00 acknowledgement "
                                                         + "of the clock; wake the scale by stepping on it and try again")) {
            _ = try await transport.connect(to: device)
        }
        await central.close()
    }

    // MARK: Yunmai

    @Test func weighReadsTheYunmaiScalesFinalFrameNotItsLiveOnes() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "yunmai"])
        await peer.waitUntilIdle()
        let result = await weigh(peer)
        #expect(result.code == 0, "\(result.err)")
        let json = try JSONShape.parse(result.out)
        #expect(json["weightKg"]?.number == 72.35)
        #expect(json["driver"]?.string == "yunmai")
        #expect(try await vendorState(peer)["commands"] as? [String] == ["10", "11", "13"], "user, time, start, each accepted")
    }

    @Test func aYunmaiScaleSetToPoundsStillGivesExactKilograms() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "yunmai"])
        await peer.waitUntilIdle()
        let reading = try await firstReading(peer, with: YunmaiScaleDriver(displayUnit: .pounds))
        #expect(reading == WeightReading(kilograms: 72.35, stable: true, displayUnit: .pounds, bodyFatPercent: 18.4))
        #expect(try await vendorState(peer)["unit"] as? String == "lb")
    }

    @Test func aRefusedYunmaiUserEndsWeighAtOnce() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "yunmai"])
        await peer.waitUntilIdle()
        _ = try await peer.command(["cmd": "vendor_fault", "fault": "refuse"])
        let result = await weigh(peer)
        #expect(result.code == 3)
        let message = try #require(try JSONShape.parse(result.out)["error"]?["message"]?.string)
        #expect(message.contains("the scale refused the user (0x10)"), "\(message)")
    }

    // MARK: Beurer / Sanitas (legacy)

    @Test func weighReadsASanitasScaleInKilograms() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "beurer"])
        await peer.waitUntilIdle()
        _ = try await peer.command(["cmd": "vendor_unit", "unit": "kg"])
        let before = (try await vendorState(peer)["unitChanges"] as? [Int] ?? []).count
        let result = await weigh(peer)
        #expect(result.code == 0, "\(result.err)")
        let json = try JSONShape.parse(result.out)
        #expect(json["weightKg"]?.number == 72.35)
        #expect(json["driver"]?.string == "beurer-sanitas")
        #expect((try await vendorState(peer)["unitChanges"] as? [Int] ?? []).count == before, "already in kilograms: left alone")
        #expect(try await written(peer).suffix(3).first == "e601", "init with the Sanitas start byte's alternative form")
    }

    @Test func aSanitasScaleSetToPoundsIsLeftSoAndStillGivesExactKilograms() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "beurer"])
        await peer.waitUntilIdle()
        _ = try await peer.command(["cmd": "vendor_unit", "unit": "lb"])
        let before = (try await vendorState(peer)["unitChanges"] as? [Int] ?? []).count
        let result = await weigh(peer)
        #expect(result.code == 0, "\(result.err)")
        #expect(try JSONShape.parse(result.out)["weightKg"]?.number == 72.35)
        let state = try await vendorState(peer)
        #expect((state["unitChanges"] as? [Int] ?? []).count == before, "the owner's unit is left alone")
        #expect(state["unit"] as? String == "lb")
        _ = try await peer.command(["cmd": "vendor_unit", "unit": "kg"])
    }

    @Test func aSanitasScaleIsSwitchedWhenTheDriverIsAskedForAUnit() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "beurer"])
        await peer.waitUntilIdle()
        _ = try await peer.command(["cmd": "vendor_unit", "unit": "kg"])
        let central = try await BLECentral.open(peer.tcp)
        let transport = BLEScaleTransport(central: central, registry: DriverRegistry(drivers: [BeurerSanitasScaleDriver(displayUnit: .pounds)]))
        let scale = try await transport.connect(to: try await discovered(peer, on: transport))
        var stable: WeightReading?
        for await event in scale.events {
            if case .weight(let reading) = event, reading.stable == true {
                stable = reading
                break
            }
        }
        await scale.disconnect()
        await central.close()
        #expect(stable == WeightReading(kilograms: 72.35, stable: true, displayUnit: .pounds))
        #expect((try await vendorState(peer)["unitChanges"] as? [Int])?.last == 2, "4D 02: pounds")
        _ = try await peer.command(["cmd": "vendor_unit", "unit": "kg"])
    }

    @Test func aSanitasScaleThatNeverAnswersInitMeetsTheDeadline() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "beurer"])
        await peer.waitUntilIdle()
        _ = try await peer.command(["cmd": "vendor_fault", "fault": "silent"])
        let central = try await BLECentral.open(peer.tcp)
        let transport = BLEScaleTransport(central: central,
                                          registry: DriverRegistry(drivers: [BeurerSanitasScaleDriver(handshakeDeadline: .milliseconds(500))]))
        let device = try await discovered(peer, on: transport)
        await #expect(throws: ScaleError.handshakeFailed("no answer within 0.5 s while waiting for the scale's answer to init; "
                                                         + "wake the scale by stepping on it and try again")) {
            _ = try await transport.connect(to: device)
        }
        await central.close()
    }

    @Test func aRefusedSanitasInitEndsWeighAtOnce() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "beurer"])
        await peer.waitUntilIdle()
        _ = try await peer.command(["cmd": "vendor_fault", "fault": "refuse"])
        let result = await weigh(peer)
        #expect(result.code == 3)
        let message = try #require(try JSONShape.parse(result.out)["error"]?["message"]?.string)
        #expect(message.contains("the scale refused init"), "\(message)")
    }

    // MARK: an unclaimed scale

    /// A peer of its own (its advertisement is replaced) that looks like an FFB0 scale of a model
    /// no driver reads.
    static let unknownScalePeer = ["--profile", "generic", "--address", "B0:B0:B0:00:00:18"]

    func unknownScale() async throws -> PeerProcess {
        let peer = try await SharedPeers.shared.peer(Self.unknownScalePeer)
        // flags 06; 16-bit UUIDs FFB0; complete name "AE BS-06".
        _ = try await peer.command(["cmd": "advertise", "data_hex": "020106" + "0303b0ff" + "0909" + Array("AE BS-06".utf8).map { String(format: "%02x", $0) }.joined()])
        return peer
    }

    @Test func listShowsAnUnreadFFB0ScaleWithANullDriverAndAHint() async throws {
        let peer = try await unknownScale()
        let result = await run(["list", "--hci", peer.tcp.description, "--scan-seconds", "1", "--json"])
        let entry = try JSONShape.parse(result.out)["peripherals"]?.array?.first { $0["address"]?.string == peer.address.description }
        #expect(entry?["kind"]?.string == "scale")
        #expect(entry?["driver"] == .null, "present and null")
        #expect(entry?["hint"]?.string?.hasPrefix("looks like a scale of the LeFu / ICOMON family (service FFB0)") == true, "\(String(describing: entry))")
    }

    @Test func weighOnAnUnreadScaleSaysWhatItResemblesAtOnce() async throws {
        let peer = try await unknownScale()
        let result = await weigh(peer)
        #expect(result.code == 3)
        let message = try #require(try JSONShape.parse(result.out)["error"]?["message"]?.string)
        #expect(message.hasPrefix("\(peer.address) (\"AE BS-06\") looks like a scale of the LeFu / ICOMON family (service FFB0), but no driver here reads this model"),
                "\(message)")
        #expect(message.contains("hwprobe gatt"))
        #expect(result.seconds < 5, "\(result.seconds) s, not the 20 s timeout")
    }
}
