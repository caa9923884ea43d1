import Synchronization

/// A first-come, first-served lock for async code: waiting suspends the task instead of blocking a
/// thread, so writers of one link, or tests sharing one peer, take turns without starving the pool.
public final class AsyncLock: Sendable {
    private let state = Mutex<(held: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    /// Creates the lock free.
    public init() {}

    /// Waits, without blocking a thread, until the lock is ours; pair every call with `release()`.
    public func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { s -> Bool in
                if !s.held { s.held = true; return true }
                s.waiting.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    /// Hands the lock to the longest waiter, or frees it.
    public func release() {
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if s.waiting.isEmpty { s.held = false; return nil }
            return s.waiting.removeFirst()
        }
        next?.resume()
    }

    /// Runs `body` holding the lock.
    public func withLock<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        await acquire()
        defer { release() }
        return try await body()
    }
}
