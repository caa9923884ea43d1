/// A cassette's pad as a sink a test hands to a flow or a driver: it plays nothing, writes down
/// the commands each cue becomes (through the same `RumbleScheduler` every pad uses, on the
/// test's clock), and says how they differ from the recording (`differences`). The Swift side of
/// `--device replay:FILE`.
///
/// On a `ManualClock` the offsets are the pattern's exactly, so the 5 ms of the contract hold;
/// a test that only cares which commands came passes `tolerance: nil`.
public final class PadCassetteCheck<C: Clock>: HapticSink where C.Duration == Duration {
    /// The recording the cues are checked against.
    public let expected: PadCassette
    private let recorder: PadRecorder
    private let sink: any HapticSink

    /// Checks against `pad`, timing every command on `clock` (a `ManualClock` gives exact offsets).
    public init(expecting pad: PadCassette, clock: C) {
        expected = pad
        recorder = PadRecorder(identity: pad, clock: clock)
        sink = recorder.sink(RumbleScheduler(recorder.actuator(nil, name: pad.name), clock: clock))
    }

    /// The recorded pad's name, so the check looks like the pad to whoever holds it.
    public var name: String { expected.name }

    /// Schedules the cue as a real pad would and writes down the commands it becomes; nothing is felt.
    public func play(_ cue: HapticCue) async throws(HapticError) {
        try await sink.play(cue)
    }

    /// Ends any cue still being scheduled; what was recorded stays readable in `seen`.
    public func close() async {
        await sink.close()
    }

    /// The cues played so far, with their commands.
    public var seen: [PadCassette.Cue] { recorder.cassette.cues }

    /// One readable line per difference from the recording; empty when the cues matched.
    public func differences(tolerance: Duration? = PadCassette.tolerance) -> [String] {
        expected.differences(seen: seen, tolerance: tolerance)
    }
}
