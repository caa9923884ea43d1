/// What happens to a link's Security Manager: the host feeds each one, with the time, to
/// ``SecurityManager/handle(_:now:)``.
public enum SecurityEvent: Hashable, Sendable {
    /// An SMP PDU arrived on the Security Manager channel (L2CAP CID 0x0006): its bytes.
    case received([UInt8])
    /// Central: pair now (again, if the link is already paired).
    case pair
    /// Central: secure the link: encrypt with the bond's key when there is one that gives what
    /// `authenticated` asks, pair otherwise (GATT answered 0x05 or 0x0F, or `--pair`).
    case secure(authenticated: Bool)
    /// Peripheral: ask the central to secure the link (Security Request).
    case requestSecurity
    /// The user typed the passkey (000000–999999).
    case passkeyEntered(UInt32)
    /// The user answered the numeric comparison: the numbers match (true) or not.
    case numericComparison(accepted: Bool)
    /// The user cancelled the pairing at the prompt (Esc, Ctrl-C): it fails with Unspecified Reason.
    case userCancelled
    /// Peripheral: the controller asks for the LTK that EDIV and Rand name (LE Long Term Key Request).
    case ltkRequested(ediv: UInt16, rand: UInt64)
    /// The link's encryption changed (Encryption Change, or Encryption Key Refresh Complete with
    /// `enabled` true): HCI status 0 on success.
    case encryptionChanged(status: UInt8, enabled: Bool)
    /// The link is gone.
    case disconnected
    /// Time passed (the host calls this at ``SecurityManager/deadline``).
    case tick
}
