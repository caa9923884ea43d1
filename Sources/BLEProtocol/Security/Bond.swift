import HAL

/// What two devices keep after a pairing that bonds, for one peer: its identity, the keys that
/// encrypt the next connections without pairing again, and the IRK that recognises it behind its
/// resolvable private addresses.
///
/// Legacy pairing keeps two keys, one per direction, and they must not be confused (bumble's
/// stock Security Manager does, and a legacy bond's reconnection then fails): the key the peer
/// distributed is the one a central gives LE Enable Encryption when the peer is the peripheral
/// (``centralKey``); the key we distributed is the one we answer an LTK Request with when we
/// are the peripheral (``peripheralKey``). Secure Connections has one LTK, both ways, with EDIV
/// and Rand zero.
public struct Bond: Hashable, Sendable {
    /// The peer's identity address: the one it distributed, or the address it connected with.
    public var identity: BLEAddress
    /// The peer's Identity Resolving Key; nil when it sent none (or an all-zero one).
    public var irk: SecurityKey?
    /// The key to encrypt with when we are the central of a link to this peer.
    public var centralKey: EncryptionKey?
    /// The key to answer an LTK Request with when we are the peripheral of a link to this peer.
    public var peripheralKey: EncryptionKey?
    /// The pairing was authenticated (Passkey Entry or Numeric Comparison).
    public var isAuthenticated: Bool
    /// The pairing was LE Secure Connections.
    public var isSecureConnections: Bool
    /// The encryption key size agreed, in octets.
    public var keySize: Int

    /// An all-zero IRK is kept as no IRK.
    public init(identity: BLEAddress, irk: SecurityKey?, centralKey: EncryptionKey?, peripheralKey: EncryptionKey?,
                isAuthenticated: Bool, isSecureConnections: Bool, keySize: Int) {
        self.identity = identity
        self.irk = irk.flatMap { $0.isZero ? nil : $0 }
        self.centralKey = centralKey
        self.peripheralKey = peripheralKey
        self.isAuthenticated = isAuthenticated
        self.isSecureConnections = isSecureConnections
        self.keySize = keySize
    }

    /// The security a link encrypted with this bond's keys has.
    public var security: LinkSecurity {
        LinkSecurity(isEncrypted: true, isAuthenticated: isAuthenticated, isSecureConnections: isSecureConnections, keySize: keySize)
    }

    /// Whether `address` is this peer: its identity address, or a resolvable private address
    /// made with its IRK.
    public func matches(_ address: BLEAddress) -> Bool {
        if address == identity { return true }
        guard let irk else { return false }
        return ResolvablePrivateAddress.resolves(address, with: irk)
    }

    /// The kinds of key this bond holds, by their output names (`ltk`, `irk`): never the values.
    public var keyNames: [String] {
        (centralKey != nil || peripheralKey != nil ? ["ltk"] : []) + (irk != nil ? ["irk"] : [])
    }
}
