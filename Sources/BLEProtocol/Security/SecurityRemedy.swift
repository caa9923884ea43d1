/// What a GATT client does when the server refuses a request for want of security, decided from
/// the ATT error code and the security the link has now (a value: the host carries it out).
///
/// The facts are the Core specification's: Vol 3 Part F §3.4.1.1 names the codes, and Vol 3 Part C
/// §10.3 (the GAP authentication and encryption procedures) says how a client answers them —
/// Insufficient Encryption with encryption (the bond's key, or a pairing when there is none),
/// Insufficient Authentication with an authenticated pairing when the link's key is not one,
/// Insufficient Encryption Key Size with a pairing for a longer key. Insufficient Authorization
/// (0x08) is the server application's own decision, which no pairing grants, so it is not
/// remedied: the request fails with it as it came.
public enum SecurityRemedy: Hashable, Sendable {
    /// Encrypt with the bond's key when it gives what is asked, pair otherwise (`authenticated`:
    /// a key from Passkey Entry or Numeric Comparison, MITM asked for).
    case secure(authenticated: Bool)
    /// Pair again although the link is encrypted: its key is too short.
    case pairAgain

    /// The ATT errors a client may answer by securing the link.
    public static let remediableCodes: Set<UInt8> = [
        ATTErrorCode.insufficientAuthentication, ATTErrorCode.insufficientEncryptionKeySize, ATTErrorCode.insufficientEncryption,
    ]

    /// What to do about ATT error `code` on a link with `link`'s security; nil: nothing helps
    /// (not a security refusal, or the link already has what securing could give it).
    public static func remedy(for code: UInt8, link: LinkSecurity) -> SecurityRemedy? {
        switch code {
        case ATTErrorCode.insufficientEncryption:
            return link.isEncrypted ? nil : .secure(authenticated: false)
        case ATTErrorCode.insufficientAuthentication:
            return link.isAuthenticated ? nil : .secure(authenticated: true)
        case ATTErrorCode.insufficientEncryptionKeySize:
            guard link.isEncrypted else { return .secure(authenticated: false) }
            return link.keySize < 16 ? .pairAgain : nil
        default:
            return nil
        }
    }
}
