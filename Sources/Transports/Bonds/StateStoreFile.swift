import BLEProtocol
import Foundation
import HAL
import LinuxIO

/// Which of hwprobe's state stores a file is, for the words of its errors.
package enum StateStoreKind: String, Hashable, Sendable {
    case bonds = "bond store"
    case bindKeys = "bind key store"

    /// What to do about a file that cannot be read.
    var remedy: String {
        switch self {
        case .bonds: "move it away, or remove every bond with hwprobe bonds --remove all, and pair again"
        case .bindKeys: "move it away, and keep each key again with --bind-key ADDRESS=HEX --save-key"
        }
    }
}

/// Why a state store (``BondStore``, ``BindKeyStore``) could not be read or written, each
/// saying what to do.
package enum StateStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Neither XDG_STATE_HOME nor HOME says where the store goes.
    case noHome(StateStoreKind)
    /// The file is not one hwprobe may trust (kind, owner, mode, size).
    case refused(StateStoreKind, OwnedFileError)
    /// The file is not a store of this kind and version, or is damaged.
    case damaged(StateStoreKind, path: String, reason: String)
    /// Writing failed.
    case notWritten(StateStoreKind, PrivateFileError)
    /// Another process kept the store's directory locked too long.
    case locked(StateStoreKind, DirectoryLockError)

    package var description: String {
        switch self {
        case .noHome(let kind): "no place for the \(kind.rawValue): set HOME (or XDG_STATE_HOME)"
        case .refused(let kind, let error): "\(kind.rawValue) refused: \(error)"
        case .damaged(let kind, let path, let reason): "the \(kind.rawValue) \(path) cannot be read (\(reason)): \(kind.remedy)"
        case .notWritten(let kind, let error): "the \(kind.rawValue) was not written: \(error)"
        case .locked(let kind, let error): "the \(kind.rawValue) was not changed: \(error)"
        }
    }
}

/// The bond store's errors (the one type every state store uses).
package typealias BondStoreError = StateStoreError
/// The bind key store's errors (the one type every state store uses).
package typealias BindKeyStoreError = StateStoreError

/// What the state stores share (issue 30): a private JSON file read only if it is this user's
/// own and small (``OwnedFileReader``), written whole or not at all with mode 0600
/// (``PrivateFile``), its bytes wiped after use, and changed under a lock on its directory
/// (``DirectoryLock``) so that two processes changing it take turns.
enum StateStoreFile {
    /// How long a change waits for another process's: each holds the lock for one read and one
    /// write of a small file, milliseconds.
    static let lockTimeout = Duration.seconds(5)

    /// The file at `path` decoded, or nil when there is none.
    static func load<Value: Decodable>(_ type: Value.Type, path: String, limit: Int, kind: StateStoreKind) throws(StateStoreError) -> Value? {
        var bytes: [UInt8]
        do {
            guard let read = try OwnedFileReader.read(path, limit: limit) else { return nil }
            bytes = read
        } catch { throw .refused(kind, error) }
        defer { KeyMaterial.wipe(&bytes) }
        do { return try JSONDecoder().decode(Value.self, from: Data(bytes)) } catch {
            throw .damaged(kind, path: path, reason: "not the JSON of a \(kind.rawValue)")
        }
    }

    /// Writes `value` as the whole file (mode 0600, all or nothing), making its directory if needed.
    static func save(_ value: some Encodable, path: String, kind: StateStoreKind) throws(StateStoreError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        var data: Data
        do { data = try encoder.encode(value) } catch { throw .damaged(kind, path: path, reason: "it could not be encoded") }
        var bytes = [UInt8](data)
        defer {
            KeyMaterial.wipe(&bytes)
            data.withUnsafeMutableBytes { KeyMaterial.wipe($0) }
        }
        do {
            try PrivateDirectory.create(PrivateFile.directoryPath(of: path))
            let out = try PrivateFile(creating: path, existing: .replaceRegularFile, publication: .whenCommitted)
            try out.write(bytes)
            try out.commit()
        } catch { throw .notWritten(kind, error) }
    }

    /// Runs `change` (a read, a change, a write) holding the lock on the directory of `path`.
    static func locked<Value>(path: String, kind: StateStoreKind, timeout: Duration = lockTimeout,
                              _ change: () throws(StateStoreError) -> Value) throws(StateStoreError) -> Value {
        let directory = PrivateFile.directoryPath(of: path)
        do { try PrivateDirectory.create(directory) } catch { throw .notWritten(kind, error) }
        let result: Result<Value, StateStoreError>
        do {
            result = try DirectoryLock.withLock(directory, within: timeout) {
                do throws(StateStoreError) { return .success(try change()) } catch { return .failure(error) }
            }
        } catch { throw .locked(kind, error) }
        return try result.get()
    }
}
