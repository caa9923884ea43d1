import Foundation
import HAL
import HALFakes
import Testing
import Transports
@testable import hwprobe

/// A clock whose sleeps end at once, the time moved on to their deadline: a cue's commands come
/// at exactly the pattern's offsets, so a recording and its replay agree to the microsecond
/// however busy the machine is.
final class SkippingClock: Clock, Sendable {
    typealias Instant = ManualClock.Instant
    private let manual = ManualClock()
    var now: Instant { manual.now }
    var minimumResolution: Duration { .zero }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        if manual.now < deadline { manual.advance(to: deadline) }
        await Task.yield()
    }
}

/// `haptics --record` and `--device replay:` (docs/cli.md, "Cassettes"): a recording of the
/// `log:` pad replays clean; a cassette with one command or offset changed, or another cue, exits 1
/// saying which command, what was expected and what came, at which offset.
@Suite struct PadCassetteCommandTests {
    func run(_ arguments: [String]) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.hapticClock = SkippingClock()
        let code = await cli.run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    func record(_ cue: String = "success") async throws -> (path: String, text: String, cleanup: @Sendable () -> Void) {
        let (path, cleanup) = CassetteCLI.temporaryPath("pad.cassette")
        let live = await run(["haptics", "--device", "log:", "--cue", cue, "--record", path])
        #expect(live.code == 0, "\(live.err)")
        return (path, try String(contentsOfFile: path, encoding: .utf8), cleanup)
    }

    @Test func aRecordedCueReplaysCleanAndPrintsNothing() async throws {
        let (path, text, cleanup) = try await record()
        defer { cleanup() }
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first == "hwprobe-cassette 1.1")
        #expect(lines.contains("device pad log:"))
        #expect(lines.contains("identity log log:"))
        // success: light, 45 % (weak motor only), a pause, 90 % on both, then stop and the light back.
        let commands = lines.filter { $0.hasPrefix("command ") }
        #expect(commands == ["command 0.000000 light 00c850", "command 0.000000 rumble 0 115 0.060000",
                             "command 0.060000 rumble 0 0 0.080000", "command 0.140000 rumble 230 230 0.120000",
                             "command 0.260000 stop", "command 0.260000 light -"], "\(text)")
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        let replay = await run(["haptics", "--device", "replay:\(path)", "--cue", "success"])
        #expect(replay.code == 0, "\(replay.err)")
        #expect(replay.out.isEmpty, "a replay plays nothing, not even to the log")
    }

    @Test func aChangedOffsetExitsOneSayingWhichCommandAndByHowMuch() async throws {
        let (path, text, cleanup) = try await record()
        defer { cleanup() }
        let changed = text.replacingOccurrences(of: "command 0.140000 rumble 230 230", with: "command 0.150000 rumble 230 230")
        #expect(changed != text)
        try Data(changed.utf8).write(to: URL(fileURLWithPath: path))
        let replay = await run(["haptics", "--device", "replay:\(path)", "--cue", "success"])
        #expect(replay.code == 1)
        #expect(replay.err.contains("cue 1 (success), command 4: rumble strong 230 weak 230 for 120 ms expected at 0.150000 s, "
                                    + "seen at 0.140000 s (10 ms off, more than 5 ms)"), "\(replay.err)")
    }

    @Test func anOffsetWithinFiveMillisecondsStillMatches() async throws {
        let (path, text, cleanup) = try await record()
        defer { cleanup() }
        let changed = text.replacingOccurrences(of: "command 0.140000 rumble 230 230", with: "command 0.144000 rumble 230 230")
        try Data(changed.utf8).write(to: URL(fileURLWithPath: path))
        let replay = await run(["haptics", "--device", "replay:\(path)", "--cue", "success"])
        #expect(replay.code == 0, "\(replay.err)")
    }

    @Test func aChangedCommandExitsOneWithExpectedAndSeen() async throws {
        let (path, text, cleanup) = try await record()
        defer { cleanup() }
        let changed = text.replacingOccurrences(of: "rumble 230 230 0.120000", with: "rumble 200 200 0.120000")
        try Data(changed.utf8).write(to: URL(fileURLWithPath: path))
        let replay = await run(["haptics", "--device", "replay:\(path)", "--cue", "success"])
        #expect(replay.code == 1)
        #expect(replay.err.contains("cue 1 (success), command 4: expected rumble strong 200 weak 200 for 120 ms at 0.140000 s, "
                                    + "saw rumble strong 230 weak 230 for 120 ms at 0.140000 s"), "\(replay.err)")
    }

    @Test func anotherCueIsADifferenceToo() async throws {
        let (path, _, cleanup) = try await record()
        defer { cleanup() }
        let replay = await run(["haptics", "--device", "replay:\(path)", "--cue", "warning"])
        #expect(replay.code == 1)
        #expect(replay.err.contains("cue 1: expected success, saw warning"), "\(replay.err)")
    }

    @Test func aCassetteWithoutAPadOrDamagedIsADeviceError() async throws {
        let (path, cleanup) = CassetteCLI.temporaryPath()
        defer { cleanup() }
        try Data("hwprobe-cassette 1.1\nend 0\n".utf8).write(to: URL(fileURLWithPath: path))
        let empty = await run(["haptics", "--device", "replay:\(path)", "--cue", "success"])
        #expect(empty.code == 3)
        #expect(empty.err.contains("recorded no haptic device"), "\(empty.err)")
        try Data("hwprobe-cassette 1.1\ndevice pad log:\ncue 0.000000 success\nend 2\n".utf8).write(to: URL(fileURLWithPath: path))
        let damaged = await run(["haptics", "--device", "replay:\(path)", "--cue", "success"])
        #expect(damaged.code == 3)
        #expect(damaged.err.contains("damaged at line 3"), "\(damaged.err)")
        try Data("hwprobe-cassette 2.0\nend 0\n".utf8).write(to: URL(fileURLWithPath: path))
        let newer = await run(["haptics", "--device", "replay:\(path)", "--cue", "success"])
        #expect(newer.code == 3)
        #expect(newer.err.contains("use a newer hwprobe"), "\(newer.err)")
    }

    /// The committed fixtures: `log-pad-error` recorded on the host, `vm-evdev-pad-success` in the
    /// bench VM against its uinput pad (`scripts/test-vm evdev`).
    @Test func theHostPadCassetteReplaysClean() async throws {
        let path = CassetteCLI.fixtures + "/log-pad-error.cassette"
        let replay = await run(["haptics", "--device", "replay:\(path)", "--cue", "error"])
        #expect(replay.code == 0, "\(replay.err)")
        let other = await run(["haptics", "--device", "replay:\(path)", "--cue", "warning"])
        #expect(other.code == 1)
        #expect(other.err.contains("cue 1: expected error, saw warning"), "\(other.err)")
    }

    /// Under TCG the VM's commands came 7-22 ms late (the evdev upload itself is emulated): the
    /// replay finds the same commands in the same order and says only how late each was; with
    /// timing ignored (the Swift API's `tolerance: nil`) there is no difference at all.
    @Test func theBenchVMPadCassetteHasTheSameCommandsLateByTheVM() async throws {
        let path = CassetteCLI.fixtures + "/vm-evdev-pad-success.cassette"
        let cassette = try CassetteReader.readAll(path: path)
        let pad = try #require(cassette.pads.first)
        #expect(pad.uri == "evdev:/dev/input/event1" && pad.driver == "evdev-rumble" && pad.name == "hwprobe bench uinput pad")
        #expect(pad.cues.map(\.name) == ["success"])
        let replay = await run(["haptics", "--device", "replay:\(path)", "--cue", "success"])
        let differences = replay.err.split(separator: "\n").filter { $0.contains("cue 1 (success), command") }
        #expect(replay.code == 1 && differences.count == 6, "\(replay.err)")
        #expect(differences.allSatisfy { $0.contains("ms off, more than 5 ms") }, "only timing differs: \(replay.err)")
        // The host's own commands for the cue, on the skipping clock: the pattern exactly.
        let (host, _, cleanup) = try await record("success")
        defer { cleanup() }
        let seen = try #require(try CassetteReader.readAll(path: host).pads.first).cues
        #expect(pad.differences(seen: seen, tolerance: nil).isEmpty)
        #expect(pad.differences(seen: seen).count == 6)
    }
}

