/// Real time, sped up: every sleep lasts `1/speed` of what was asked. The simulated bench runs
/// on it so a 25-second body scan can be watched in a few seconds, with every deadline and
/// animation keeping its proportions.
public struct ScaledClock: Clock {
    /// The instants of real time, so code that mixes clocks compares like with like.
    public typealias Instant = ContinuousClock.Instant

    /// How many times faster than real time this clock runs (at least 0.001).
    public let speed: Double
    private let base = ContinuousClock()
    private let origin: ContinuousClock.Instant

    /// Starts a clock at the current real instant, running `speed` times as fast.
    public init(speed: Double) {
        self.speed = max(speed, 0.001)
        origin = ContinuousClock.now
    }

    /// Simulated time: real time since creation, multiplied by `speed`.
    public var now: Instant { origin.advanced(by: origin.duration(to: base.now) * speed) }
    /// The real clock's resolution, which is as fine as sleeps can get.
    public var minimumResolution: Duration { base.minimumResolution }

    /// Sleeps until `deadline` in simulated time, which is `1/speed` as long in real time.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let remaining = now.duration(to: deadline)
        guard remaining > .zero else { return }
        try await base.sleep(for: remaining / speed)
    }
}
