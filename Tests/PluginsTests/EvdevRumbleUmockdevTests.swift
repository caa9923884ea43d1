import DeviceSupport
import EvdevRumble
import Foundation
import HAL
import Testing

/// Our evdev force-feedback path (EvdevForceFeedback + the evdev-rumble driver + RumbleScheduler)
/// against a pad emulated by Tests/Fixtures/umockdev/evdev_rumble_pad.py, which logs every
/// EVIOCSFF upload, EV_FF write and EVIOCRMFF erase. These run only inside the testbed;
/// `EvdevRumbleUmockdevLauncher` starts them there and checks the log.
@Suite struct EvdevRumbleUnderUmockdev {
    static let node = DeviceURI.evdev(path: "/dev/input/event0")

    @Test(.enabled(if: UmockdevBench.inside))
    func playsEveryCue() async throws {
        let pad = try EvdevRumbleDriver().openActuator(Self.node)
        let scheduler = RumbleScheduler(pad, clock: ScaledClock(speed: 20))
        for cue in HapticCue.allCases { try await scheduler.play(cue) }
    }

    @Test(.enabled(if: UmockdevBench.inside))
    func reportsAnUnplugOnceAndGoesQuiet() async throws {
        let pad = try EvdevRumbleDriver().openActuator(Self.node)
        let scheduler = RumbleScheduler(pad, clock: ScaledClock(speed: 20))
        // The pad vanishes after two plays: error's third pulse finds it gone.
        await #expect(throws: HapticError.disappeared("evdev:/dev/input/event0")) { try await scheduler.play(.error) }
        try await scheduler.play(.success)
        #expect(await scheduler.hasDisappeared)
    }
}

@Suite(.serialized) struct EvdevRumbleUmockdevLauncher {
    struct Entry: Decodable, Equatable {
        var op: String
        var id: Int?
        var strong: Int?
        var weak: Int?
        var length: Int?
        var count: Int?
        var value: Int?
    }

    static func log(at url: URL) throws -> [Entry] {
        let text = try String(contentsOf: url, encoding: .utf8)
        return try text.split(separator: "\n").map { try JSONDecoder().decode(Entry.self, from: Data($0.utf8)) }
    }

    /// What the kernel should be told for one cue: one upload + play per pulse (reusing one
    /// slot), a stop for each pause, and at the end a stop and the erase.
    static func expected(_ cue: HapticCue) -> [Entry] {
        var entries: [Entry] = []
        var playing = false
        for pulse in cue.pattern.pulses {
            let level = pulse.rumbleLevel
            if level.isOff {
                if playing { entries.append(Entry(op: "play", id: 0, count: 0)) }
                playing = false
            } else {
                let ms = Int(pulse.duration.components.attoseconds / 1_000_000_000_000_000) + Int(pulse.duration.components.seconds) * 1000
                entries.append(Entry(op: "upload", id: 0, strong: Int(level.strong) * 257, weak: Int(level.weak) * 257, length: ms))
                entries.append(Entry(op: "play", id: 0, count: 1))
                playing = true
            }
        }
        if playing { entries.append(Entry(op: "play", id: 0, count: 0)) }
        entries.append(Entry(op: "erase", id: 0))
        return entries
    }

    func run(_ test: String, goneAfter: Int? = nil) throws -> (UmockdevBench.Outcome, [Entry]) {
        let logURL = FileManager.default.temporaryDirectory.appendingPathComponent("evdev-pad-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: logURL) }
        let outcome = try UmockdevBench.run(script: "evdev_rumble_pad.py", device: "evdev-rumble-pad.umockdev",
                                            arguments: [logURL.path] + (goneAfter.map { [String($0)] } ?? []),
                                            filter: "EvdevRumbleUnderUmockdev/\(test)")
        return (outcome, (try? Self.log(at: logURL)) ?? [])
    }

    @Test(.enabled(if: UmockdevBench.available, "needs umockdev-wrapper and /usr/bin/python3 with gi"), .timeLimit(.minutes(1)))
    func everyCueReachesTheKernelAsThePatternSays() throws {
        let (outcome, log) = try run("playsEveryCue")
        #expect(outcome.status == 0 && outcome.passed("playsEveryCue"), "under umockdev:\n\(outcome.output)")
        let expected = [Entry(op: "gain", value: 0xFFFF)] + HapticCue.allCases.flatMap(Self.expected)
        #expect(log == expected)
    }

    @Test(.enabled(if: UmockdevBench.available, "needs umockdev-wrapper and /usr/bin/python3 with gi"), .timeLimit(.minutes(1)))
    func anUnplugMidCueIsReportedOnce() throws {
        let (outcome, log) = try run("reportsAnUnplugOnceAndGoesQuiet", goneAfter: 2)
        #expect(outcome.status == 0 && outcome.passed("reportsAnUnplugOnceAndGoesQuiet"), "under umockdev:\n\(outcome.output)")
        // Two pulses of `error` played; nothing reached the device after it went.
        #expect(log.filter { $0.op == "play" && $0.count == 1 }.count == 2)
        #expect(!log.contains { $0.op == "erase" })
    }
}
