import LinuxIO

/// Why the bond store could not be read or written, each saying what to do.
package enum BondStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Neither XDG_STATE_HOME nor HOME says where the store goes.
    case noHome
    /// The file is not one hwprobe may trust (kind, owner, mode, size).
    case refused(OwnedFileError)
    /// The file is not a bond store of this version, or is damaged.
    case damaged(path: String, reason: String)
    /// Writing failed.
    case notWritten(PrivateFileError)

    package var description: String {
        switch self {
        case .noHome: "no place for the bond store: set HOME (or XDG_STATE_HOME)"
        case .refused(let error): "bond store refused: \(error)"
        case .damaged(let path, let reason):
            "the bond store \(path) cannot be read (\(reason)): move it away, or remove every bond with hwprobe bonds --remove all, and pair again"
        case .notWritten(let error): "the bond store was not written: \(error)"
        }
    }
}
