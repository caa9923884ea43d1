import Synchronization

/// A one-way gate: closed until ``open()``, then open for good, and every task waiting on it
/// goes on.
///
/// Why: a task that waits for a device thread to finish (a capture loop releasing its buffers, a
/// link's reader closing its descriptor) must block, not look at a flag every few milliseconds,
/// and must still give up at a deadline when the device is stuck.
package final class Latch: Sendable {
    private struct State {
        var isOpen = false
        var nextID = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    /// Whether ``open()`` has been called.
    package var isOpen: Bool { state.withLock { $0.isOpen } }

    /// Opens the gate and resumes every waiter; later calls do nothing.
    package func open() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            guard !s.isOpen else { return [] }
            s.isOpen = true
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the gate is open, or at once when the calling task is cancelled.
    package func wait() async {
        let id = state.withLock { s -> Int in
            defer { s.nextID += 1 }
            return s.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { s -> Bool in
                    if s.isOpen || Task.isCancelled { return true }
                    s.waiters[id] = waiter
                    return false
                }
                if resumeNow { waiter.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }

    /// Waits until the gate is open or `limit` has passed on `clock`; returns whether it opened.
    package func wait<C: Clock>(atMost limit: C.Duration, on clock: C) async -> Bool {
        if isOpen { return true }
        return await withTaskGroup(of: Bool?.self) { group in
            group.addTask {
                await self.wait()
                return self.isOpen ? true : nil
            }
            group.addTask {
                try? await clock.sleep(for: limit)
                return false
            }
            return await group.firstAnswer(orElse: isOpen)
        }
    }
}
