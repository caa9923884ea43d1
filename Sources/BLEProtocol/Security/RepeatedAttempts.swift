/// The repeated-attempts rule (Vol 3 Part H §2.3.6): after a pairing with a peer fails its
/// verification (a confirm value or DHKey check that did not match: a wrong passkey, or someone
/// guessing one), the next attempt with that peer is refused with Repeated Attempts until a
/// waiting interval has passed; the interval doubles with each failure in a row and falls back as
/// time passes without failures, so passkey guessing gets exponentially slow while a person who
/// mistyped waits two seconds.
///
/// A Security Manager lives as long as one link; the host keeps this value per peer across links
/// (``SecurityManager/attempts`` after a link, the initial value of the next).
public struct RepeatedAttempts: Hashable, Sendable {
    /// Failures in a row (after decay).
    public private(set) var failures = 0
    /// When the last failure happened, on the Security Manager's clock.
    public private(set) var lastFailure: Duration?

    /// The first interval; each further failure doubles it.
    public static let baseInterval = Duration.seconds(2)
    /// The interval stops growing here.
    public static let longestInterval = Duration.seconds(64)

    public init() {}

    /// The interval after `count` failures in a row.
    static func interval(after count: Int) -> Duration {
        guard count > 0 else { return .zero }
        var interval = baseInterval
        for _ in 1..<min(count, 6) { interval = interval * 2 }
        return min(interval, longestInterval)
    }

    /// When a new attempt is allowed again, or nil when it is now.
    public func waitEnds(now: Duration) -> Duration? {
        guard let lastFailure else { return nil }
        let end = lastFailure + Self.interval(after: failures)
        return end > now ? end : nil
    }

    /// A verification failed now.
    public mutating func recordFailure(now: Duration) {
        decay(now: now)
        failures += 1
        lastFailure = now
    }

    /// A pairing succeeded: the slate is clean.
    public mutating func recordSuccess() {
        failures = 0
        lastFailure = nil
    }

    /// Each full interval that passes after the wait without a failure takes one failure off,
    /// so the interval shrinks back as exponentially as it grew.
    mutating func decay(now: Duration) {
        while failures > 0, let last = lastFailure {
            let quietFrom = last + Self.interval(after: failures)
            let step = Self.interval(after: failures)
            guard now >= quietFrom + step else { return }
            failures -= 1
            lastFailure = failures == 0 ? nil : quietFrom + step - Self.interval(after: failures)
        }
    }
}
