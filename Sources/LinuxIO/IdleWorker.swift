import CLinuxShims
import Dispatch
import Glibc
import Synchronization

/// A thread of its own that runs work only when a core would otherwise be idle: Linux's
/// `SCHED_IDLE` policy (sched(7)), under which the scheduler gives the thread a core only when no
/// ordinary thread wants it. For work that must never slow what matters, such as drawing a camera
/// preview beside a decoder that has all the cores it can use.
///
/// One job at a time: a job offered while the last one still runs is refused at once (the caller
/// offers a newer one later), so nothing queues up behind a starved thread. If the kernel refuses
/// `SCHED_IDLE`, the thread asks for the lowest `nice` priority instead (`policy` says which).
package final class IdleWorker: Sendable {
    /// How the thread is scheduled.
    package enum Policy: Sendable, Hashable {
        /// `SCHED_IDLE`: runs only on an otherwise idle core.
        case idle
        /// `SCHED_OTHER` at nice 19, when `SCHED_IDLE` was refused.
        case lowestNice
        /// Neither could be set: an ordinary thread.
        case ordinary
    }

    /// What the thread and its callers share; the thread holds this, not the worker, so the
    /// worker going away ends the thread.
    private final class Shared: Sendable {
        struct State {
            var job: (@Sendable () -> Void)?
            var busy = false
            var closed = false
        }
        let state = Mutex(State())
        let wake = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let policy = Mutex(Policy.ordinary)

        func loop(name: String) {
            let chosen: Policy = switch name.withCString({ hal_thread_become_idle($0) }) {
            case 2: .idle
            case 1: .lowestNice
            default: .ordinary
            }
            policy.withLock { $0 = chosen }
            started.signal()
            while true {
                wake.wait()
                let (job, closed) = state.withLock { s -> ((@Sendable () -> Void)?, Bool) in
                    defer { s.job = nil }
                    return (s.job, s.closed)
                }
                // The job marks the thread free itself, before its caller hears the answer, so
                // the caller may offer the next one at once.
                job?()
                if closed { return }
            }
        }
    }

    private let shared = Shared()

    /// Starts the thread, named `label` (its first 15 bytes, as `top -H` shows it). nil when no
    /// thread could be created (out of resources).
    package init?(label: String) {
        final class Start: @unchecked Sendable {
            let shared: Shared
            let name: String
            init(_ shared: Shared, _ name: String) { (self.shared, self.name) = (shared, name) }
        }
        let context = Unmanaged.passRetained(Start(shared, String(decoding: label.utf8.prefix(15), as: UTF8.self))).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            let start = Unmanaged<Start>.fromOpaque(raw).takeRetainedValue()
            start.shared.loop(name: start.name)
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<Start>.fromOpaque(context).release()
            return nil
        }
        pthread_detach(thread)
        shared.started.wait()
    }

    deinit { close() }

    /// How the kernel agreed to schedule the thread.
    package var policy: Policy { shared.policy.withLock { $0 } }

    /// Runs `work` on the thread and returns its result; nil at once when the thread is still
    /// busy with an earlier job, the worker is closed, or the task is cancelled. Cancellation
    /// returns nil at once even while the job waits for an idle core (it is then skipped) or runs
    /// (its result is dropped), so no caller ever waits on a starved thread past its own end.
    package func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T? {
        let answer = Answer<T>()
        let shared = shared
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (done: CheckedContinuation<T?, Never>) in
                guard answer.await(done) else { return }
                let taken = shared.state.withLock { s -> Bool in
                    guard !s.busy, !s.closed else { return false }
                    s.busy = true
                    s.job = {
                        let value = answer.isAwaited ? work() : nil
                        shared.state.withLock { $0.busy = false }
                        answer.give(value)
                    }
                    return true
                }
                if taken { shared.wake.signal() } else { answer.give(nil) }
            }
        } onCancel: {
            answer.give(nil)
        }
    }

    /// One job's continuation, resumed exactly once: by the job's result, or by cancellation.
    private final class Answer<T: Sendable>: Sendable {
        private enum Slot {
            case empty
            case awaiting(CheckedContinuation<T?, Never>)
            case given
        }
        private let slot = Mutex(Slot.empty)

        /// Stores the continuation; false (and resumed with nil) if the answer was already given
        /// (cancelled before it got here).
        func await(_ continuation: CheckedContinuation<T?, Never>) -> Bool {
            let given = slot.withLock { slot -> Bool in
                if case .given = slot { return true }
                slot = .awaiting(continuation)
                return false
            }
            if given { continuation.resume(returning: nil) }
            return !given
        }

        var isAwaited: Bool {
            slot.withLock { if case .awaiting = $0 { true } else { false } }
        }

        func give(_ value: T?) {
            let waiting = slot.withLock { slot -> CheckedContinuation<T?, Never>? in
                defer { slot = .given }
                if case .awaiting(let continuation) = slot { return continuation }
                return nil
            }
            waiting?.resume(returning: value)
        }
    }

    /// Ends the thread once its current job (if any) is done; later `run` calls return nil.
    package func close() {
        let first = shared.state.withLock { s -> Bool in
            defer { s.closed = true }
            return !s.closed
        }
        if first { shared.wake.signal() }
    }
}
