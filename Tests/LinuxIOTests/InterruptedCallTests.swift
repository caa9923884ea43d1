import Foundation
import Glibc
import Synchronization
import Testing
@testable import LinuxIO

/// How many times the test's SIGUSR1 handler ran (a C handler captures nothing; an atomic is
/// async-signal-safe).
private let interruptions = Atomic<Int>(0)

/// FileDescriptor.read retries a read that a signal interrupted (EINTR) instead of reporting it.
/// Deterministic: the signal is sent only once /proc shows the reader blocked in read(2), and its
/// handler is installed without SA_RESTART, so the kernel does hand EINTR back to the call.
@Suite(.serialized) struct InterruptedCallTests {
    /// Spins (yielding the core) until `condition` holds; false after `rounds` tries, so a broken
    /// kernel interface fails the test rather than hanging it.
    static func spin(rounds: Int = 50_000_000, _ condition: () -> Bool) -> Bool {
        for _ in 0..<rounds {
            if condition() { return true }
            sched_yield()
        }
        return condition()
    }

    /// Whether thread `tid` of this process is inside read(2) (syscall 0 on x86_64) right now.
    static func isInRead(_ tid: Int32) -> Bool {
        guard let text = try? String(contentsOfFile: "/proc/self/task/\(tid)/syscall", encoding: .utf8) else { return false }
        return text.split(separator: " ").first == "0"
    }

    @Test func aReadInterruptedByASignalIsRetried() throws {
        #if arch(x86_64)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in interruptions.add(1, ordering: .sequentiallyConsistent) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0 // no SA_RESTART: the kernel returns EINTR to the interrupted call
        var previous = sigaction()
        #expect(sigaction(SIGUSR1, &action, &previous) == 0)
        defer { sigaction(SIGUSR1, &previous, nil) }
        let before = interruptions.load(ordering: .sequentiallyConsistent)

        let (read, write) = try makePipe()
        defer { read.close(); write.close() }
        let reader = Mutex<(tid: Int32, thread: pthread_t)?>(nil)
        let result = Mutex<Result<[UInt8], Errno>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            SignalPipe.unblock([SIGUSR1])
            let tid = currentThreadID() ?? -1
            reader.withLock { $0 = (tid, pthread_self()) }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 8, alignment: 1)
            defer { buffer.deallocate() }
            // One read(2) call, so a retry can only be FileDescriptor.read's own.
            let outcome = Result { () throws(Errno) -> [UInt8] in Array(buffer[0..<(try read.read(into: buffer))]) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        thread.start()
        #expect(Self.spin { reader.withLock { $0 } != nil })
        let (tid, handle) = try #require(reader.withLock { $0 })
        try #require(tid > 0, "the reader's thread id from /proc/thread-self")
        #expect(Self.spin(rounds: 1_000_000) { Self.isInRead(tid) }, "the reader blocks in read(2)")
        #expect(pthread_kill(handle, SIGUSR1) == 0)
        #expect(Self.spin { interruptions.load(ordering: .sequentiallyConsistent) > before }, "the handler ran on the reader")
        // Back in read(2) if it retried; out with a result if it did not (the check below says so).
        #expect(Self.spin(rounds: 1_000_000) { result.withLock { $0 } != nil || Self.isInRead(tid) })
        try write.writeAll([1, 2, 3])
        done.wait()
        #expect(try #require(result.withLock { $0 }).get() == [1, 2, 3])
        #expect(interruptions.load(ordering: .sequentiallyConsistent) == before + 1)
        #else
        Issue.record("isInRead knows x86_64's syscall number only")
        #endif
    }
}
