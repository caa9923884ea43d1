import Synchronization

/// `--record FILE` for a haptic pad, and the checking half of `--device replay:FILE`: writes
/// down every cue asked of a sink and every command the cue became, each command at its offset
/// from the cue's start, on the injected clock.
///
/// It sits at the two edges every pad already has (hwprobe's sinks are all a `RumbleScheduler`
/// over a `RumbleActuator`): `sink(_:)` marks where each cue starts, `actuator(_:)` sees each
/// command on its way to the device. Nothing is changed or delayed on the way, so a recorded run
/// feels and prints the same as one that is not. Bounded by `PadCassette.Limits`: what goes past
/// a limit is counted in `dropped`.
public final class PadRecorder: Sendable {
    private let timebase: Timebase
    private let state: Mutex<(cassette: PadCassette, cueStart: Duration, dropped: Int)>

    /// Time zero is now on `clock`; `identity` is the pad's (its `cues` are ignored).
    public init(identity: PadCassette, clock: any Clock<Duration>) {
        timebase = Timebase(clock)
        var empty = identity
        empty.cues = []
        state = Mutex((empty, .zero, 0))
    }

    /// What has been recorded so far.
    public var cassette: PadCassette { state.withLock { $0.cassette } }
    /// Cues or commands past a limit that were not kept.
    public var dropped: Int { state.withLock { $0.dropped } }

    /// `sink` with each cue's start written down before it plays.
    public func sink(_ sink: any HapticSink) -> any HapticSink { CueMarkingSink(inner: sink, recorder: self) }

    /// `actuator` with each command written down as it goes to the device; `nil` plays nothing
    /// (a replay's check: the commands are only written down).
    public func actuator(_ actuator: (any RumbleActuator)?, name: String) -> any RumbleActuator {
        CommandRecordingActuator(inner: actuator, name: name, recorder: self)
    }

    func cueStarted(_ cue: HapticCue) {
        let now = timebase.now
        state.withLock { s in
            guard s.cassette.cues.count < PadCassette.Limits.cues else {
                s.dropped += 1
                return
            }
            s.cassette.cues.append(PadCassette.Cue(name: cue.rawValue, at: now))
            s.cueStart = now
        }
    }

    func sent(_ command: PadCassette.Command) {
        let now = timebase.now
        state.withLock { s in
            // A command outside any cue (none today) or past the limits is counted, not kept.
            guard let last = s.cassette.cues.indices.last, s.cassette.cues[last].commands.count < PadCassette.Limits.commandsPerCue else {
                s.dropped += 1
                return
            }
            s.cassette.cues[last].commands.append(PadCassette.TimedCommand(at: max(.zero, now - s.cueStart), command: command))
        }
    }
}

struct CueMarkingSink: HapticSink {
    let inner: any HapticSink
    let recorder: PadRecorder
    var name: String { inner.name }

    func play(_ cue: HapticCue) async throws(HapticError) {
        recorder.cueStarted(cue)
        try await inner.play(cue)
    }

    func close() async { await inner.close() }
}

struct CommandRecordingActuator: RumbleActuator {
    let inner: (any RumbleActuator)?
    let name: String
    let recorder: PadRecorder

    func rumble(_ level: RumbleLevel, for duration: Duration) async throws(HapticError) {
        recorder.sent(.rumble(level, duration))
        try await inner?.rumble(level, for: duration)
    }

    func indicate(_ color: IndicatorColor?) async throws(HapticError) {
        recorder.sent(.indicate(color))
        try await inner?.indicate(color)
    }

    func stop() async throws(HapticError) {
        recorder.sent(.stop)
        try await inner?.stop()
    }

    func close() { inner?.close() }
}
