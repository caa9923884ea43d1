/// A Long Term Key with the EDIV and Rand that name it (Vol 3 Part H §2.4.2): what a central gives
/// LE Enable Encryption, and what a peripheral looks up when its controller reports an LTK
/// Request carrying that EDIV and Rand. Secure Connections' LTK has EDIV and Rand zero.
public struct EncryptionKey: Hashable, Sendable {
    /// The key, already cut to the agreed size.
    public var ltk: SecurityKey
    /// Encrypted Diversifier: with Rand, how a peripheral finds the key again.
    public var ediv: UInt16
    /// The 64-bit random number that names the key with EDIV.
    public var rand: UInt64

    /// EDIV and Rand zero unless given: Secure Connections' LTK, or a legacy pairing's STK.
    public init(ltk: SecurityKey, ediv: UInt16 = 0, rand: UInt64 = 0) {
        self.ltk = ltk
        self.ediv = ediv
        self.rand = rand
    }

    /// Whether an LTK Request's EDIV and Rand name this key.
    public func matches(ediv: UInt16, rand: UInt64) -> Bool { self.ediv == ediv && self.rand == rand }
}
