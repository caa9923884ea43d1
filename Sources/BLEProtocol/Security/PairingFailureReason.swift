import HAL

/// The reason a Pairing Failed PDU carries (Vol 3 Part H §3.5.5, Table 3.7). A struct rather than
/// an enum so that a reason from a newer specification still parses, prints and writes back.
public struct PairingFailureReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The reason code as sent.
    public let rawValue: UInt8
    /// Any code, defined or not (a newer specification's reason still prints and writes back).
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The user's passkey entry failed (or was cancelled on a keyboard).
    public static let passkeyEntryFailed = PairingFailureReason(rawValue: 0x01)
    /// The OOB data the other side expects is not available here (hwprobe has no OOB channel).
    public static let oobNotAvailable = PairingFailureReason(rawValue: 0x02)
    /// The IO capabilities cannot give the protection asked for (MITM, Secure Connections only).
    public static let authenticationRequirements = PairingFailureReason(rawValue: 0x03)
    /// A confirm value did not match its random value: a wrong passkey, or someone in the middle.
    public static let confirmValueFailed = PairingFailureReason(rawValue: 0x04)
    /// The device does not pair.
    public static let pairingNotSupported = PairingFailureReason(rawValue: 0x05)
    /// The key size agreed is shorter than the device accepts.
    public static let encryptionKeySize = PairingFailureReason(rawValue: 0x06)
    /// An SMP command the device does not support, or not in its role.
    public static let commandNotSupported = PairingFailureReason(rawValue: 0x07)
    /// Anything else: an unexpected command, a user's cancel, an encryption that failed.
    public static let unspecified = PairingFailureReason(rawValue: 0x08)
    /// Too little time since the last failed attempt (§2.3.6).
    public static let repeatedAttempts = PairingFailureReason(rawValue: 0x09)
    /// A PDU of the wrong length or with a field out of range.
    public static let invalidParameters = PairingFailureReason(rawValue: 0x0A)
    /// The DHKey check value did not match (or the peer's public key was not on the curve).
    public static let dhKeyCheckFailed = PairingFailureReason(rawValue: 0x0B)
    /// The user said the two numbers differ.
    public static let numericComparisonFailed = PairingFailureReason(rawValue: 0x0C)
    /// A BR/EDR pairing is already in progress (a dual-mode peer).
    public static let bredrPairingInProgress = PairingFailureReason(rawValue: 0x0D)
    /// Cross-transport key derivation is not allowed (a dual-mode peer).
    public static let crossTransportKeyDerivationNotAllowed = PairingFailureReason(rawValue: 0x0E)
    /// A distributed key was not accepted (Core 5.3 on).
    public static let keyRejected = PairingFailureReason(rawValue: 0x0F)

    /// The specification's name, or "reserved" for a code it does not define.
    public var name: String {
        switch rawValue {
        case 0x01: "Passkey Entry Failed"
        case 0x02: "OOB Not Available"
        case 0x03: "Authentication Requirements"
        case 0x04: "Confirm Value Failed"
        case 0x05: "Pairing Not Supported"
        case 0x06: "Encryption Key Size"
        case 0x07: "Command Not Supported"
        case 0x08: "Unspecified Reason"
        case 0x09: "Repeated Attempts"
        case 0x0A: "Invalid Parameters"
        case 0x0B: "DHKey Check Failed"
        case 0x0C: "Numeric Comparison Failed"
        case 0x0D: "BR/EDR Pairing In Progress"
        case 0x0E: "Cross-transport Key Derivation Not Allowed"
        case 0x0F: "Key Rejected"
        default: "reserved reason"
        }
    }

    /// `0x04 Confirm Value Failed`, the contract's form.
    public var description: String { "0x\(Hex.byte(rawValue)) \(name)" }
}
