/// How a pairing is authenticated (Vol 3 Part H §2.3.5.1), as ``AssociationModel`` picks it from
/// the two sides' features. Out of Band is not offered: hwprobe has no OOB channel.
public enum PairingMethod: Hashable, Sendable, CustomStringConvertible {
    /// No user involvement; no protection against a man in the middle (unauthenticated).
    case justWorks
    /// A six-digit passkey shown on one side and typed on the other (or typed on both).
    case passkeyEntry(PasskeyDisplay)
    /// Both sides show a six-digit number and their users confirm they match (Secure Connections only).
    case numericComparison

    /// Which side of a Passkey Entry shows the passkey; the other types it.
    public enum PasskeyDisplay: Hashable, Sendable {
        /// The initiator (central) shows it, the responder's user types it.
        case initiator
        /// The responder (peripheral) shows it, the initiator's user types it.
        case responder
        /// Neither can show: both users type the same passkey.
        case neither
    }

    /// Whether the method protects against a man in the middle (an authenticated pairing).
    public var isAuthenticated: Bool {
        switch self {
        case .justWorks: false
        case .passkeyEntry, .numericComparison: true
        }
    }

    /// The method's name as output and cassettes give it (`just-works`, `passkey`, `numeric-comparison`).
    public var description: String {
        switch self {
        case .justWorks: "just-works"
        case .passkeyEntry: "passkey"
        case .numericComparison: "numeric-comparison"
        }
    }
}
