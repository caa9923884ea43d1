import Foundation
import Glibc

/// Where `import` may write the plaintext (hwprobe-cli.md, "Additions"): checked before the camera
/// opens, so a typo costs nothing. Only an absent path or, with `--force`, a regular file is ever
/// written; a device, FIFO, socket, directory or symbolic link is refused whatever the flags,
/// since writing "through" one would put the plaintext somewhere the person did not name.
enum OutputTarget {
    /// Throws a usage error (exit 2) for what the person typed wrong, a permission error (exit 3)
    /// for a directory we may not write.
    static func check(_ path: String, replacing: Bool) throws(CLIFailure) {
        guard !path.isEmpty else { throw CLIFailure(kind: .usage, message: "--out needs a file name") }
        var info = stat()
        if lstat(path, &info) == 0 {
            let type = info.st_mode & S_IFMT
            guard type == S_IFREG else {
                throw CLIFailure(kind: .usage, message: "--out \(path) is \(describe(type)), not a regular file: give the name of a new file"
                                 + (type == S_IFDIR ? " (for example \(path.hasSuffix("/") ? path : path + "/")vault.json)" : ""))
            }
            guard replacing else {
                throw CLIFailure(kind: .usage, message: "\(path) exists: choose another --out, or add --force to replace it on success")
            }
        } else if errno == ENOTDIR {
            throw CLIFailure(kind: .usage, message: "--out \(path): a part of the path is not a directory")
        } else if errno != ENOENT {
            throw failure(errno, path: path, directory: directory(of: path))
        }
        try probeDirectory(of: path)
    }

    /// Proves the directory takes a new file by making (and at once removing) an empty one there:
    /// permission bits alone do not tell (root, read-only mounts, /proc, ACLs).
    private static func probeDirectory(of path: String) throws(CLIFailure) {
        let directory = directory(of: path)
        let probe = directory + "/.hwprobe-out-check.\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            let code = errno
            var info = stat()
            // ENOENT for a directory that is there: a file system that takes no new files (/proc, /sys).
            if code == ENOENT, stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
                throw CLIFailure(kind: .permission, message: "--out \(path): \(directory) takes no new files (a virtual file system?): choose a directory on a disk")
            }
            throw failure(code, path: path, directory: directory)
        }
        close(fd)
        unlink(probe)
    }

    static func directory(of path: String) -> String {
        let parent = (path as NSString).deletingLastPathComponent
        return parent.isEmpty ? "." : parent
    }

    private static func failure(_ code: Int32, path: String, directory: String) -> CLIFailure {
        switch code {
        case ENOENT:
            return CLIFailure(kind: .usage, message: "--out \(path): the directory \(directory) does not exist")
        case ENOTDIR:
            return CLIFailure(kind: .usage, message: "--out \(path): \(directory) is not a directory")
        case EACCES, EPERM:
            return CLIFailure(kind: .permission, message: "--out \(path): no permission to write in \(directory)")
        case EROFS:
            return CLIFailure(kind: .permission, message: "--out \(path): \(directory) is on a read-only file system")
        default:
            return CLIFailure(kind: .device, message: "--out \(path): cannot create a file in \(directory): \(String(cString: strerror(code)))")
        }
    }

    private static func describe(_ type: mode_t) -> String {
        switch type {
        case S_IFDIR: "a directory"
        case S_IFLNK: "a symbolic link"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }
}

/// Writes a file so that it either appears whole, with mode 0600, or not at all.
enum AtomicFile {
    struct Failure: Error, CustomStringConvertible { var description: String }

    static func write(_ bytes: [UInt8], to path: String, replacing: Bool) throws {
        let directory = OutputTarget.directory(of: path)
        let temporary = directory + "/.\((path as NSString).lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw Failure(description: String(cString: strerror(errno))) }
        var ok = false
        defer {
            close(fd)
            if !ok { unlink(temporary) }
        }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in raw.baseAddress.map { Glibc.write(fd, $0 + offset, raw.count - offset) } ?? 0 }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: String(cString: strerror(errno)))
            }
            offset += n
        }
        guard fsync(fd) == 0 else { throw Failure(description: String(cString: strerror(errno))) }
        // What stands at the path now must still be nothing, or a regular file we may replace.
        var info = stat()
        if lstat(path, &info) == 0 {
            guard replacing else { throw Failure(description: "\(path) appeared meanwhile; nothing was replaced") }
            guard info.st_mode & S_IFMT == S_IFREG else { throw Failure(description: "\(path) is no longer a regular file; nothing was replaced") }
        }
        guard rename(temporary, path) == 0 else { throw Failure(description: String(cString: strerror(errno))) }
        ok = true
    }
}
