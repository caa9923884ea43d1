import Synchronization

/// A clock that moves only when a test says so, so flows with multi-second deadlines run in
/// microseconds and every timeline is exactly repeatable.
public final class ManualClock: Clock, Sendable {
    /// A point on the manual timeline, as the time since the clock was created.
    public struct Instant: InstantProtocol, CustomStringConvertible {
        /// How far past the clock's start this instant is.
        public var offset: Duration
        /// The instant `offset` after the clock's start.
        public init(offset: Duration) { self.offset = offset }
        /// The instant `duration` later (earlier when negative).
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// How long from this instant to `other`; negative when `other` is earlier.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Earlier instants order first.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        /// `t+1.5 seconds`: the offset, for readable test failures.
        public var description: String { "t+\(offset)" }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>?
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [UInt64: Sleeper] = [:]
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
        var resumed: UInt64 = 0
        var countWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    /// A clock standing at zero with nobody asleep on it.
    public init() {}

    /// Where the test last moved time to; it never moves by itself.
    public var now: Instant { state.withLock { $0.now } }
    /// Zero: the clock keeps exact time, to the attosecond.
    public var minimumResolution: Duration { .zero }

    /// How many sleeps have begun and ended so far: a test that sees these counts and the
    /// sleeper count stand still knows the code under test has settled into its waits.
    public var activity: (started: UInt64, woken: UInt64) { state.withLock { ($0.nextID, $0.resumed) } }

    /// How many tasks are sleeping on this clock right now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The earliest deadline anyone sleeps until.
    public var nextDeadline: Instant? { state.withLock { $0.sleepers.values.map(\.deadline).min() } }

    /// Suspends until a test advances time to `deadline` (returns at once if it has passed); honours cancellation.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { s -> UInt64 in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { s in
                    if s.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= s.now { return .success(()) }
                    s.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) } else { notifyCountWaiters() }
            }
        } onCancel: {
            let continuation = state.withLock { s -> CheckedContinuation<Void, any Error>? in
                if let sleeper = s.sleepers.removeValue(forKey: id) { return sleeper.continuation }
                s.cancelled.insert(id)
                return nil
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has come, earliest first.
    public func advance(by duration: Duration) {
        advance(to: now.advanced(by: duration))
    }

    /// Moves time to `instant` (never backwards) and wakes every sleeper now due, earliest first.
    public func advance(to instant: Instant) {
        let due = state.withLock { s -> [CheckedContinuation<Void, any Error>] in
            if instant > s.now { s.now = instant }
            let ready = s.sleepers.filter { $0.value.deadline <= s.now }
                .sorted { ($0.value.deadline, $0.key) < ($1.value.deadline, $1.key) }
            for (id, _) in ready { s.sleepers[id] = nil }
            s.resumed += UInt64(ready.count)
            return ready.compactMap { $0.value.continuation }
        }
        for continuation in due { continuation.resume() }
    }

    /// Jumps to the earliest deadline, if anyone sleeps; returns whether time moved.
    @discardableResult
    public func advanceToNextDeadline() -> Bool {
        guard let next = nextDeadline else { return false }
        advance(to: next)
        return true
    }

    /// Waits until at least `count` tasks sleep on this clock: the way a test knows the code under
    /// test has reached its next wait, without sleeping on the wall clock.
    public func waitForSleepers(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { s -> Bool in
                if s.sleepers.count >= count { return true }
                s.countWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private func notifyCountWaiters() {
        let ready = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            let count = s.sleepers.count
            let (due, rest) = s.countWaiters.reduce(into: ([CheckedContinuation<Void, Never>](), [(count: Int, continuation: CheckedContinuation<Void, Never>)]())) {
                if $1.count <= count { $0.0.append($1.continuation) } else { $0.1.append($1) }
            }
            s.countWaiters = rest
            return due
        }
        for continuation in ready { continuation.resume() }
    }
}
