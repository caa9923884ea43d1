/// An injected clock seen as durations since a fixed origin, so values that simulate devices
/// (the mirror simulation, the virtual controller) can keep their timelines as plain numbers
/// while whoever drives them sleeps on the real thing: a `ManualClock` in tests, the bench's
/// `ScaledClock` in the product.
///
/// `any Clock<Duration>` has an instant type of its own that cannot be stored or compared
/// without opening the existential; this opens it once, here.
public struct Timebase: Sendable {
    private let read: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    /// Time zero is `clock.now` at this call.
    public init(_ clock: any Clock<Duration>) {
        (read, sleeper) = Self.open(clock)
    }

    private static func open<C: Clock<Duration>>(_ clock: C) -> (@Sendable () -> Duration, @Sendable (Duration) async throws -> Void) {
        let origin = clock.now
        return ({ origin.duration(to: clock.now) },
                { offset in try await clock.sleep(until: origin.advanced(by: offset), tolerance: nil) })
    }

    /// How long since the origin.
    public var now: Duration { read() }

    /// Sleeps until `offset` after the origin (at once if that has passed); throws when cancelled.
    public func sleep(until offset: Duration) async throws {
        try await sleeper(offset)
    }
}