/// A flow's cues (`scan --haptics … --record`): one cassette holds the BLE session and the pad,
/// and replaying both from it (`--hci replay:` and `--haptics replay:`) gives the same result
/// with the same cues; a flow whose cues changed ends with exit 1 and the difference.
@Suite struct FlowPadCassetteTests {
    func run(_ arguments: [String]) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: ScaledClock(speed: 25))
        cli.hapticClock = SkippingClock()
        let code = await cli.run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    @Test func aScanWithHapticsRecordsItsCuesAndReplaysThem() async throws {
        let (path, cleanup) = CassetteCLI.temporaryPath("scan.cassette")
        defer { cleanup() }
        let live = await run(["scan", "--hci", "sim:", "--yes", "--json", "--haptics", "log:", "--record", path])
        #expect(live.code == 0, "\(live.err.suffix(300))")
        let cassette = try CassetteReader.readAll(path: path)
        #expect(!cassette.ble.peripherals.isEmpty, "the BLE session is in the same cassette")
        let pad = try #require(cassette.pads.first)
        #expect(pad.uri == "log:" && !pad.cues.isEmpty)
        #expect(pad.cues.last?.name == "success", "\(pad.cues.map(\.name))")
        let replay = await run(["scan", "--hci", "replay:\(path)", "--yes", "--json", "--haptics", "replay:\(path)"])
        #expect(replay.code == 0, "\(replay.err.suffix(600))")
        #expect(CassetteCLI.withoutTimings(replay.out) == CassetteCLI.withoutTimings(live.out))

        // One cue fewer in the recording: the flow's replay says which cue it did not expect.
        var text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let lastCue = try #require(lines.lastIndex { $0.hasPrefix("cue ") })
        let removed = lines[lastCue...].prefix { !$0.hasPrefix("end ") }.count
        var kept = Array(lines[..<lastCue]) + lines[(lastCue + removed)...]
        let endIndex = try #require(kept.firstIndex { $0.hasPrefix("end ") })
        let count = try #require(Int(kept[endIndex].dropFirst(4)))
        kept[endIndex] = "end \(count - removed)"
        text = kept.joined(separator: "\n")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let changed = await run(["scan", "--hci", "replay:\(path)", "--yes", "--json", "--haptics", "replay:\(path)"])
        #expect(changed.code == 1, "\(changed.err.suffix(600))")
        #expect(CassetteCLI.withoutTimings(changed.out) == CassetteCLI.withoutTimings(live.out), "the flow's one JSON object, as before")
        #expect(changed.err.contains("cue \(pad.cues.count): success was played, but the recording has only \(pad.cues.count - 1) cues"),
                "\(changed.err.suffix(600))")
    }
}
