import BLEProtocol
import Foundation
import HAL
import LinuxIO

/// The bind keys kept from earlier runs (`weigh --bind-key … --save-key`), by device address:
/// `bind-keys.json` in the bond stores' directory (``BondStore/directory(environment:)``).
///
/// One file for every controller, unlike the bonds: a bind key is the device's own (Mi Home gave
/// it to the scale), not something a pairing with one controller made, so any controller that
/// hears the scale reads it with the same key. The file has the bond store's guarantees: written
/// whole or not at all with mode 0600 through LinuxIO's ``PrivateFile`` (directories made 0700),
/// read only if it is a regular file of this user's with no permission for others and at most
/// ``sizeLimit`` bytes (``OwnedFileReader``), its bytes wiped after reading and writing
/// (Foundation's own copies of the hex strings while coding cannot be). JSON, version 1:
///
/// ```json
/// {"format": "hwprobe-bind-keys", "version": 1,
///  "keys": [{"address": "D4:12:3A:00:18:1D", "key": "…32 hex digits…"}]}
/// ```
package struct BindKeyStore: Sendable, CustomStringConvertible {
    /// Where the store is read from and written to.
    package let path: String
    package private(set) var keys: [(address: BLEAddress, key: BindKey)]

    /// More than any real store: a thousand keys take about 70 KB.
    package static let sizeLimit = 1 << 20
    /// The most keys kept; the oldest go first beyond it.
    package static let keyLimit = 1000
    static let formatName = "hwprobe-bind-keys"
    static let currentVersion = 1
    /// The file's name in the bond stores' directory.
    package static let fileName = "bind-keys.json"

    package init(path: String, keys: [(address: BLEAddress, key: BindKey)] = []) {
        self.path = path
        self.keys = keys
    }

    /// `$XDG_STATE_HOME/hwprobe/bonds/bind-keys.json` (or under `$HOME/.local/state`).
    package static func defaultPath(environment: [String: String]) throws(BindKeyStoreError) -> String {
        do { return try BondStore.directory(environment: environment) + "/" + fileName } catch { throw .noHome }
    }

    /// The store at `path`; an empty one when the file does not exist yet.
    package static func load(path: String) throws(BindKeyStoreError) -> BindKeyStore {
        var bytes: [UInt8]
        do {
            guard let read = try OwnedFileReader.read(path, limit: sizeLimit) else { return BindKeyStore(path: path) }
            bytes = read
        } catch { throw .refused(error) }
        defer { KeyMaterial.wipe(&bytes) }
        let file: File
        do { file = try JSONDecoder().decode(File.self, from: Data(bytes)) } catch {
            throw .damaged(path: path, reason: "not the JSON of a bind key store")
        }
        guard file.format == formatName else { throw .damaged(path: path, reason: "it is not a bind key store (format \"\(file.format)\")") }
        guard file.version == currentVersion else {
            throw .damaged(path: path, reason: "version \(file.version), this hwprobe reads version \(currentVersion)")
        }
        var keys: [(address: BLEAddress, key: BindKey)] = []
        for (index, entry) in file.keys.enumerated() {
            guard let address = BLEAddress(string: entry.address) else { throw .damaged(path: path, reason: "key \(index + 1): the address is damaged") }
            guard let key = BindKey.parse(hex: entry.key) else { throw .damaged(path: path, reason: "key \(index + 1) is not 32 hex digits") }
            keys.append((address, key))
        }
        return BindKeyStore(path: path, keys: keys)
    }

    /// The key kept for the device at `address` (compared by its six bytes).
    package func key(for address: BLEAddress) -> BindKey? {
        keys.first { $0.address.bytes == address.bytes }?.key
    }

    /// Keeps `key` for `address`, replacing the key kept for it before.
    package mutating func set(_ key: BindKey, for address: BLEAddress) {
        keys.removeAll { $0.address.bytes == address.bytes }
        keys.append((address, key))
        if keys.count > Self.keyLimit { keys.removeFirst(keys.count - Self.keyLimit) }
    }

    /// Forgets the key of `address`; false when none was kept.
    @discardableResult
    package mutating func remove(_ address: BLEAddress) -> Bool {
        let before = keys.count
        keys.removeAll { $0.address.bytes == address.bytes }
        return keys.count != before
    }

    /// Writes the whole store (mode 0600, all or nothing), making its directory if needed.
    package func save() throws(BindKeyStoreError) {
        let file = File(format: Self.formatName, version: Self.currentVersion,
                        keys: keys.map { File.Entry(address: $0.address.description, key: $0.key.revealedHex) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        var data: Data
        do { data = try encoder.encode(file) } catch { throw .damaged(path: path, reason: "it could not be encoded") }
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
        } catch { throw .notWritten(error) }
    }

    /// The path and the count: never a key.
    package var description: String { "BindKeyStore(\(path), \(keys.count) keys)" }

    /// The file's JSON.
    struct File: Codable {
        struct Entry: Codable {
            var address: String
            var key: String
        }
        var format: String
        var version: Int
        var keys: [Entry]
    }
}

/// Why the bind key store could not be read or written, each saying what to do.
package enum BindKeyStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Neither XDG_STATE_HOME nor HOME says where the store goes.
    case noHome
    /// The file is not one hwprobe may trust (kind, owner, mode, size).
    case refused(OwnedFileError)
    /// The file is not a bind key store of this version, or is damaged.
    case damaged(path: String, reason: String)
    /// Writing failed.
    case notWritten(PrivateFileError)

    package var description: String {
        switch self {
        case .noHome: "no place for the bind key store: set HOME (or XDG_STATE_HOME)"
        case .refused(let error): "bind key store refused: \(error)"
        case .damaged(let path, let reason):
            "the bind key store \(path) cannot be read (\(reason)): move it away, and keep each key again with --bind-key ADDRESS=HEX --save-key"
        case .notWritten(let error): "the bind key store was not written: \(error)"
        }
    }
}
