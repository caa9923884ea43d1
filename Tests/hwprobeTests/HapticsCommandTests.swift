import DeviceSupport
import Foundation
import HAL
import Testing
@testable import hwprobe

@Suite struct HapticsCommandTests {
    func run(_ arguments: [String]) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole()
        let code = await HWProbe(console: captured.console, listSources: .empty).run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    /// `log:` prints the cue's summary, then each command the scheduler gave, with its offset.
    @Test(arguments: HapticCue.allCases)
    func logPrintsEveryCommandOfTheCue(cue: HapticCue) async {
        let result = await run(["haptics", "--device", "log:", "--cue", cue.rawValue])
        #expect(result.code == 0, "\(result.err)")
        var lines = result.out.split(separator: "\n").map(String.init)
        #expect(lines.removeFirst() == describeCue(cue))
        let commands = lines.map { $0.split(separator: " ", maxSplits: 2).last.map(String.init) ?? "" }
        let pattern = cue.pattern
        var expected: [String] = []
        if let color = pattern.indicator { expected.append("light \(hexColor(color))") }
        for pulse in pattern.pulses {
            let level = pulse.rumbleLevel
            expected.append(level.isOff ? "off for \(pulse.duration.wholeMilliseconds)ms"
                            : "rumble strong \(level.strong) weak \(level.weak) for \(pulse.duration.wholeMilliseconds)ms")
        }
        expected.append("stop")
        if pattern.indicator != nil { expected.append("light back to rest") }
        #expect(commands == expected)
        #expect(lines.allSatisfy { $0.hasPrefix("haptics +") })
    }

    @Test func mistakesAreUsageErrors() async {
        let unknownCue = await run(["haptics", "--device", "log:", "--cue", "thud"])
        #expect(unknownCue.code == 2)
        #expect(unknownCue.err.contains("unknown cue thud: use one of lightImpact, mediumImpact, selection, success, warning, error"))
        let camera = await run(["haptics", "--device", "v4l2:/dev/video0", "--cue", "success"])
        #expect(camera.code == 2)
        #expect(camera.err.contains("v4l2:/dev/video0 is not a haptic device"))
        let flow = await run(["import", "--camera", "sim:", "--out", "/nonexistent/x", "--haptics", "sim:"])
        #expect(flow.code == 2)
        #expect(flow.err.contains("--haptics sim: is not a haptic device"))
    }

    @Test func aMissingPadIsADeviceError() async {
        let missing = await run(["haptics", "--device", "evdev:/dev/input/event-none", "--cue", "success"])
        #expect(missing.code == 3)
        #expect(missing.err.contains("no device at evdev:/dev/input/event-none: `hwprobe list` shows the pads attached"))
    }
}

/// `hwprobe haptics` and `hwprobe list` against the umockdev evdev pad
/// (Tests/Fixtures/umockdev/evdev_rumble_pad.py); started by `HapticsCommandUmockdevLauncher`.
@Suite struct HapticsCommandUnderUmockdev {
    func run(_ arguments: [String]) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole()
        let code = await HWProbe(console: captured.console).run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    @Test(.enabled(if: UmockdevBench.inside))
    func playsSuccessOnTheEvdevPad() async {
        let result = await run(["haptics", "--device", "evdev:/dev/input/event0", "--cue", "success"])
        #expect(result.code == 0, "\(result.err)")
        #expect(result.out.isEmpty)
    }

    @Test(.enabled(if: UmockdevBench.inside))
    func listShowsThePadWithItsDriver() async throws {
        let result = await run(["list", "--json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any])
        let pads = try #require(json["hapticDevices"] as? [[String: Any]])
        #expect(pads.contains { $0["uri"] as? String == "evdev:/dev/input/event0" && $0["driver"] as? String == "evdev-rumble"
                && $0["name"] as? String == "umockdev rumble pad" }, "\(result.out)")
    }
}

@Suite struct HapticsCommandUmockdevLauncher {
    @Test(.enabled(if: UmockdevBench.available, "needs umockdev-wrapper and /usr/bin/python3 with gi"), .timeLimit(.minutes(1)))
    func hapticsAndListAgainstTheEvdevPad() throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("evdev-pad-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: log) }
        let outcome = try UmockdevBench.run(script: "evdev_rumble_pad.py", device: "evdev-rumble-pad.umockdev",
                                            arguments: [log.path], filter: "HapticsCommandUnderUmockdev")
        #expect(outcome.status == 0, "under umockdev:\n\(outcome.output)")
        #expect(outcome.passed("playsSuccessOnTheEvdevPad") && outcome.passed("listShowsThePadWithItsDriver"), "\(outcome.output)")
        // success = 45 % for 60 ms, a pause, 90 % for 120 ms: two uploads and plays in one slot, then erased.
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        let ops = text.split(separator: "\n").compactMap { line -> String? in
            guard let entry = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            let op = entry["op"] as? String ?? "?"
            switch op {
            case "upload": return "upload \(entry["strong"] ?? "") \(entry["weak"] ?? "") \(entry["length"] ?? "")"
            case "play": return "play \(entry["count"] ?? "")"
            default: return op
            }
        }
        #expect(ops == ["gain", "upload 0 29555 60", "play 1", "play 0", "upload 59110 59110 120", "play 1", "play 0", "erase"])
    }
}

/// `haptics --record` and `--device replay:` against the umockdev evdev pad; started by
/// `HapticsCassetteUmockdevLauncher`.
@Suite struct HapticsCassetteUnderUmockdev {
    /// `--record` against the umockdev pad: its identity as the kernel names it, the cue's
    /// commands; replayed, the same (on a skipping clock, so the offsets are the pattern's).
    @Test(.enabled(if: UmockdevBench.inside))
    func recordsThePadAndReplaysIt() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pad-cassette-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("pad.cassette").path
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console)
        cli.hapticClock = SkippingClock()
        let code = await cli.run(["haptics", "--device", "evdev:/dev/input/event0", "--cue", "warning", "--record", path])
        #expect(code == 0, "\(captured.stderr)")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("device pad evdev:/dev/input/event0\nidentity evdev-rumble umockdev%20rumble%20pad\n"), "\(text)")
        #expect(text.split(separator: "\n").filter { $0.hasPrefix("command ") && $0.contains(" rumble ") }.count == 3, "\(text)")
        #expect(text.contains("\ncommand 0.200000 rumble "), "the second pulse at 200 ms: \(text)")
        let replay = CapturedConsole()
        var again = HWProbe(console: replay.console)
        again.hapticClock = SkippingClock()
        #expect(await again.run(["haptics", "--device", "replay:\(path)", "--cue", "warning"]) == 0, "\(replay.stderr)")
    }

}

@Suite struct HapticsCassetteUmockdevLauncher {
    @Test(.enabled(if: UmockdevBench.available, "needs umockdev-wrapper and /usr/bin/python3 with gi"), .timeLimit(.minutes(1)))
    func recordAndReplayAgainstTheEvdevPad() throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("evdev-pad-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: log) }
        let outcome = try UmockdevBench.run(script: "evdev_rumble_pad.py", device: "evdev-rumble-pad.umockdev",
                                            arguments: [log.path], filter: "HapticsCassetteUnderUmockdev")
        #expect(outcome.status == 0, "under umockdev:\n\(outcome.output)")
        #expect(outcome.passed("recordsThePadAndReplaysIt"), "\(outcome.output)")
        // The recording played on the pad (warning: two pulses, uploaded and played); the replay did not.
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(text.components(separatedBy: "\"upload\"").count - 1 == 2, "\(text)")
    }
}
