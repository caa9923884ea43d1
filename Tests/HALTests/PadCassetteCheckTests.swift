import HAL
import HALFakes
import Testing

/// `PadCassetteCheck` on a manual clock: a cue recorded through `PadRecorder` checks clean against
/// itself, and a recording with one command or offset changed is named as the difference.
@Suite struct PadCassetteCheckTests {
    /// Plays `cue` on `sink`, moving the clock from one of the scheduler's deadlines to the next.
    func play(_ cue: HapticCue, on sink: any HapticSink, clock: ManualClock) async {
        let playing = Task { try? await sink.play(cue) }
        for _ in cue.pattern.pulses {
            await clock.waitForSleepers(1)
            _ = clock.advanceToNextDeadline()
        }
        await playing.value
    }

    func recorded(_ cue: HapticCue) async -> PadCassette {
        let clock = ManualClock()
        let recorder = PadRecorder(identity: PadCassette(uri: "log:", driver: "log", name: "log:"), clock: clock)
        let sink = recorder.sink(RumbleScheduler(recorder.actuator(nil, name: "log:"), clock: clock))
        await play(cue, on: sink, clock: clock)
        return recorder.cassette
    }

    @Test func aRecordingChecksCleanAgainstTheSameCue() async {
        let cassette = await recorded(.warning)
        #expect(cassette.cues.map(\.name) == ["warning"])
        #expect(cassette.cues[0].commands.map(\.at) == [.zero, .zero, .milliseconds(100), .milliseconds(200), .milliseconds(300), .milliseconds(300)])
        let clock = ManualClock()
        let check = PadCassetteCheck(expecting: cassette, clock: clock)
        await play(.warning, on: check, clock: clock)
        #expect(check.differences().isEmpty, "\(check.differences())")
    }

    @Test func aChangedRecordingIsTheDifference() async {
        var cassette = await recorded(.warning)
        cassette.cues[0].commands[3].at = .milliseconds(210)
        let clock = ManualClock()
        let check = PadCassetteCheck(expecting: cassette, clock: clock)
        await play(.warning, on: check, clock: clock)
        #expect(check.differences() == ["cue 1 (warning), command 4: rumble strong 179 weak 179 for 100 ms expected at 0.210000 s, "
                                        + "seen at 0.200000 s (10 ms off, more than 5 ms)"])
        #expect(check.differences(tolerance: nil).isEmpty, "timing ignored, the commands are the same")
        let other = PadCassetteCheck(expecting: cassette, clock: clock)
        await play(.selection, on: other, clock: clock)
        #expect(other.differences(tolerance: nil) == ["cue 1: expected warning, saw selection"])
    }
}
