import Flows
import HAL
import HALFakes
import Testing
@testable import hwprobe

@Suite struct FlowPresenterHapticsTests {
    typealias Command = RecordingActuator<ManualClock>.Command

    @Test func aNewCueCutsThePlayingOneShort() async {
        let clock = ManualClock()
        let pad = RecordingActuator(clock: clock)
        let captured = CapturedConsole()
        let presenter = FlowPresenter(console: captured.console, sink: RumbleScheduler(pad, clock: clock),
                                      noColorFlag: true, verbose: false, json: true)
        presenter.show(.cue(.error))
        await clock.waitForSleepers(1)  // error's first pulse is playing
        presenter.show(.cue(.selection))
        for _ in 0..<100_000 where pad.commands.count < 5 { await Task.yield() }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await presenter.finish()
        let error = HapticCue.error.pattern.pulses[0], selection = HapticCue.selection.pattern.pulses[0]
        #expect(pad.commands == [
            .indicate(HapticCue.error.pattern.indicator), .rumble(error.rumbleLevel, error.duration), .stop, .indicate(nil),
            .rumble(selection.rumbleLevel, selection.duration), .stop,
        ] as [Command])
    }

    @Test func aPadThatVanishesIsReportedOnceAndTheFlowGoesOn() async {
        let clock = ScaledClock(speed: 1000)
        let pad = RecordingActuator(name: "evdev:/dev/input/event5", clock: clock, failAfter: 1)
        let captured = CapturedConsole()
        let presenter = FlowPresenter(console: captured.console, sink: RumbleScheduler(pad, clock: clock),
                                      noColorFlag: true, verbose: false, json: true)
        for cue in [HapticCue.lightImpact, .success, .error, .warning] { presenter.show(.cue(cue)) }
        await presenter.finish()
        let reports = captured.stderr.split(separator: "\n").filter { $0.contains("disappeared") }
        #expect(reports == ["hwprobe: haptic device evdev:/dev/input/event5 disappeared: carrying on without haptics"])
        #expect(pad.commands.count == 1)
    }
}
