/// The Initiator / Responder Key Distribution octets of Pairing Request and Response (Vol 3
/// Part H §3.6.1, Figure 3.11): which keys each side sends once the link is encrypted. Bits 4–7
/// are reserved: kept as received and otherwise ignored.
public struct KeyDistribution: OptionSet, Hashable, Sendable {
    /// The octet as sent.
    public let rawValue: UInt8
    /// From the octet, reserved bits and all.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// EncKey: in legacy pairing the LTK with its EDIV and Rand; ignored by Secure Connections,
    /// whose LTK comes from `f5` and is never sent.
    public static let encryptionKey = KeyDistribution(rawValue: 0x01)
    /// IdKey: the IRK and the identity address, with which the peer's private addresses resolve.
    public static let identityKey = KeyDistribution(rawValue: 0x02)
    /// SignKey: the CSRK for signed writes. hwprobe never asks for it and never sends one.
    public static let signingKey = KeyDistribution(rawValue: 0x04)
    /// LinkKey: derive a BR/EDR link key. hwprobe is LE only and never sets it.
    public static let linkKey = KeyDistribution(rawValue: 0x08)

    /// The bits this Security Manager acts on (the others it clears in what it offers).
    public static let supported: KeyDistribution = [.encryptionKey, .identityKey]
}
