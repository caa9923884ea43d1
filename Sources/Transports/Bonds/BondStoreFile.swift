import BLEProtocol
import HAL

/// The bond store's file format, version 1: one JSON object per controller identity. Keys are
/// hexadecimal, most significant octet first, as the specification writes them; Rand is 16 hex
/// digits (a 64-bit number JSON readers could round).
///
/// ```json
/// {"format": "hwprobe-bonds", "version": 1, "controller": "AA:BB:CC:DD:EE:FF",
///  "localIdentity": {"address": "AA:BB:CC:DD:EE:FF", "addressType": "public", "irk": "…"},
///  "bonds": [{"identity": "C1:22:33:44:55:66", "addressType": "random", "irk": "…",
///             "centralKey": {"ltk": "…", "ediv": 0, "rand": "0000000000000000"},
///             "peripheralKey": {"ltk": "…", "ediv": 0, "rand": "0000000000000000"},
///             "authenticated": true, "secureConnections": true, "keySize": 16}]}
/// ```
struct BondStoreFile: Codable {
    static let formatName = "hwprobe-bonds"
    static let currentVersion = 1

    var format: String
    var version: Int
    var controller: String
    var localIdentity: Identity?
    var bonds: [Entry]

    struct Identity: Codable {
        var address: String
        var addressType: String
        var irk: String
    }

    struct Key: Codable {
        var ltk: String
        var ediv: UInt16
        var rand: String
    }

    struct Entry: Codable {
        var identity: String
        var addressType: String
        var irk: String?
        var centralKey: Key?
        var peripheralKey: Key?
        var authenticated: Bool
        var secureConnections: Bool
        var keySize: Int
    }

    // MARK: To and from the values

    init(controller: BLEAddress, localIdentity: LocalIdentity?, bonds: [Bond]) {
        format = Self.formatName
        version = Self.currentVersion
        self.controller = controller.description
        self.localIdentity = localIdentity.map { Identity(address: $0.address.description, addressType: $0.address.kind.rawValue, irk: $0.irk.revealedHex) }
        self.bonds = bonds.map { bond in
            Entry(identity: bond.identity.description, addressType: bond.identity.kind.rawValue, irk: bond.irk?.revealedHex,
                  centralKey: bond.centralKey.map(Self.key), peripheralKey: bond.peripheralKey.map(Self.key),
                  authenticated: bond.isAuthenticated, secureConnections: bond.isSecureConnections, keySize: bond.keySize)
        }
    }

    private static func key(_ key: EncryptionKey) -> Key {
        Key(ltk: key.ltk.revealedHex, ediv: key.ediv, rand: Hex.string(LittleEndian.u64(key.rand).reversed(), .lower))
    }

    /// What is wrong with a file that parsed as JSON.
    struct Damage: Error {
        var reason: String
    }

    /// The values, every field checked; the reason for the first that is wrong.
    func values() throws(Damage) -> (controller: BLEAddress, localIdentity: LocalIdentity?, bonds: [Bond]) {
        guard format == Self.formatName else { throw Damage(reason: "it is not a bond store (format \"\(format)\")") }
        guard version == Self.currentVersion else { throw Damage(reason: "version \(version), this hwprobe reads version \(Self.currentVersion)") }
        guard let controller = BLEAddress(string: controller) else { throw Damage(reason: "the controller address \"\(controller)\" is not an address") }
        var identity: LocalIdentity?
        if let local = localIdentity {
            guard let address = Self.address(local.address, local.addressType), let irk = Self.key128(local.irk) else {
                throw Damage(reason: "its own identity is damaged")
            }
            identity = LocalIdentity(irk: irk, address: address)
        }
        var made: [Bond] = []
        for (index, entry) in bonds.enumerated() {
            guard let address = Self.address(entry.identity, entry.addressType) else { throw Damage(reason: "bond \(index + 1): the identity address is damaged") }
            var irk: SecurityKey?
            if let text = entry.irk {
                guard let parsed = Self.key128(text) else { throw Damage(reason: "bond \(index + 1): the IRK is damaged") }
                irk = parsed
            }
            guard (7...16).contains(entry.keySize) else { throw Damage(reason: "bond \(index + 1): key size \(entry.keySize)") }
            let central = entry.centralKey.map(Self.encryptionKey)
            let peripheral = entry.peripheralKey.map(Self.encryptionKey)
            if central == .some(nil) || peripheral == .some(nil) { throw Damage(reason: "bond \(index + 1): a key is damaged") }
            made.append(Bond(identity: address, irk: irk, centralKey: central ?? nil, peripheralKey: peripheral ?? nil,
                             isAuthenticated: entry.authenticated, isSecureConnections: entry.secureConnections, keySize: entry.keySize))
        }
        return (controller, identity, made)
    }

    private static func address(_ text: String, _ type: String) -> BLEAddress? {
        guard let kind = BLEAddress.Kind(rawValue: type) else { return nil }
        return BLEAddress(string: text, defaultKind: kind).flatMap { $0.kind == kind ? $0 : nil }
    }

    private static func key128(_ text: String) -> SecurityKey? { Hex.bytes(text).flatMap(SecurityKey.init(bytes:)) }

    private static func encryptionKey(_ key: Key) -> EncryptionKey? {
        guard let ltk = key128(key.ltk), let rand = Hex.bytes(key.rand), rand.count == 8 else { return nil }
        return EncryptionKey(ltk: ltk, ediv: key.ediv, rand: rand.reduce(0) { $0 << 8 | UInt64($1) })
    }
}
