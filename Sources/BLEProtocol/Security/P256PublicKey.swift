import HAL

/// A P-256 public key as LE Secure Connections exchanges it (Pairing Public Key, Vol 3 Part H
/// §3.5.6): the X and Y coordinates, 32 octets each, most significant first (the PDU carries each
/// least significant first). Whether it is a point on the curve is not known here:
/// ``P256KeyPair/sharedSecret(with:)`` checks that before using it.
public struct P256PublicKey: Hashable, Sendable, CustomStringConvertible {
    /// X, most significant octet first.
    public let x: [UInt8]
    /// Y, most significant octet first.
    public let y: [UInt8]

    /// Two 32-octet coordinates, most significant first; nil for any other length.
    public init?(x: [UInt8], y: [UInt8]) {
        guard x.count == 32, y.count == 32 else { return nil }
        self.x = x
        self.y = y
    }

    /// The 64 octets of the PDU: X then Y, each least significant first.
    public var littleEndianBytes: [UInt8] { x.reversed() + y.reversed() }

    /// A public key is not secret: shown as the start of X, enough to tell two apart in a log.
    public var description: String { "P256PublicKey(x: \(Hex.string(x.prefix(4), .lower))…)" }
}
