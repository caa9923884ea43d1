import Foundation
import HAL
import PeerSupport
import Synchronization
import Testing
import Transports
@testable import hwprobe

/// `hwprobe serve` (the real binary) on one controller of a bumble link, met by centrals nobody
/// here wrote: bumble's own host (Tests/Peers/central_peer.py: the mirror-v1 client's body scan
/// written from mirror-gatt-v1.md, the Weight Measurement by indication, reads and writes), and
/// hwprobe's own `check` on a second controller of the same link. One bumble process for the
/// suite; the served devices run ten or twenty-five times faster than life.
/// `hwprobe serve …` in its own process, its JSON lines read as they come.
final class Serving: Sendable {
    private let process: Process
    private let lines = Locked<(all: [String], waiter: (String, CheckedContinuation<String?, Never>)?)>(([], nil))
    private let errPath: String

    /// `command`: `serve`, or `relay` (RelayPeerTests).
    init(_ arguments: [String], command: String = "serve", speed: Int = 10, environment extra: [String: String] = [:]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: hwprobeBinary())
        process.arguments = [command] + arguments + ["--json"]
        var environment = ProcessInfo.processInfo.environment
        environment["HWPROBE_SIM_SPEED"] = "\(speed)"
        environment.merge(extra) { $1 }
        process.environment = environment
        errPath = FileManager.default.temporaryDirectory.appending(path: "\(command)-\(UUID().uuidString).err").path
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        process.standardInput = FileHandle.nullDevice
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let handle = out.fileHandleForReading
        let lines = self.lines
        Thread {
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[..<newline], as: UTF8.self)
                    buffer.removeSubrange(...newline)
                    let waiter = lines.withLock { state -> CheckedContinuation<String?, Never>? in
                        state.all.append(line)
                        guard let (wanted, continuation) = state.waiter, line.contains(wanted) else { return nil }
                        state.waiter = nil
                        return continuation
                    }
                    waiter?.resume(returning: line)
                }
                if chunk.isEmpty {
                    let waiter = lines.withLock { state in defer { state.waiter = nil }; return state.waiter?.1 }
                    waiter?.resume(returning: nil)
                    return
                }
            }
        }.start()
    }

    var all: [String] { lines.withLock { $0.all } }

    /// The first line (already printed or still to come) containing `text`; nil when the
    /// process ended, or `limit` passed, without one.
    func line(containing text: String, within limit: Duration = .seconds(10)) async -> String? {
        let lines = lines
        let timer = Task {
            try? await ContinuousClock().sleep(for: limit)
            let waiter = lines.withLock { state in defer { state.waiter = nil }; return state.waiter?.1 }
            waiter?.resume(returning: nil)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let found = lines.withLock { state -> String?? in
                if let line = state.all.first(where: { $0.contains(text) }) { return .some(line) }
                guard process.isRunning else { return .some(nil) }
                state.waiter = (text, continuation)
                return nil
            }
            if let found { continuation.resume(returning: found) }
        }
    }

    /// SIGTERM, as Ctrl-C would: returns the exit code and stderr.
    func stop() -> (code: Int32, err: String) {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: errPath)
        return (process.terminationStatus, err)
    }
}

@Suite(.serialized, .exclusivePeer, .enabled(if: peerAvailable, "no bumble venv: run scripts/setup-peers (CI does)"))
struct ServePeerTests {
    /// One bumble process for the suite (it exits when this test process does: its stdin closes).
    static let central = Task { try await CentralPeer.start(hosts: 2) }
    static let mirror = "C0:FF:EE:00:4F:2A/random"

    static func events(_ lines: [String]) -> [[String: JSONShape]] {
        lines.compactMap { try? JSONShape.parse($0) }
    }

