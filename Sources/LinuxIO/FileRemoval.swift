import Glibc

/// Removing named files a command made itself (a half-recorded cassette, its frame file), so that
/// callers above LinuxIO never call unlink(2) themselves.
package enum FileRemoval {
    /// Removes the file at `path`; one that is already gone is not an error.
    package static func remove(_ path: String) throws(Errno) {
        guard unlink(path) != 0 else { return }
        let error = Errno.current
        if error != .noEntry { throw error }
    }
}
