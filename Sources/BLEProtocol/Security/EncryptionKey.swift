/// A Long Term Key with the EDIV and Rand that name it (Vol 3 Part H §2.4.2): what a central gives
/// LE Enable Encryption, and what a peripheral looks up when its controller reports an LTK
/// Request carrying that EDIV and Rand. Secure Connections' LTK has EDIV and Rand zero.
public struct EncryptionKey: Hashable, Sendable {
    public var ltk: SecurityKey
    public var ediv: UInt16
    public var rand: UInt64

    public init(ltk: SecurityKey, ediv: UInt16 = 0, rand: UInt64 = 0) {
        self.ltk = ltk
        self.ediv = ediv
        self.rand = rand
    }

    /// Whether an LTK Request's EDIV and Rand name this key.
    public func matches(ediv: UInt16, rand: UInt64) -> Bool { self.ediv == ediv && self.rand == rand }
}
