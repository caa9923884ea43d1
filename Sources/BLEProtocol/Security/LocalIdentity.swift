import HAL

/// Our own identity, distributed in a pairing that bonds when the peer asks for it (Identity
/// Information and Identity Address Information): the IRK with which our resolvable private
/// addresses are made, and the identity address they stand for.
public struct LocalIdentity: Hashable, Sendable {
    /// Our Identity Resolving Key, kept in the bond store.
    public var irk: SecurityKey
    /// Public, or static random (the two top bits set).
    public var address: BLEAddress

    /// Our identity as the bond store keeps it.
    public init(irk: SecurityKey, address: BLEAddress) {
        self.irk = irk
        self.address = address
    }
}
