import Foundation
import HAL
import HALFakes
import SerialTestSupport
import Testing
import Transports
@testable import hwprobe

/// `sim:` is our host stack over the bench's virtual controller: `gatt`, `--btsnoop` and every
/// `sim:?fault=…` scenario run the real path from the drivers down to HCI.
@Suite struct SimulatedBenchGATTTests {
    func run(_ arguments: [String], clock: any Clock<Duration> = ScaledClock(speed: 25)) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: clock)
        let code = await cli.run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("hwprobe-sim-\(UUID().uuidString).btsnoop").path
    }

    @Test func gattListsTheBenchMirrorsDatabase() async throws {
        let result = await run(["gatt", "--hci", "sim:", "C0:FF:EE:00:4F:2A", "--json"])
        #expect(result.code == 0, "\(result.err)")
        let json = try JSONShape.parse(result.out)
        #expect(json["address"]?.string == "C0:FF:EE:00:4F:2A")
        #expect(json["mtu"]?.number == 247)
        let services = try #require(json["services"]?.array)
        #expect(services.compactMap { $0["uuid"]?.string } == ["1800", "1801", "7B9E0001-3C2A-4F1B-9E6D-5A4C3B2A1F00"])
        #expect(services.map { [$0["start"]?.number, $0["end"]?.number] } == [[1, 5], [6, 9], [10, 29]])
        let mirror = try #require(services.last?["characteristics"]?.array)
        #expect(mirror.compactMap { $0["uuid"]?.string } == (2...9).map { "7B9E000\($0)-3C2A-4F1B-9E6D-5A4C3B2A1F00" })
        #expect(mirror.compactMap { $0["handle"]?.number } == [12, 14, 16, 18, 21, 24, 27, 29])
        #expect(mirror.map { $0["properties"]?.array?.compactMap(\.string) ?? [] }
                == [["read"], ["write"], ["write"], ["read", "notify"], ["read", "notify"], ["read", "notify"], ["write"], ["read"]])
        #expect(mirror.map { $0["descriptors"]?.array?.compactMap { $0["uuid"]?.string } ?? [] }
                == [[], [], [], ["2902"], ["2902"], ["2902"], [], []])
    }

    /// `--read all` reads every readable characteristic of the bench mirror through the host
    /// stack: what the profile says it holds before a scan, and the result's refusal carried on
    /// past (docs/mirror-gatt-v1.md: result is Read Not Permitted until a scan completes).
    @Test func gattReadsEverythingTheBenchMirrorLetsItRead() async throws {
        let result = await run(["gatt", "--hci", "sim:", "C0:FF:EE:00:4F:2A", "--read", "all", "--json"])
        #expect(result.code == 0, "\(result.err)")
        let json = try JSONShape.parse(result.out)
        let characteristics = (json["services"]?.array ?? []).flatMap { $0["characteristics"]?.array ?? [] }
        func entry(_ uuid: String) -> JSONShape? { characteristics.first { $0["uuid"]?.string == uuid } }
        #expect(entry("2A00")?["value"]?.string == Array("Mirror 4F2A".utf8).map { String(format: "%02x", $0) }.joined())
        let info = MirrorScript().info
        let infoBytes = [info.protocolVersion, info.firmwareMajor, info.firmwareMinor, info.firmwarePatch, info.batteryPercent ?? 0xFF]
        #expect(entry("7B9E0002-3C2A-4F1B-9E6D-5A4C3B2A1F00")?["value"]?.string == infoBytes.map { String(format: "%02x", $0) }.joined())
        #expect(entry("7B9E0005-3C2A-4F1B-9E6D-5A4C3B2A1F00")?["value"]?.string == "000000", "scanState: idle, no progress")
        let resultEntry = try #require(entry("7B9E0009-3C2A-4F1B-9E6D-5A4C3B2A1F00"))
        #expect(resultEntry["error"]?.string == "0x02 Read Not Permitted")
        #expect(resultEntry["value"] == nil)
        // What cannot be read is not read: write-only characteristics carry neither.
        let control = try #require(entry("7B9E0008-3C2A-4F1B-9E6D-5A4C3B2A1F00"))
        #expect(control["value"] == nil && control["error"] == nil)
    }

    /// `--subscribe` on the bench scale: its Weight Measurement indications through the host
    /// stack, as many as `--count` asked, each a flags byte and a weight in 5 g steps.
    @Test func gattSubscribesToTheBenchScalesWeight() async throws {
        let result = await run(["gatt", "--hci", "sim:", "D4:12:3A:00:18:1D/public", "--subscribe", "2A9D", "--count", "3", "--json"])
        #expect(result.code == 0, "\(result.err)")
        let json = try JSONShape.parse(result.out)
        let subscription = try #require(json["subscription"])
        #expect(subscription["received"]?.number == 3)
        #expect(subscription["handle"]?.number == 14)
        let values = subscription["values"]?.array ?? []
        #expect(values.count == 3)
        #expect(values.allSatisfy { ($0["value"]?.string?.count ?? 0) == 6 && $0["value"]?.string?.hasPrefix("00") == true })
        let times = values.compactMap { $0["t"]?.number }
        #expect(times == times.sorted())
        #expect(subscription["dropped"] == nil)
        #expect(result.err.contains("received 3 indications"))
    }

    @Test func gattOnTheBenchSaysWhatThereIsToPeopleToo() async throws {
        let result = await run(["gatt", "--hci", "sim:", "D4:12:3A:00:18:1D/public"])
        #expect(result.code == 0, "\(result.err)")
        // (Words only: the gatt command's own tests own its layout, names included.)
        #expect(result.out.hasPrefix("D4:12:3A:00:18:1D  MTU 23\n"))
        let lines = result.out.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("service 181D") && $0.hasSuffix("handles 10–15") })
        #expect(lines.contains { $0.hasPrefix("  characteristic 2A9D") && $0.hasSuffix("handle 14  indicate") })
        #expect(lines.contains { $0.hasPrefix("    descriptor 2902") && $0.hasSuffix("handle 15") })
    }

    /// The capture holds the whole conversation our host had with the virtual controller, and
    /// Wireshark's reader agrees: HCI commands and events, ACL, and ATT decoded from it.
    @Test func btsnoopOnTheBenchIsACaptureTsharkReads() async throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = await run(["gatt", "--hci", "sim:", "C0:FF:EE:00:4F:2A/random", "--json", "--btsnoop", path])
        #expect(result.code == 0, "\(result.err)")
        let capture = try BTSnoopReader.read(path: path)
        #expect(capture.records.first?.packet == [0x01, 0x03, 0x0C, 0x00], "it starts with Reset")
        #expect(capture.records.contains { $0.packet.first == 0x02 && !$0.sentByHost }, "ACL from the controller")
        #expect(capture.records.contains { $0.packet.first == 0x02 && $0.sentByHost }, "ACL from the host")

        guard let tshark = Self.tshark() else {
            print("note: tshark is not installed; skipped checking that Wireshark reads the bench's capture")
            return
        }
        let frames = try Self.fields(tshark, path, "frame.number")
        #expect(frames.count == capture.records.count)
        let commands = Set(try Self.fields(tshark, path, "bthci_cmd.opcode"))
        #expect(commands.isSuperset(of: ["0x0c03", "0x200d"]), "Reset and LE Create Connection: \(commands)")
        let att = Set(try Self.fields(tshark, path, "btatt.opcode"))
        // Exchange MTU, Read By Group Type, Read By Type, Find Information: requests and responses.
        #expect(att.isSuperset(of: ["0x02", "0x03", "0x10", "0x11", "0x08", "0x09", "0x04", "0x05"]), "\(att)")
    }

    static func tshark() -> String? {
        let which = Process()
        which.executableURL = URL(fileURLWithPath: "/bin/sh")
        which.arguments = ["-c", "command -v tshark"]
        let found = Pipe()
        which.standardOutput = found
        guard (try? which.run()) != nil else { return nil }
        which.waitUntilExit()
        let path = String(decoding: found.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return which.terminationStatus == 0 && !path.isEmpty ? path : nil
    }

    /// One field of every frame, empty ones left out.
    static func fields(_ tshark: String, _ path: String, _ field: String) throws -> [String] {
        let run = Process()
        run.executableURL = URL(fileURLWithPath: tshark)
        run.arguments = ["-r", path, "-T", "fields", "-e", field]
        let output = Pipe()
        run.standardOutput = output
        run.standardError = FileHandle.nullDevice
        try run.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        run.waitUntilExit()
        #expect(run.terminationStatus == 0)
        return text.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    }

    struct Scenario: Sendable, CustomTestStringConvertible {
        var uri: String
        var reason: String?
        var code: Double?
        var lastState: String
        var testDescription: String { uri }
    }

    /// Each scenario of `sim:?fault=…` through the GATT path, on a manual clock (the flow's
    /// deadlines of a minute or two pass in microseconds).
    @Test(arguments: [
        Scenario(uri: "sim:", reason: nil, lastState: "complete"),
        Scenario(uri: "sim:?fault=disconnect&at=warmingUp", reason: "disconnected", lastState: "failed"),
        Scenario(uri: "sim:?fault=disconnect", reason: "disconnected", lastState: "failed"),
        Scenario(uri: "sim:?fault=error&at=ready&code=3", reason: "mirrorError", code: 3, lastState: "failed"),
        Scenario(uri: "sim:?fault=error&code=1", reason: "mirrorError", code: 1, lastState: "failed"),
        Scenario(uri: "sim:?fault=step-off-early", reason: "mirrorError", code: 4, lastState: "failed"),
        Scenario(uri: "sim:?fault=low-battery", reason: "preflight", lastState: "failed"),
        Scenario(uri: "sim:?fault=no-scale", reason: "timedOut", lastState: "failed"),
        Scenario(uri: "sim:?fault=never-aligned", reason: "timedOut", lastState: "failed"),
        Scenario(uri: "sim:?fault=never-steps-on", reason: "timedOut", lastState: "failed"),
        Scenario(uri: "sim:?fault=never-steps-off", reason: "timedOut", lastState: "failed"),
        Scenario(uri: "sim:?fault=silence&at=scanning", reason: "timedOut", lastState: "failed"),
    ])
    func eachScenarioPlaysOutThroughTheHostStack(_ scenario: Scenario) async throws {
        let clock = ManualClock()
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: clock)
        let probe = cli
        let code = await drive(clock) { await probe.run(["scan", "--hci", scenario.uri, "--yes", "--json"]) }
        #expect(code == (scenario.reason == nil ? 0 : 1), "\(captured.stderr.suffix(400))")
        let json = try JSONShape.parse(captured.stdout)
        #expect(json["states"]?.array?.last?.string == scenario.lastState)
        #expect(json["failure"]?["reason"]?.string == scenario.reason)
        #expect(json["failure"]?["code"]?.number == scenario.code)
    }
}
