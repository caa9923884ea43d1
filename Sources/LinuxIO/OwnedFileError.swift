/// Why a file of secrets was not read (``OwnedFileReader``), each saying what to do.
package enum OwnedFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Not a regular file (a symbolic link, a directory, a FIFO…).
    case wrongKind(path: String, found: PrivateFile.Kind)
    /// Another user owns it.
    case wrongOwner(path: String, owner: UInt32, expected: UInt32)
    /// Group or others may read or write it (permission bits given).
    case tooOpen(path: String, mode: UInt32)
    /// Bigger than any such file should be.
    case tooLarge(path: String, size: Int, limit: Int)
    /// It changed size while being read.
    case changed(path: String)
    case failed(path: String, Errno)

    package var description: String {
        switch self {
        case .wrongKind(let path, let found):
            "\(path) is \(found), not a regular file: remove it (hwprobe keeps its bonds in a plain file)"
        case .wrongOwner(let path, let owner, let expected):
            "\(path) belongs to user \(owner), not to you (\(expected)): it may hold keys someone planted; remove it or run as its owner"
        case .tooOpen(let path, let mode):
            "\(path) has mode \(String(mode, radix: 8)): others may read its keys; run chmod 600 \(path) (and pair again if others had access)"
        case .tooLarge(let path, let size, let limit):
            "\(path) is \(size) bytes, more than the \(limit) a bond store may have: it is not one; move it away"
        case .changed(let path): "\(path) changed while it was read: another hwprobe may be writing it; try again"
        case .failed(let path, let errno): "cannot read \(path): \(errno)"
        }
    }
}
