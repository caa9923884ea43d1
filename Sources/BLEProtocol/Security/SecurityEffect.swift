/// What the host must do for a link's Security Manager, in order. Each is one routing step: an
/// L2CAP frame, an HCI command, or a prompt or report for the user.
public enum SecurityEffect: Hashable, Sendable {
    /// Send this PDU on the Security Manager channel (L2CAP CID 0x0006).
    case send(SMPPDU)
    /// Central: encrypt the link with this key (LE Enable Encryption with EDIV and Rand).
    case startEncryption(EncryptionKey)
    /// Peripheral: answer the LTK Request with this key (LE Long Term Key Request Reply).
    case replyLTK(SecurityKey)
    /// Peripheral: there is no key for that LTK Request (LE Long Term Key Request Negative Reply).
    case rejectLTKRequest
    /// Show the user this passkey (six digits, leading zeros kept); the peer's user types it.
    case displayPasskey(UInt32)
    /// Ask the user for the passkey the peer shows (or the one agreed, `--passkey`).
    case requestPasskey
    /// Show the user this number and ask whether the peer shows the same (yes/no).
    case confirmNumericValue(UInt32)
    /// The link's security changed (encrypted, with what).
    case securityChanged(LinkSecurity)
    /// Pairing finished: the method, the security, and the bond to keep (nil when not bonding).
    case paired(PairingOutcome)
    /// Pairing failed: nothing is to be kept.
    case pairingFailed(PairingFailure)
    /// Central: encrypting with the bond's key failed with this HCI status (0x06 PIN or Key
    /// Missing: the peer no longer has the bond). The host may pair again.
    case bondEncryptionFailed(status: UInt8)
}
