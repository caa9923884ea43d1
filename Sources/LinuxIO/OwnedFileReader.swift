import CLinuxShims
import Glibc

/// Reads a small file that holds secrets (the bond store's keys) only if it is what such a file
/// must be: a regular file (never through a symbolic link), owned by this user, with no
/// permission for group or others, and no bigger than the caller's limit. Anything else is
/// refused before a byte is read: a file another user could have written could plant keys, one
/// others can read has already leaked them, and a huge one is not ours.
package enum OwnedFileReader {
    /// The whole file, or nil when nothing is at `path`. The caller wipes the bytes after use.
    package static func read(_ path: String, limit: Int) throws(OwnedFileError) -> [UInt8]? {
        let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let error = Errno.current
            if error.code == ENOENT { return nil }
            if error.code == ELOOP { throw .wrongKind(path: path, found: .symbolicLink) }
            throw .failed(path: path, error)
        }
        defer { _ = Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .failed(path: path, Errno.current) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            var described = hal_file_info()
            let kind = hal_fstat(fd, &described) == 0 ? PrivateFile.Kind(described.type) : .other
            throw .wrongKind(path: path, found: kind)
        }
        guard info.st_uid == geteuid() else { throw .wrongOwner(path: path, owner: info.st_uid, expected: geteuid()) }
        let mode = UInt32(info.st_mode) & 0o777
        guard mode & 0o077 == 0 else { throw .tooOpen(path: path, mode: mode) }
        guard info.st_size <= limit else { throw .tooLarge(path: path, size: Int(info.st_size), limit: limit) }
        // One byte more than the size, to see a file that grew meanwhile.
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var used = 0
        while used < bytes.count {
            let n = bytes.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return Glibc.read(fd, base + used, raw.count - used)
            }
            if n < 0 {
                if errno == EINTR { continue }
                let error = Errno.current
                explicit_bzero(&bytes, bytes.count)
                throw .failed(path: path, error)
            }
            if n == 0 { break }
            used += n
        }
        guard used <= limit, used == Int(info.st_size) else {
            explicit_bzero(&bytes, bytes.count)
            throw .changed(path: path)
        }
        bytes.removeLast(bytes.count - used)
        return bytes
    }
}
