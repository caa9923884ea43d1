import HAL

/// The bind keys one run has: those typed for a device's address, perhaps one typed for
/// whichever device needs a key, and those kept in the bind key store (``BindKeyStore``) from
/// earlier runs. A device's key is looked up in that order: what a person typed now wins over
/// what was kept (a scale bound again has a new key), and a key typed for one address wins over
/// the key typed for any.
///
/// Drivers are handed these when they are made (``BindKeyDriver``), as a vendor scale's
/// ``VendorScaleOptions`` are. Its description counts keys and never shows one.
public struct BindKeys: Sendable, CustomStringConvertible {
    /// Where a device's key came from, for words that say which key to check.
    public enum Origin: Hashable, Sendable {
        /// Typed for this device's address (`--bind-key ADDRESS=HEX`).
        case typedForAddress
        /// Typed for whichever device needs one (`--bind-key HEX`).
        case typedForAnyDevice
        /// Kept for this address in the bind key store at this path.
        case stored(path: String)
    }

    private struct Entry: Sendable {
        var address: BLEAddress
        var key: BindKey
    }

    private var typed: [Entry] = []
    /// The key typed without an address, for whichever device needs one.
    public private(set) var anyDevice: BindKey?
    private var stored: [Entry] = []
    private var storePath = ""

    /// No keys: devices that encrypt their readings cannot be read.
    public init() {}

    /// No key at all, typed or kept.
    public var isEmpty: Bool { typed.isEmpty && anyDevice == nil && stored.isEmpty }

    /// Uses `key` for the device at `address` (compared by its six bytes, whatever its type),
    /// replacing a key typed for it before.
    public mutating func set(_ key: BindKey, for address: BLEAddress) {
        typed.removeAll { $0.address.bytes == address.bytes }
        typed.append(Entry(address: address, key: key))
    }

    /// Uses `key` for every device no key was typed for.
    public mutating func setForAnyDevice(_ key: BindKey) { anyDevice = key }

    /// Falls back on `keys` (read from the store at `path`) for devices no key was typed for.
    public mutating func addStored(_ keys: [(address: BLEAddress, key: BindKey)], from path: String) {
        stored = keys.map { Entry(address: $0.address, key: $0.key) }
        storePath = path
    }

    /// Whether a key was typed for this address (not for any device, not kept).
    public func hasTyped(for address: BLEAddress) -> Bool { typed.contains { $0.address.bytes == address.bytes } }

    /// The key for the device at `address`, with where it came from; nil when there is none.
    public func key(for address: BLEAddress) -> (key: BindKey, origin: Origin)? {
        if let entry = typed.first(where: { $0.address.bytes == address.bytes }) { return (entry.key, .typedForAddress) }
        if let anyDevice { return (anyDevice, .typedForAnyDevice) }
        if let entry = stored.first(where: { $0.address.bytes == address.bytes }) { return (entry.key, .stored(path: storePath)) }
        return nil
    }

    /// How many keys, never which.
    public var description: String {
        "BindKeys(\(typed.count) typed for an address, \(anyDevice == nil ? 0 : 1) for any device, \(stored.count) kept)"
    }
}
