/// The timers of a simulated device as data: actions with deadlines on a `Timebase`'s timeline,
/// taken out earliest first (ties in the order they were added, as a clock wakes sleepers).
///
/// Keeping timers as values instead of sleeping tasks is what lets one simulation be driven by a
/// HAL fake on its own clock and by the virtual controller inside its event loop alike, and makes
/// "cancel everything" a plain `removeAll()`. The capacity bounds it: a device that would need more
/// timers at once than that has a bug, and `add` says so instead of growing.
public struct SimulationSchedule<Action: Sendable>: Sendable {
    private struct Entry: Sendable {
        var deadline: Duration
        var sequence: UInt64
        var action: Action
    }

    /// Most timers held at once (at least 1); `add` refuses beyond it.
    public let capacity: Int
    private var entries: [Entry] = []
    private var nextSequence: UInt64 = 0

    /// An empty schedule; 64 timers is far more than the mirror ever needs at once.
    public init(capacity: Int = 64) {
        self.capacity = max(1, capacity)
    }

    /// Timers still pending.
    public var count: Int { entries.count }
    /// True when nothing is pending, so the device will do nothing more by itself.
    public var isEmpty: Bool { entries.isEmpty }

    /// The earliest deadline, if anything is scheduled.
    public var nextDeadline: Duration? { entries.lazy.map(\.deadline).min() }

    /// Schedules `action` at `deadline`; returns false (and drops it) when the schedule is full.
    @discardableResult
    public mutating func add(_ action: Action, at deadline: Duration) -> Bool {
        guard entries.count < capacity else { return false }
        entries.append(Entry(deadline: deadline, sequence: nextSequence, action: action))
        nextSequence &+= 1
        return true
    }

    /// Takes out the earliest action due at `now`, or nil when none is.
    public mutating func popDue(at now: Duration) -> Action? {
        popDueEntry(at: now)?.action
    }

    /// The earliest action due by `now` and when it was due, removed.
    public mutating func popDueEntry(at now: Duration) -> (action: Action, deadline: Duration)? {
        var best: Int?
        for index in entries.indices where entries[index].deadline <= now {
            if let current = best {
                let (a, b) = (entries[index], entries[current])
                if (a.deadline, a.sequence) < (b.deadline, b.sequence) { best = index }
            } else {
                best = index
            }
        }
        guard let best else { return nil }
        let entry = entries.remove(at: best)
        return (entry.action, entry.deadline)
    }

    /// Cancels every pending timer, as when a session is abandoned.
    public mutating func removeAll() {
        entries.removeAll()
    }
}
