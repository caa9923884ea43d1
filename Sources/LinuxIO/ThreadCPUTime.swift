import CLinuxShims
import Glibc

extension CurrentThread {
    /// The calling thread's kernel id (gettid), as `/proc/self/task` names it.
    package static var id: Int32 { hal_thread_id() }
}

/// CPU time the kernel has accounted to one thread of this process.
///
/// Why: "a quiet link costs nothing" is a claim about one thread, and a test of it must not count
/// what other tests running beside it in the same process spend. A thread that spins while it
/// should wait uses all of the time measured; one that blocks uses next to none.
package enum ThreadCPUTime {
    /// Nanoseconds thread `id` of this process has run so far (user and system, from
    /// `/proc/self/task/ID/schedstat`); nil when the thread has ended or the file cannot be read.
    package static func nanoseconds(ofThread id: Int32) -> UInt64? {
        let fd = Glibc.open("/proc/self/task/\(id)/schedstat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let first = buffer[..<count].prefix { $0 >= 0x30 && $0 <= 0x39 }
        return UInt64(String(decoding: first, as: UTF8.self))
    }
}
