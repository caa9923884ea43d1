import Glibc

/// An advisory, exclusive lock (flock(2)) on a directory, held while the small state files in it
/// (the bond stores, the bind keys) are read, changed and written again. Two hwprobe processes
/// keeping a bond with the same controller then take turns, and the later one reads what the
/// earlier one wrote instead of writing over it. A directory rather than the file itself: the
/// files are replaced whole (``PrivateFile``), and a lock on a file that is replaced is a lock
/// on nothing; the directory stays. The lock goes with the descriptor, so a process that dies
/// holding it releases it.
package enum DirectoryLock {
    /// How long one wait for a held lock lasts between tries.
    static let retryMicroseconds: UInt32 = 5_000

    /// Runs `body` holding the lock on `directory`, waiting at most `timeout` for another
    /// process to release it.
    package static func withLock<T>(_ directory: String, within timeout: Duration, _ body: () -> T) throws(DirectoryLockError) -> T {
        let fd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .failed(path: directory, Errno.current) }
        defer { _ = Glibc.close(fd) }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let error = Errno.current
            guard error.code == EWOULDBLOCK || error.code == EINTR else { throw .failed(path: directory, error) }
            guard clock.now < deadline else { throw .busy(path: directory, waited: timeout) }
            usleep(retryMicroseconds)
        }
        defer { _ = flock(fd, LOCK_UN) }
        return body()
    }
}

/// Why a directory could not be locked.
package enum DirectoryLockError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Another process held it for longer than the wait.
    case busy(path: String, waited: Duration)
    /// The directory could not be opened or locked.
    case failed(path: String, Errno)

    package var description: String {
        switch self {
        case .busy(let path, let waited):
            "another process has held the lock on \(path) for more than \(waited.components.seconds) s: is another hwprobe stuck writing there?"
        case .failed(let path, let error): "could not lock \(path): \(error)"
        }
    }
}
