/// The AuthReq octet of Pairing Request, Pairing Response and Security Request (Vol 3 Part H
/// §3.5.1, Figure 3.3): whether a device wants to bond, needs protection from a man in the middle,
/// supports Secure Connections, sends keypress notifications, and supports `h7` (CT2). Bits 6–7
/// are reserved: kept as received (so a PDU writes back to its bytes) and otherwise ignored.
public struct AuthenticationRequirements: OptionSet, Hashable, Sendable {
    /// The octet as sent.
    public let rawValue: UInt8
    /// From the octet, reserved bits and all.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Bonding_Flags = 01: keys distributed in this pairing are to be kept.
    public static let bonding = AuthenticationRequirements(rawValue: 0x01)
    /// MITM: the device asks for an authenticated pairing (not Just Works).
    public static let mitm = AuthenticationRequirements(rawValue: 0x04)
    /// SC: the device supports LE Secure Connections.
    public static let secureConnections = AuthenticationRequirements(rawValue: 0x08)
    /// Keypress: the device sends Keypress Notifications during Passkey Entry.
    public static let keypress = AuthenticationRequirements(rawValue: 0x10)
    /// CT2: the device supports `h7` for cross-transport key derivation.
    public static let ct2 = AuthenticationRequirements(rawValue: 0x20)

    /// Bonding_Flags (bits 0–1) say Bonding; 10 and 11 are reserved and mean no bonding.
    public var wantsBonding: Bool { rawValue & 0x03 == 0x01 }
}
