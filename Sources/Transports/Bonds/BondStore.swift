import BLEProtocol
import Foundation
import HAL
import LinuxIO

/// The bonds of one controller identity (issue 29, item 2): what pairings that bonded left, kept
/// so that the same device is encrypted with its stored key next time instead of pairing again,
/// and recognised by its IRK behind its resolvable private addresses; and hwprobe's own IRK and
/// identity for when it is the peripheral.
///
/// One file per controller identity, `$XDG_STATE_HOME/hwprobe/bonds/<controller address>.json`
/// (`~/.local/state/hwprobe/bonds/…` without XDG_STATE_HOME; directories made 0700), in the JSON
/// of ``BondStoreFile``. Written whole or not at all (LinuxIO's ``PrivateFile``: mode 0600, an
/// unnamed file that takes the name only once complete and synced). Read only if it is a regular
/// file of this user's with no permission for others and at most ``sizeLimit`` bytes
/// (``OwnedFileReader``). The file's bytes are wiped after reading and writing; Foundation's own
/// copies of the hex strings while encoding and decoding cannot be, which is why the store keeps
/// the file closed and short-lived. Nothing here prints a key: a ``Bond``'s description shows
/// `SecurityKey(16 bytes)` where a key is.
package struct BondStore: Sendable, CustomStringConvertible {
    /// The controller whose bonds these are.
    package let controller: BLEAddress
    /// Where the store is read from and written to.
    package let path: String
    package private(set) var bonds: [Bond]
    /// Our IRK and identity address, made on first use (``ensureLocalIdentity(address:random:)``).
    package private(set) var localIdentity: LocalIdentity?

    /// More than any real store (a thousand bonds take about 400 KB).
    package static let sizeLimit = 1 << 20
    /// The most bonds kept; the oldest go first beyond it.
    package static let bondLimit = 1000

    package init(controller: BLEAddress, path: String, bonds: [Bond] = [], localIdentity: LocalIdentity? = nil) {
        self.controller = controller
        self.path = path
        self.bonds = bonds
        self.localIdentity = localIdentity
    }

    /// `$XDG_STATE_HOME/hwprobe/bonds/<controller>.json`, or under `$HOME/.local/state` when
    /// XDG_STATE_HOME is unset or not absolute (the XDG Base Directory rule).
    package static func defaultPath(controller: BLEAddress, environment: [String: String]) throws(BondStoreError) -> String {
        try directory(environment: environment) + "/" + controller.description + ".json"
    }

    /// `$XDG_STATE_HOME/hwprobe/bonds`, or `$HOME/.local/state/hwprobe/bonds`: where the bond
    /// stores (and the bind key store, ``BindKeyStore``) live.
    package static func directory(environment: [String: String], kind: StateStoreKind = .bonds) throws(StateStoreError) -> String {
        let state: String
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            state = xdg
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            state = home + "/.local/state"
        } else {
            throw .noHome(kind)
        }
        return state + "/hwprobe/bonds"
    }

    /// The store at `path`; an empty one when the file does not exist yet.
    package static func load(controller: BLEAddress, path: String) throws(BondStoreError) -> BondStore {
        guard let file = try StateStoreFile.load(BondStoreFile.self, path: path, limit: sizeLimit, kind: .bonds) else {
            return BondStore(controller: controller, path: path)
        }
        let values: (controller: BLEAddress, localIdentity: LocalIdentity?, bonds: [Bond])
        do { values = try file.values() } catch { throw .damaged(.bonds, path: path, reason: error.reason) }
        guard values.controller.bytes == controller.bytes else {
            throw .damaged(.bonds, path: path, reason: "it holds the bonds of controller \(values.controller), not \(controller)")
        }
        return BondStore(controller: controller, path: path, bonds: values.bonds, localIdentity: values.localIdentity)
    }

    /// Writes the whole store (mode 0600, all or nothing), making its directory if needed. A
    /// change to a store another process may change too goes through ``update(controller:path:_:)``.
    package func save() throws(BondStoreError) {
        try StateStoreFile.save(BondStoreFile(controller: controller, localIdentity: localIdentity, bonds: bonds), path: path, kind: .bonds)
    }

    /// Reads the store at `path` as it is now, changes it and writes it, all under the lock on
    /// its directory: a bond another hwprobe kept meanwhile is kept too. Returns the store written.
    package static func update(controller: BLEAddress, path: String, _ change: (inout BondStore) -> Void) throws(BondStoreError) -> BondStore {
        try StateStoreFile.locked(path: path, kind: .bonds) { () throws(BondStoreError) -> BondStore in
            var store = try load(controller: controller, path: path)
            change(&store)
            try store.save()
            return store
        }
    }

    // MARK: Bonds

    /// The bond for a device seen at `address`: its identity address, or a resolvable private
    /// address made with its IRK (`ah`).
    package func bond(for address: BLEAddress) -> Bond? {
        ResolvablePrivateAddress.resolve(address, among: bonds)
    }

    /// The identity behind `address` when a bond knows it (what output prints for the device).
    package func identity(of address: BLEAddress) -> BLEAddress? { bond(for: address)?.identity }

    /// Keeps `bond`, replacing any bond for the same device (same identity, or an IRK that
    /// resolves the new identity): a new pairing replaces the old keys.
    package mutating func add(_ bond: Bond) {
        bonds.removeAll { $0.identity == bond.identity || $0.matches(bond.identity) || (bond.irk != nil && $0.irk == bond.irk) }
        bonds.append(bond)
        if bonds.count > Self.bondLimit { bonds.removeFirst(bonds.count - Self.bondLimit) }
    }

    /// Forgets the bond of the device at `address` (identity or private address); false when
    /// there was none.
    @discardableResult
    package mutating func remove(_ address: BLEAddress) -> Bool {
        let before = bonds.count
        bonds.removeAll { $0.matches(address) || $0.identity.bytes == address.bytes }
        return bonds.count != before
    }

    /// Forgets every bond (our own identity stays: peers bonded to it keep recognising us).
    package mutating func removeAll() { bonds.removeAll() }

    /// Our identity, made now if the store has none: a fresh IRK for the controller's address.
    package mutating func ensureLocalIdentity(address: BLEAddress, random: inout SecurityRandom) -> LocalIdentity {
        if let localIdentity { return localIdentity }
        let made = LocalIdentity(irk: random.key(), address: address)
        localIdentity = made
        return made
    }

    /// The path and the count: never a key.
    package var description: String { "BondStore(\(path), \(bonds.count) bonds)" }
}
