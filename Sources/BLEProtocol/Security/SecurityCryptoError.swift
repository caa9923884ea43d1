/// Why a Security Manager computation failed. libcrypto failing at AES or CMAC is a broken
/// installation, not something a peer can cause; a public key off the curve is what a peer can.
public enum SecurityCryptoError: Error, Hashable, Sendable, CustomStringConvertible {
    /// libcrypto lacks an algorithm (AES-128, CMAC, P-256): the OpenSSL installation is broken.
    case unavailable(String)
    /// libcrypto refused an operation it should have done; its error queue says why.
    case operationFailed(String)
    /// The peer's public key is not a point on P-256 (or is the point at infinity, or out of
    /// range): using it would leak bits of our private key (the invalid-curve attack).
    case publicKeyNotOnCurve

    public var description: String {
        switch self {
        case .unavailable(let what): "libcrypto has no \(what): reinstall OpenSSL 3 (Debian: libssl3)"
        case .operationFailed(let what): "libcrypto failed at \(what)"
        case .publicKeyNotOnCurve: "the peer's public key is not a point on the P-256 curve"
        }
    }
}
