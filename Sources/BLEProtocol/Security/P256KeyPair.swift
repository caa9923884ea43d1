import CCrypto

/// An ECDH key pair on P-256 for LE Secure Connections (Vol 3 Part H §2.3.5.6.1), through
/// libcrypto's EVP interface; the private key never leaves libcrypto's memory, which frees it
/// cleared.
///
/// ``sharedSecret(with:)`` refuses a peer key that is not a valid point of the curve before any
/// arithmetic with it (`EVP_PKEY_public_check`: coordinates in range, on the curve, not the point
/// at infinity, of the group's order). Without that check a peer sending points of a weaker curve
/// learns our private key bit by bit (the invalid-curve attack; Biham and Neumann's
/// fixed-coordinate variant against Bluetooth, 2018, which Core Erratum 10734 answers).
///
/// Immutable once made, so sharing one across copies of a Security Manager is safe.
public final class P256KeyPair: @unchecked Sendable {
    private let key: OpaquePointer
    /// Our public key, as Pairing Public Key sends it.
    public let publicKey: P256PublicKey

    /// A fresh key pair from libcrypto's random generator.
    public init() throws(SecurityCryptoError) {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw .unavailable("EC keys") }
        defer { EVP_PKEY_CTX_free(context) }
        var generated: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
              EVP_PKEY_generate(context, &generated) == 1, let made = generated else {
            throw .operationFailed("P-256 key generation: \(AES128.drainErrors())")
        }
        do throws(SecurityCryptoError) { publicKey = try Self.publicKey(of: made) } catch {
            EVP_PKEY_free(made)
            throw error
        }
        key = made
    }

    /// A key pair from a known private scalar and its public key (32 + 64 octets, most
    /// significant first): the specification's sample keys in tests. Refuses a public key that
    /// is not on the curve.
    public init(privateKey: [UInt8], publicKey: P256PublicKey) throws(SecurityCryptoError) {
        guard privateKey.count == 32 else { throw .operationFailed("a P-256 private key of \(privateKey.count) bytes") }
        key = try Self.importKey(publicKey: publicKey, privateKey: privateKey)
        self.publicKey = publicKey
    }

    deinit { EVP_PKEY_free(key) }

    /// The DHKey: the X coordinate of our private key times the peer's point, 32 octets most
    /// significant first. Throws ``SecurityCryptoError/publicKeyNotOnCurve`` for a peer key that
    /// is not a valid point of P-256.
    public func sharedSecret(with peer: P256PublicKey) throws(SecurityCryptoError) -> [UInt8] {
        let peerKey = try Self.importKey(publicKey: peer, privateKey: nil)
        defer { EVP_PKEY_free(peerKey) }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { throw .operationFailed("EVP_PKEY_CTX_new_from_pkey") }
        defer { EVP_PKEY_CTX_free(context) }
        // validate_peer = 1: libcrypto checks the peer key again as it takes it.
        guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer_ex(context, peerKey, 1) == 1 else {
            _ = AES128.drainErrors()
            throw .publicKeyNotOnCurve
        }
        var length = 0
        guard EVP_PKEY_derive(context, nil, &length) == 1, length == 32 else {
            throw .operationFailed("ECDH: \(AES128.drainErrors())")
        }
        var secret = [UInt8](repeating: 0, count: 32)
        guard secret.withUnsafeMutableBufferPointer({ EVP_PKEY_derive(context, $0.baseAddress, &length) }) == 1, length == 32 else {
            KeyMaterial.wipe(&secret)
            throw .operationFailed("ECDH: \(AES128.drainErrors())")
        }
        return secret
    }

    /// Whether `key` is a valid point of P-256 (what ``sharedSecret(with:)`` checks first).
    public static func isValid(_ key: P256PublicKey) -> Bool {
        guard let imported = try? importKey(publicKey: key, privateKey: nil) else { return false }
        EVP_PKEY_free(imported)
        return true
    }

    // MARK: libcrypto

    /// An EVP_PKEY from an uncompressed point (and a private scalar when given), checked to be a
    /// valid public key of P-256.
    private static func importKey(publicKey: P256PublicKey, privateKey: [UInt8]?) throws(SecurityCryptoError) -> OpaquePointer {
        guard let builder = OSSL_PARAM_BLD_new() else { throw .operationFailed("OSSL_PARAM_BLD_new") }
        defer { OSSL_PARAM_BLD_free(builder) }
        let point = [0x04] + publicKey.x + publicKey.y
        var scalar: OpaquePointer?
        defer { if let scalar { BN_clear_free(scalar) } }
        if let privateKey {
            scalar = privateKey.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
            guard scalar != nil else { throw .operationFailed("BN_bin2bn") }
        }
        // The builder keeps pointers to the names, strings and bytes pushed until to_param copies
        // them: names and strings are static, the point is in scope throughout.
        let built = point.withUnsafeBytes { pub -> OpaquePointer? in
            guard OSSL_PARAM_BLD_push_utf8_string(builder, AES128.cString("group"), AES128.cString("P-256"), 0) == 1,
                  OSSL_PARAM_BLD_push_octet_string(builder, AES128.cString("pub"), pub.baseAddress, pub.count) == 1,
                  scalar == nil || OSSL_PARAM_BLD_push_BN(builder, AES128.cString("priv"), scalar) == 1 else { return nil }
            return OpaquePointer(OSSL_PARAM_BLD_to_param(builder))
        }
        guard let built else { throw .operationFailed("P-256 key parameters: \(AES128.drainErrors())") }
        let params = UnsafeMutablePointer<OSSL_PARAM>(built)
        defer { OSSL_PARAM_free(params) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw .unavailable("EC keys") }
        defer { EVP_PKEY_CTX_free(context) }
        var made: OpaquePointer?
        // EVP_PKEY_PUBLIC_KEY / EVP_PKEY_KEYPAIR, macros Swift does not import: the key
        // parameters and the public key (0x86), with the private key too (0x87).
        let selection = privateKey == nil ? 0x86 : 0x87
        guard EVP_PKEY_fromdata_init(context) == 1, EVP_PKEY_fromdata(context, &made, Int32(selection), params) == 1, let made else {
            // libcrypto refuses a point that does not decode onto the curve already here.
            _ = AES128.drainErrors()
            throw .publicKeyNotOnCurve
        }
        guard let check = EVP_PKEY_CTX_new_from_pkey(nil, made, nil) else {
            EVP_PKEY_free(made)
            throw .operationFailed("EVP_PKEY_CTX_new_from_pkey")
        }
        defer { EVP_PKEY_CTX_free(check) }
        guard EVP_PKEY_public_check(check) == 1 else {
            _ = AES128.drainErrors()
            EVP_PKEY_free(made)
            throw .publicKeyNotOnCurve
        }
        return made
    }

    private static func publicKey(of key: OpaquePointer) throws(SecurityCryptoError) -> P256PublicKey {
        var encoded = [UInt8](repeating: 0, count: 65)
        var length = 0
        let ok = encoded.withUnsafeMutableBufferPointer {
            EVP_PKEY_get_octet_string_param(key, "encoded-pub-key", $0.baseAddress, $0.count, &length)
        }
        guard ok == 1, length == 65, encoded[0] == 0x04,
              let publicKey = P256PublicKey(x: Array(encoded[1..<33]), y: Array(encoded[33..<65])) else {
            throw .operationFailed("reading the P-256 public key: \(AES128.drainErrors())")
        }
        return publicKey
    }
}
