import HAL
import HALFakes
import Testing

@Suite struct RumbleSchedulerTests {
    typealias Command = RecordingActuator<ManualClock>.Command

    /// Plays `cue` to the end by advancing the clock from one pulse to the next.
    func playToEnd(_ cue: HapticCue, on scheduler: RumbleScheduler<ManualClock>, clock: ManualClock) async throws {
        let player = Task { try await scheduler.play(cue) }
        for _ in cue.pattern.pulses {
            await clock.waitForSleepers(1)
            _ = clock.advanceToNextDeadline()
        }
        try await player.value
    }

    @Test(arguments: HapticCue.allCases)
    func everyCueBecomesItsPatternsCommandsAtThePulseStarts(cue: HapticCue) async throws {
        let clock = ManualClock()
        let pad = RecordingActuator(clock: clock)
        let scheduler = RumbleScheduler(pad, clock: clock)
        try await playToEnd(cue, on: scheduler, clock: clock)

        let pattern = cue.pattern
        var expected: [Command] = []
        if let color = pattern.indicator { expected.append(.indicate(color)) }
        expected += pattern.pulses.map { .rumble($0.rumbleLevel, $0.duration) }
        expected.append(.stop)
        if pattern.indicator != nil { expected.append(.indicate(nil)) }
        #expect(pad.commands == expected)

        // Each rumble goes out when its pulse starts; stop when the last one ends.
        var start = Duration.zero
        let rumbles = pad.recorded.filter { if case .rumble = $0.command { true } else { false } }
        for (entry, pulse) in zip(rumbles, pattern.pulses) {
            #expect(entry.at.offset == start)
            start += pulse.duration
        }
        #expect(pad.recorded.first { $0.command == .stop }?.at.offset == pattern.totalDuration)
    }

    @Test func strengthMapsToTheSameMotorsEverywhere() {
        #expect(HapticPulse(strength: 0.2, duration: .zero).rumbleLevel == RumbleLevel(strong: 0, weak: 51))
        #expect(HapticPulse(strength: 0.5, duration: .zero).rumbleLevel == RumbleLevel(strong: 0, weak: 128))
        #expect(HapticPulse(strength: 0.9, duration: .zero).rumbleLevel == RumbleLevel(strong: 230, weak: 230))
        #expect(HapticPulse(strength: 1, duration: .zero).rumbleLevel == RumbleLevel(strong: 255, weak: 255))
        #expect(HapticPulse.pause(.milliseconds(5)).rumbleLevel == .off)
    }

    @Test func aNewCueCancelsTheOneStillPlaying() async throws {
        let clock = ManualClock()
        let pad = RecordingActuator(clock: clock)
        let scheduler = RumbleScheduler(pad, clock: clock)
        let first = Task { try await scheduler.play(.error) }
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(30))  // inside error's first 80 ms pulse
        let second = Task { try await scheduler.play(.selection) }
        try await first.value  // the superseded cue returns without error
        await clock.waitForSleepers(1)
        _ = clock.advanceToNextDeadline()
        try await second.value

        let error = HapticCue.error.pattern
        let selection = HapticCue.selection.pattern
        let expected: [Command] = [
            .indicate(error.indicator), .rumble(error.pulses[0].rumbleLevel, error.pulses[0].duration),
            .stop, .indicate(nil),  // cut short at 30 ms
            .rumble(selection.pulses[0].rumbleLevel, selection.pulses[0].duration), .stop,
        ]
        #expect(pad.commands == expected)
        #expect(pad.recorded[2].at.offset == .milliseconds(30))
        #expect(pad.recorded[4].at.offset == .milliseconds(30))
        #expect(pad.recorded[5].at.offset == .milliseconds(50))
    }

    @Test func cancellingTheCallerStopsTheMotors() async throws {
        let clock = ManualClock()
        let pad = RecordingActuator(clock: clock)
        let scheduler = RumbleScheduler(pad, clock: clock)
        let player = Task { try await scheduler.play(.warning) }
        await clock.waitForSleepers(1)
        player.cancel()
        try await player.value
        #expect(pad.commands.suffix(2) == [.stop, .indicate(nil)])
        #expect(pad.commands.filter { if case .rumble = $0 { true } else { false } }.count == 1)
    }

    @Test func aVanishedPadIsReportedOnceThenCuesAreSkipped() async throws {
        let clock = ManualClock()
        let pad = RecordingActuator(name: "usb:045e:028e", clock: clock, failAfter: 2)
        let scheduler = RumbleScheduler(pad, clock: clock)
        // success: indicate, rumble (both accepted), sleep, then the pause's rumble fails.
        let player = Task { try await scheduler.play(.success) }
        await clock.waitForSleepers(1)
        _ = clock.advanceToNextDeadline()
        await #expect(throws: HapticError.disappeared("usb:045e:028e")) { try await player.value }
        #expect(await scheduler.hasDisappeared)
        // Later cues neither throw nor reach the device.
        try await scheduler.play(.error)
        #expect(pad.commands.count == 2)
    }
}
