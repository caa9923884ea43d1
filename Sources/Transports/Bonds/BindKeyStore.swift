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
        try BondStore.directory(environment: environment, kind: .bindKeys) + "/" + fileName
    }

    /// The store at `path`; an empty one when the file does not exist yet.
    package static func load(path: String) throws(BindKeyStoreError) -> BindKeyStore {
        guard let file = try StateStoreFile.load(File.self, path: path, limit: sizeLimit, kind: .bindKeys) else { return BindKeyStore(path: path) }
        guard file.format == formatName else { throw .damaged(.bindKeys, path: path, reason: "it is not a bind key store (format \"\(file.format)\")") }
        guard file.version == currentVersion else {
            throw .damaged(.bindKeys, path: path, reason: "version \(file.version), this hwprobe reads version \(currentVersion)")
        }
        var keys: [(address: BLEAddress, key: BindKey)] = []
        for (index, entry) in file.keys.enumerated() {
            guard let address = BLEAddress(string: entry.address) else {
                throw .damaged(.bindKeys, path: path, reason: "key \(index + 1): the address is damaged")
            }
            guard let key = BindKey.parse(hex: entry.key) else { throw .damaged(.bindKeys, path: path, reason: "key \(index + 1) is not 32 hex digits") }
            keys.append((address, key))
        }
        return BindKeyStore(path: path, keys: keys)
    }

    /// Reads the store at `path` as it is now, changes it and writes it, under the lock on its
    /// directory (``StateStoreFile``): a key another hwprobe kept meanwhile is kept too.
    package static func update(path: String, _ change: (inout BindKeyStore) -> Void) throws(BindKeyStoreError) -> BindKeyStore {
        try StateStoreFile.locked(path: path, kind: .bindKeys) { () throws(BindKeyStoreError) -> BindKeyStore in
            var store = try load(path: path)
            change(&store)
            try store.save()
            return store
        }
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
        try StateStoreFile.save(file, path: path, kind: .bindKeys)
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
