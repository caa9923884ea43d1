/// The security a link has: whether it is encrypted, with a key from an authenticated pairing or
/// not, from Secure Connections or legacy pairing, and how long the key is. GATT compares it with
/// what a characteristic needs (`0x05` Insufficient Authentication, `0x0F` Insufficient Encryption).
public struct LinkSecurity: Hashable, Sendable, CustomStringConvertible {
    /// The link is encrypted.
    public var isEncrypted: Bool
    /// The key came from a pairing that protected against a man in the middle (Passkey Entry,
    /// Numeric Comparison), not Just Works.
    public var isAuthenticated: Bool
    /// The key came from LE Secure Connections, not legacy pairing.
    public var isSecureConnections: Bool
    /// The encryption key size in octets (7–16); 0 when not encrypted.
    public var keySize: Int

    /// An unencrypted link has nothing else: the other fields are cleared when `isEncrypted` is false.
    public init(isEncrypted: Bool, isAuthenticated: Bool, isSecureConnections: Bool, keySize: Int) {
        self.isEncrypted = isEncrypted
        self.isAuthenticated = isEncrypted && isAuthenticated
        self.isSecureConnections = isEncrypted && isSecureConnections
        self.keySize = isEncrypted ? keySize : 0
    }

    /// An unencrypted link.
    public static let none = LinkSecurity(isEncrypted: false, isAuthenticated: false, isSecureConnections: false, keySize: 0)

    /// LE security mode 1's level (Vol 3 Part C §10.2.1): 1 no security, 2 unauthenticated
    /// pairing with encryption, 3 authenticated pairing with encryption, 4 authenticated LE Secure
    /// Connections pairing with a 128-bit key.
    public var level: Int {
        guard isEncrypted else { return 1 }
        guard isAuthenticated else { return 2 }
        return isSecureConnections && keySize == 16 ? 4 : 3
    }

    /// `encrypted, authenticated, Secure Connections, 16-byte key`: what a person reads.
    public var description: String {
        guard isEncrypted else { return "not encrypted" }
        return "encrypted, \(isAuthenticated ? "authenticated" : "unauthenticated"), "
            + "\(isSecureConnections ? "Secure Connections" : "legacy pairing"), \(keySize)-byte key"
    }
}
