import CLinuxShims
import Glibc
import Synchronization

/// A way to wake a thread that waits in poll(2) for a descriptor: an eventfd polled beside it.
///
/// Why: a device thread that must also notice "stop" used to poll with a short timeout and check
/// a flag on every tick, waking twenty times a second while nothing happened. With a wake event
/// it waits for ever, and wakes exactly when the device has something or somebody calls
/// ``signal()``. The event stays signalled until ``close()`` (or ``reset()``), so a waiter that comes late still
/// returns at once, and signalling after close is harmless (the descriptor number is never
/// written to once released, so it cannot hit a file opened later under the same number).
package final class WakeEvent: Sendable {
    private let descriptor: Mutex<FileDescriptor?>

    /// Makes the eventfd (non-blocking, close-on-exec).
    package init() throws(Errno) {
        let fd = try check(hal_eventfd_nonblocking())
        descriptor = Mutex(FileDescriptor(rawValue: fd))
    }

    deinit { descriptor.withLock { $0?.close() } }

    /// Wakes every current and future waiter until ``close()``.
    package func signal() {
        descriptor.withLock { fd in
            guard let fd else { return }
            var one: UInt64 = 1
            _ = Glibc.write(fd.rawValue, &one, MemoryLayout<UInt64>.size)
        }
    }

    /// Clears the signal, for a waiter woken for more than stopping (a link's reading thread is
    /// also woken when a receiver takes over): it clears, then looks at every reason it may have
    /// been woken for, so a signal that comes after the clear is seen by its next wait.
    package func reset() {
        descriptor.withLock { fd in
            guard let fd else { return }
            var count: UInt64 = 0
            _ = Glibc.read(fd.rawValue, &count, MemoryLayout<UInt64>.size)
        }
    }

    /// Releases the eventfd; later ``signal()`` calls do nothing, later waits see it as signalled.
    package func close() {
        descriptor.withLock { fd in
            fd?.close()
            fd = nil
        }
    }

    /// The raw number for poll(2), or nil once closed.
    fileprivate var rawValue: Int32? { descriptor.withLock { $0?.rawValue } }
}

extension FileDescriptor {
    /// What a wait on a descriptor and a wake event ended with.
    package struct WakeablePoll: Sendable {
        /// The descriptor's events (empty when only the wake event or the timeout ended the wait).
        package var events: PollEvents
        /// Whether the wake event was signalled (or closed).
        package var woken: Bool

        /// What a wait ended with; for a caller that waits another way (a plain timeout) but
        /// reports the same.
        package init(events: PollEvents, woken: Bool) {
            self.events = events
            self.woken = woken
        }
    }

    /// Waits until the descriptor has one of `events`, `wake` is signalled, or the timeout
    /// passes (-1: no timeout). Both can be reported at once.
    package func poll(for events: PollEvents, orWake wake: WakeEvent,
                      timeoutMilliseconds: Int32 = -1) throws(Errno) -> WakeablePoll {
        guard let wakeFD = wake.rawValue else { return WakeablePoll(events: [], woken: true) }
        var entries = [pollfd(fd: rawValue, events: events.rawValue, revents: 0),
                       pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        while true {
            let rc = Glibc.poll(&entries, 2, timeoutMilliseconds)
            if rc >= 0 {
                return WakeablePoll(events: PollEvents(rawValue: entries[0].revents), woken: entries[1].revents != 0)
            }
            if errno != EINTR { throw Errno.current }
        }
    }
}

extension Duration {
    /// This duration as a poll(2) timeout: whole milliseconds rounded up (a wait never ends before
    /// its deadline and then spins on a zero timeout), at least 0, at most `ceiling`.
    package func pollMilliseconds(ceiling: Int32 = .max) -> Int32 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0, self > .zero else { return 0 }
        let whole = seconds.multipliedReportingOverflow(by: 1000)
        guard !whole.overflow else { return ceiling }
        let partial = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: min(Int64(ceiling), whole.partialValue + partial))
    }
}
