/// A `Duration` in the units outside code wants: seconds as a `Double` for JSON timestamps, rates
/// and reports; whole milliseconds, microseconds or nanoseconds for syscalls, file formats and
/// protocol fields. Written once here, so no caller spells out `components` arithmetic again (and
/// gets the attosecond scale wrong).
extension Duration {
    /// The duration in seconds, fractions included.
    public var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Whole milliseconds, the fraction dropped (toward zero).
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds &* 1000 &+ attoseconds / 1_000_000_000_000_000
    }

    /// Whole microseconds, the fraction dropped (toward zero).
    public var wholeMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds &* 1_000_000 &+ attoseconds / 1_000_000_000_000
    }

    /// Whole nanoseconds, the fraction dropped (toward zero).
    public var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
    }
}
