import HAL
import HALFakes

/// Runs `body` with every task on the serial executor, and moves `clock` to its next deadline
/// each time everything has settled, until `body` returns: a whole timeline (a scan, a weighing,
/// a connection that times out) in microseconds, and exactly repeatable. Nil when `body` was still
/// running after `limit` steps of time, or when nothing sleeps on the clock and nothing runs
/// (it waits for something that cannot come).
public func drive<T: Sendable>(_ clock: ManualClock, limit: Int = 200_000,
                               _ body: @escaping @Sendable () async -> T) async -> T? {
    await withSerialExecutor {
        let result = Locked<T?>(nil)
        let task = Task { let value = await body(); result.withLock { $0 = value } }
        var idle = 0
        for _ in 0..<limit {
            await settleSerialExecutor()
            if let value = result.value { return value }
            if clock.advanceToNextDeadline() {
                idle = 0
            } else {
                idle += 1
                if idle > 1_000 { break }
                await Task.yield()
            }
        }
        task.cancel()
        await settleSerialExecutor()
        return result.value
    }
}

/// Moves `clock` from deadline to deadline, letting everything settle between steps, until
/// `condition` holds; false when it still does not after `limit` steps. Call it from inside
/// `withSerialExecutor` (or `drive`), where "settled" is exact.
public func advance(_ clock: ManualClock, limit: Int = 200_000, until condition: () -> Bool) async -> Bool {
    for _ in 0..<limit {
        await settleSerialExecutor()
        if condition() { return true }
        if !clock.advanceToNextDeadline() {
            await settleSerialExecutor()
            return condition()
        }
    }
    return condition()
}
