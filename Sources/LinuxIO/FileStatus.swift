import Glibc

/// Whether a path names anything, without opening it: how a USB transfer that failed tells an
/// unplug (usbfs has removed the node) from an I/O error.
package enum FileStatus {
    /// access(F_OK): true when the path exists (a dangling symlink does not).
    package static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}

/// The calling thread, for code that already runs on a thread of its own (a device's queue).
package enum CurrentThread {
    /// Blocks this thread for `duration` (nanosleep, resumed after signals): never call it from a
    /// task, where it would hold one of the cooperative pool's few threads.
    package static func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        guard seconds > 0 || attoseconds > 0 else { return }
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var left = timespec()
        while nanosleep(&request, &left) != 0, errno == EINTR { request = left }
    }
}