    /// Runs the body scan through bumble's central and returns its answer.
    static func bodyScan(_ central: CentralPeer) async throws -> [String: Any] {
        try await central.command(["cmd": "connect", "address": mirror, "timeout": 5])
        try await central.command(["cmd": "mtu", "mtu": 247])
        let scan = try await central.command(["cmd": "mirror_scan", "timeout": 20])
        try await central.command(["cmd": "disconnect"])
        return scan
    }

    @Test func bumblesCentralRunsAWholeBodyScanAndARecordingOfItPlaysTheSameConversation() async throws {
        let central = try await Self.central.value
        let directory = FileManager.default.temporaryDirectory.appending(path: "serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cassette = directory.appending(path: "mirror.cassette").path

        let serving = try Serving(["--hci", central.hosts[0].description, "mirror-v1?advertising=extended", "--record", cassette])
        #expect(await serving.line(containing: "\"advertising\"") != nil)
        // Everything a scanner must see is in the one extended advertisement.
        let found = try await central.command(["cmd": "scan", "seconds": 0.6])
        let devices = found["devices"] as? [[String: Any]] ?? []
        #expect(devices.contains { $0["name"] as? String == "Mirror 4F2A" }, "\(devices)")
        let live = try await Self.bodyScan(central)
        #expect(live["states"] as? [String] == ["warmingUp", "ready", "scanning", "stepOff", "processing", "complete"], "\(live)")
        let result = try #require(live["result"] as? String)
        #expect(result.count == 24)
        // Served again after the disconnect.
        #expect(await serving.line(containing: "\"disconnected\"") != nil)
        let readvertised = await serving.line(containing: "\"advertising\"", within: .seconds(5))
        #expect(readvertised != nil)
        let (code, err) = serving.stop()
        #expect(code == 0, "\(err)")
        let events = Self.events(serving.all)
        let kinds = events.compactMap { $0["event"]?.string }
        #expect(kinds.filter { $0 == "advertising" }.count == 2)
        #expect(events.contains { $0["event"]?.string == "mtu" && $0["mtu"]?.number == 247 })
        let subscribed = events.filter { $0["event"]?.string == "subscribed" }.compactMap { $0["uuid"]?.string }
        #expect(subscribed == (5...7).map { "7B9E000\($0)-3C2A-4F1B-9E6D-5A4C3B2A1F00" })
        #expect(events.contains { $0["event"]?.string == "write" && $0["value"]?.string == "000102030405060708090a0b0c0d0e0f" })
        #expect(events.contains { $0["event"]?.string == "read" && $0["value"]?.string == result })
        #expect(kinds.contains("notified") && kinds.contains("connected") && kinds.contains("disconnected"))

        // The recording holds the conversation from the device's side, and played as the device
        // it gives bumble's client the same scan, answer for answer.
        let recorded = try CassetteReader.read(path: cassette)
        #expect(recorded.peripherals.count == 1)
        let device = try #require(recorded.peripherals.first)
        #expect(device.address.description == "C0:FF:EE:00:4F:2A/random" || device.address.bytes == BLEAddress(string: Self.mirror)?.bytes)
        #expect(device.connections.count == 1)
        #expect((device.connections.first?.att.count ?? 0) > 50)
        let replaying = try Serving(["--hci", central.hosts[0].description, "replay:\(cassette)?advertising=extended"])
        #expect(await replaying.line(containing: "\"advertising\"") != nil)
        let replayed = try await Self.bodyScan(central)
        #expect(replayed["states"] as? [String] == live["states"] as? [String], "\(replayed)")
        #expect(replayed["result"] as? String == result)
        #expect(replaying.stop().code == 0)
    }

    @Test func theServedStandardScalesWeightReachesBumbleByIndication() async throws {
        let central = try await Self.central.value
        let serving = try Serving(["--hci", central.hosts[0].description, "standard-scale?weight=81.5&advertising=extended", "--name", "Served Scale"])
        let advertising = try #require(await serving.line(containing: "\"advertising\""))
        // Advertised from the controller's public address (the scale's own is public too).
        let address = try #require(try JSONShape.parse(advertising)["address"]?.string)
        let found = try await central.command(["cmd": "scan", "seconds": 0.6])
        #expect((found["devices"] as? [[String: Any]] ?? []).contains { $0["name"] as? String == "Served Scale" })
        try await central.command(["cmd": "connect", "address": address, "timeout": 5])
        try await central.command(["cmd": "discover"])
        let name = try await central.command(["cmd": "read", "uuid": "2A00"])
        #expect(name["value"] as? String == Data("Served Scale".utf8).map { String(format: "%02x", $0) }.joined())
        try await central.command(["cmd": "subscribe", "uuid": "2A9D", "indicate": true])
        let values = try await central.command(["cmd": "values", "uuid": "2A9D", "count": 3, "timeout": 5])
        let last = try #require((values["values"] as? [String])?.last)
        // Weight Measurement: flags 0 (SI), weight in 0.005 kg: 81.5 kg is 16300 (0x3FAC).
        #expect(last == "00ac3f")
        try await central.command(["cmd": "disconnect"])
        #expect(await serving.line(containing: "\"disconnected\"") != nil)
        #expect(Self.events(serving.all).contains { $0["event"]?.string == "indicated" && $0["value"]?.string == "00ac3f" })
        #expect(serving.stop().code == 0)
    }

    /// hwprobe's standard-scale driver (`weigh`, on the second controller) and the served scale
    /// are two implementations of the Weight Scale Service: the driver reads the weight exactly.
    @Test func weighOnTheSecondControllerReadsTheServedScalesWeight() async throws {
        let central = try await Self.central.value
        let serving = try Serving(["--hci", central.hosts[0].description, "standard-scale?weight=81.5&advertising=extended"])
        let advertising = try #require(await serving.line(containing: "\"advertising\""))
        let address = try #require(try JSONShape.parse(advertising)["address"]?.string)
        let run = await TimedRun.run(["weigh", "--hci", central.hosts[1].description, address, "--timeout", "20", "--json"])
        #expect(run.code == 0, "\(run.out)\(run.err)")
        let json = try JSONShape.parse(run.out)
        #expect(json["weightKg"]?.number == 81.5, "\(run.out)")
        #expect(json["driver"]?.string == "standard-scale", "\(run.out)")
        #expect(serving.stop().code == 0)
    }

    /// Every scale family `serve` plays by driver id, weighed by hwprobe's own driver on the
    /// second controller: the served device side (written from openScale, xiaomi-ble and the
    /// vendors' captures: Sources/Peripherals/Devices) and the driver (Plugins/) are two
    /// implementations of each protocol, and the weight comes through exactly.
    @Test(arguments: ["qn-scale", "qn-broadcast", "yunmai", "onebyone-eufy", "beurer-sanitas", "icomon-mgb", "mi-scale"])
    func weighReadsEachServedScaleFamily(_ family: String) async throws {
        let central = try await Self.central.value
        let serving = try Serving(["--hci", central.hosts[0].description, "\(family)?weight=80.5&advertising=extended"])
        let advertising = try #require(await serving.line(containing: "\"advertising\""))
        let address = try #require(try JSONShape.parse(advertising)["address"]?.string)
        let run = await TimedRun.run(["weigh", "--hci", central.hosts[1].description, address, "--timeout", "20", "--json"])
        #expect(run.code == 0, "\(family): \(run.out)\(run.err)")
        let json = try JSONShape.parse(run.out)
        #expect(json["weightKg"]?.number == 80.5, "\(family): \(run.out)")
        #expect(json["driver"]?.string == family, "\(family): \(run.out)")
        #expect(serving.stop().code == 0)
    }

    @Test func aProfileFilesSecuredValueIsRefusedAndAWriteIsNotified() async throws {
        let central = try await Self.central.value
        let path = FileManager.default.temporaryDirectory.appending(path: "profile-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data("""
        {"name": "Lab Thermo", "advertising": {"form": "extended"},
         "services": [{"uuid": "181A", "characteristics": [
            {"uuid": "2A6E", "properties": ["read", "write", "notify"], "value": "0a01"},
            {"uuid": "2A6F", "properties": ["read"], "value": "3200", "security": {"read": "encrypted"}},
            {"uuid": "2A1D", "properties": ["read"], "text": "armpit", "descriptors": [{"uuid": "2901", "text": "where"}]}]}]}
        """.utf8).write(to: URL(fileURLWithPath: path))
        let serving = try Serving(["--hci", central.hosts[0].description, "profile:\(path)"])
        let advertising = try #require(await serving.line(containing: "\"advertising\""))
        let address = try #require(try JSONShape.parse(advertising)["address"]?.string)
        try await central.command(["cmd": "connect", "address": address + "/random", "timeout": 5])
        try await central.command(["cmd": "discover"])
        #expect(try await central.command(["cmd": "read", "uuid": "2A6E"])["value"] as? String == "0a01")
        #expect(try await central.command(["cmd": "read", "uuid": "2A6F"])["att_error"] as? Int == 0x0F)
        #expect(try await central.command(["cmd": "read", "uuid": "2A1D"])["value"] as? String == "61726d706974")
        try await central.command(["cmd": "subscribe", "uuid": "2A6E"])
        try await central.command(["cmd": "write", "uuid": "2A6E", "value": "0b02"])
        let values = try await central.command(["cmd": "values", "uuid": "2A6E", "count": 1, "timeout": 5])
        #expect(values["values"] as? [String] == ["0b02"])
        try await central.command(["cmd": "disconnect"])
        #expect(serving.stop().code == 0)
    }

    /// hwprobe's own `check` on a second controller of the link against `hwprobe serve`: the served
    /// mirror passes every mirror-v1 check, and a deviation fails exactly its check, as on `sim:`.
    @Test func checkAgainstTheServedMirrorPassesAndADeviationFailsExactlyItsCheck() async throws {
        let central = try await Self.central.value
        // At ten times life the scale stays occupied long enough for `scan.scale-rate` to judge
        // (at 25 it skips); the deviation only needs its one check to fail, so it runs faster.
        for (device, speed, failing) in [("mirror-v1?advertising=extended", 10, [String]()),
                                         ("mirror-v1?advertising=extended&deviation=missing-cccd", 25, ["gatt.cccd.scale"])] {
            let serving = try Serving(["--hci", central.hosts[0].description, device], speed: speed)
            #expect(await serving.line(containing: "\"advertising\"") != nil)
            let run = await TimedRun.run(["check", "--hci", central.hosts[1].description, Self.mirror, "--profile", "mirror-v1", "--json"])
            let json = try JSONShape.parse(run.out)
            #expect(CheckCommandTests.failed(json) == failing, "\(device): \(run.out)")
            if failing.isEmpty {
                #expect(json["passed"]?.number == Double(MirrorChecks.profile.checks.count), "\(run.out)")
            }
            #expect(run.code == (failing.isEmpty ? 0 : 1))
            #expect(serving.stop().code == 0)
        }
    }

    @Test func serveRefusesWhatHasNoRadioAndDevicesItDoesNotKnow() async throws {
        let sim = await TimedRun.run(["serve", "--hci", "sim:", "mirror-v1"])
        #expect(sim.code == 2 && sim.err.contains("real controller"), "\(sim.err)")
        let unknown = await TimedRun.run(["serve", "--hci", "tcp:127.0.0.1:1", "toaster"])
        #expect(unknown.code == 2 && unknown.err.contains("no device serve can play"), "\(unknown.err)")
        // Nothing listens there: the controller cannot be opened (exit 3).
        let closed = await TimedRun.run(["serve", "--hci", "tcp:127.0.0.1:1", "mirror-v1"])
        #expect(closed.code == 3, "\(closed.err)")
    }
}
