import Dispatch
import Foundation

/// The one way this package moves blocking work off Swift's cooperative pool.
///
/// Why: the pool has one thread a core (two on the bench machine), so a single blocking call on it
/// (a key derivation, a connect that waits out its deadline, a read loop in poll) stalls every task
/// in the process, including the ones that would unblock it. Device loops, one-off blocking calls
/// and a device's serial calls each get a thread of their own, through these three doors only.
/// (The camera preview's idle-priority worker is LinuxIO's `IdleWorker`: it needs a scheduling
/// system call, and refuses work rather than queueing it.)
package enum BlockingWork {
    /// Starts `body` on a new thread named `name` (its first 15 bytes show in `top -H`) and
    /// returns at once: for loops that live as long as a device or a session (a link's reader, a
    /// capture, stdin's keys, the signal thread) and for work that reports back by itself.
    package static func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread { body() }
        thread.name = name
        thread.start()
    }

    /// Runs one blocking call on a thread of its own and returns its result: an open that resolves
    /// a host, a connect, a write the device is slow to take. Not cancellable from outside: `body`
    /// must bound itself (every call here passes a deadline or a timeout to the kernel), and the
    /// thread ends with it.
    package static func run<T: Sendable, E: Error>(_ name: String,
                                                   _ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { done in
            start(name) { done.resume(returning: Result { () throws(E) -> T in try body() }) }
        }
        return try result.get()
    }

    /// One serial thread for a device's blocking calls (a libusb transfer waiting out its timeout,
    /// a hidraw write the USB stack is slow to take): calls run one at a time, in the order made.
    package final class Queue: Sendable {
        private let queue: DispatchQueue

        /// How the kernel should weigh the queue's thread against the others.
        package enum Priority: Sendable {
            /// Device calls.
            case standard
            /// Work a person is waiting on (the decoder's first answer for each frame).
            case interactive
            /// Work that may lag (the decoder's second lane).
            case background
        }

        /// A queue whose thread is named `label`.
        package init(label: String, priority: Priority = .standard) {
            let qos: DispatchQoS = switch priority {
            case .standard: .default
            case .interactive: .userInitiated
            case .background: .utility
            }
            queue = DispatchQueue(label: label, qos: qos)
        }

        /// Queues `body` and returns at once: for work that reports back by itself.
        package func submit(_ body: @escaping @Sendable () -> Void) {
            queue.async { body() }
        }

        /// Runs `body` on the queue's thread and returns its result.
        package func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
            await withCheckedContinuation { done in
                queue.async { done.resume(returning: body()) }
            }
        }

        /// Runs `body` on the device's thread and returns its result. The call is bounded by
        /// whatever timeout `body` passes to the kernel or libusb; a cancelled caller still waits
        /// for it, so a device is never closed under a transfer in flight.
        package func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () -> Result<T, E>) async throws(E) -> T {
            let result: Result<T, E> = await withCheckedContinuation { done in
                queue.async { done.resume(returning: body()) }
            }
            return try result.get()
        }
    }
}
