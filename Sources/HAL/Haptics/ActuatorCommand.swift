/// One command a pad's `RumbleActuator` is given: what a recording fake writes down in tests and
/// what a pad cassette keeps and compares, so both speak of the same three things the same way.
public enum ActuatorCommand: Hashable, Sendable, CustomStringConvertible {
    /// Both motors at a level, for as long as the scheduler will wait before its next command.
    case rumble(RumbleLevel, Duration)
    /// The light set to a cue's colour, or back to the pad's resting light when nil.
    case indicate(IndicatorColor?)
    /// Motors off at the end of a cue.
    case stop

    /// `rumble strong 230 weak 230 for 120 ms`, `light ff8800`, `light back to rest`, `stop`:
    /// the words a pad cassette's differences are written in.
    public var description: String {
        switch self {
        case .rumble(let level, let duration):
            "rumble strong \(level.strong) weak \(level.weak) for \(PadCassette.milliseconds(duration)) ms"
        case .indicate(let color?): "light " + Hex.string([color.red, color.green, color.blue], .lower)
        case .indicate(nil): "light back to rest"
        case .stop: "stop"
        }
    }
}
