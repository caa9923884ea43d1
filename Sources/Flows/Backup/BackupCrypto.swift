import CCrypto

/// The few primitives a VB1 backup needs, over OpenSSL's libcrypto (3.0).
///
/// Every function reports failure as a `BackupCryptoError`; none of them traps on bad input.
/// Secrets are passed as byte arrays; callers own their lifetime.
package enum BackupCrypto {
    package static let sha256Length = 32
    package static let aes256KeyLength = 32
    package static let gcmTagLength = 16

    // MARK: Hashes and MACs

    /// SHA-256 of `data`.
    package static func sha256(_ data: [UInt8]) throws(BackupCryptoError) -> [UInt8] {
        guard let md = EVP_sha256() else { throw .unavailable("SHA-256") }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var digestLength: UInt32 = 0
        let ok = withNonNullBytes(data) { input in
            digest.withUnsafeMutableBufferPointer { out in
                EVP_Digest(input.baseAddress, input.count, out.baseAddress, &digestLength, md, nil)
            }
        }
        guard ok == 1, Int(digestLength) == sha256Length else {
            throw .operationFailed("SHA-256: \(drainErrors())")
        }
        return Array(digest.prefix(sha256Length))
    }

    /// HMAC-SHA256 of `message` under `key`.
    package static func hmacSHA256(key: [UInt8], message: [UInt8]) throws(BackupCryptoError) -> [UInt8] {
        guard let md = EVP_sha256() else { throw .unavailable("SHA-256") }
        guard key.count <= Int32.max else { throw .invalidInput("HMAC key is too long") }
        var mac = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var macLength: UInt32 = 0
        let result = withNonNullBytes(key) { keyBytes in
            withNonNullBytes(message) { messageBytes in
                mac.withUnsafeMutableBufferPointer { out in
                    HMAC(md, keyBytes.baseAddress, Int32(keyBytes.count),
                         messageBytes.baseAddress, messageBytes.count, out.baseAddress, &macLength)
                }
            }
        }
        guard result != nil, Int(macLength) == sha256Length else {
            throw .operationFailed("HMAC-SHA256: \(drainErrors())")
        }
        return Array(mac.prefix(sha256Length))
    }

    // MARK: Key derivation

    /// scrypt (RFC 7914) through `EVP_KDF` "SCRYPT".
    ///
    /// OpenSSL refuses any derivation needing more than its `maxmem_bytes` setting (32 MiB by
    /// default), so this sets the limit to exactly what these parameters need plus a small margin.
    /// Callers bound the parameters themselves before calling (VB1 does, see `ScryptParameters`).
    public static func scrypt(
        password: [UInt8], salt: [UInt8], logN: Int, r: Int, p: Int, length: Int
    ) throws(BackupCryptoError) -> [UInt8] {
        let result = withNonNullBytes(password) { bytes -> Result<[UInt8], BackupCryptoError> in
            do throws(BackupCryptoError) {
                return .success(try scrypt(password: UnsafeRawBufferPointer(bytes), salt: salt, logN: logN, r: r, p: p, length: length))
            } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// scrypt over a password the caller keeps where it is (a ``SecretBytes``): OpenSSL copies it
    /// into its KDF context, and `EVP_KDF_CTX_free` clears that copy.
    public static func scrypt(
        password: UnsafeRawBufferPointer, salt: [UInt8], logN: Int, r: Int, p: Int, length: Int
    ) throws(BackupCryptoError) -> [UInt8] {
        guard (1...63).contains(logN), r >= 1, p >= 1, r <= Int(UInt32.max), p <= Int(UInt32.max) else {
            throw .invalidInput("scrypt parameters logN \(logN), r \(r), p \(p) are out of range")
        }
        guard length > 0 else { throw .invalidInput("scrypt output length must be positive") }
        // OpenSSL allocates 128·r·(N + 2) bytes for V plus 128·r·p bytes for B.
        let n = UInt64(1) << UInt64(logN)
        let (perBlockSum, sumOverflow) = n.addingReportingOverflow(2 + UInt64(p))
        let (needed, productOverflow) = perBlockSum.multipliedReportingOverflow(by: 128 * UInt64(r))
        let margin: UInt64 = 1 << 20
        guard !sumOverflow, !productOverflow, needed <= UInt64.max - margin else {
            throw .invalidInput("scrypt parameters need more memory than can be addressed")
        }

        guard let kdf = EVP_KDF_fetch(nil, "SCRYPT", nil) else {
            throw .unavailable("scrypt (EVP_KDF SCRYPT): \(drainErrors())")
        }
        let context = EVP_KDF_CTX_new(kdf)
        EVP_KDF_free(kdf)
        guard let context else { throw .operationFailed("EVP_KDF_CTX_new: \(drainErrors())") }
        defer { EVP_KDF_CTX_free(context) }

        var nValue = n
        var rValue = UInt32(r)
        var pValue = UInt32(p)
        var maxMemory = needed + margin
        var output = [UInt8](repeating: 0, count: length)
        // A non-null pointer even for an empty password (OpenSSL treats NULL differently).
        guard let passwordBase = password.baseAddress else {
            let result = withNonNullBytes([]) { zero -> Result<[UInt8], BackupCryptoError> in
                do throws(BackupCryptoError) {
                    return .success(try scrypt(password: UnsafeRawBufferPointer(zero), salt: salt, logN: logN, r: r, p: p, length: length))
                } catch { return .failure(error) }
            }
            return try result.get()
        }
        let status = withNonNullBytes(salt) { saltBytes in
            withUnsafeMutablePointer(to: &nValue) { nPointer in
                withUnsafeMutablePointer(to: &rValue) { rPointer in
                    withUnsafeMutablePointer(to: &pValue) { pPointer in
                        withUnsafeMutablePointer(to: &maxMemory) { maxMemoryPointer in
                            var params: [OSSL_PARAM] = [
                                OSSL_PARAM_construct_octet_string(
                                    ParamKey.password, UnsafeMutableRawPointer(mutating: passwordBase),
                                    password.count),
                                OSSL_PARAM_construct_octet_string(
                                    ParamKey.salt, UnsafeMutableRawPointer(mutating: saltBytes.baseAddress),
                                    saltBytes.count),
                                OSSL_PARAM_construct_uint64(ParamKey.n, nPointer),
                                OSSL_PARAM_construct_uint32(ParamKey.r, rPointer),
                                OSSL_PARAM_construct_uint32(ParamKey.p, pPointer),
                                OSSL_PARAM_construct_uint64(ParamKey.maxMemory, maxMemoryPointer),
                                OSSL_PARAM_construct_end(),
                            ]
                            return params.withUnsafeMutableBufferPointer { paramBuffer in
                                output.withUnsafeMutableBufferPointer { out in
                                    EVP_KDF_derive(context, out.baseAddress, out.count, paramBuffer.baseAddress)
                                }
                            }
                        }
                    }
                }
            }
        }
        guard status == 1 else {
            output.overwriteWithZeros()
            throw .operationFailed("scrypt: \(drainErrors())")
        }
        return output
    }

    // MARK: AES-256-GCM

    /// AES-256-GCM encryption. Returns the ciphertext (same length as the plaintext) and the 16-byte tag.
    package static func aes256GCMSeal(
        key: [UInt8], nonce: [UInt8], plaintext: [UInt8], aad: [UInt8]
    ) throws(BackupCryptoError) -> (ciphertext: [UInt8], tag: [UInt8]) {
        try checkGCMInputs(key: key, nonce: nonce, text: plaintext, aad: aad)
        guard let cipher = EVP_aes_256_gcm() else { throw .unavailable("AES-256-GCM") }
        guard let context = EVP_CIPHER_CTX_new() else {
            throw .operationFailed("EVP_CIPHER_CTX_new: \(drainErrors())")
        }
        defer { EVP_CIPHER_CTX_free(context) }

        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 32)
        var tag = [UInt8](repeating: 0, count: gcmTagLength)
        var produced = 0
        var failedStep: String?
        withNonNullBytes(key) { keyBytes in
            withNonNullBytes(nonce) { nonceBytes in
                withNonNullBytes(plaintext) { input in
                    withNonNullBytes(aad) { aadBytes in
                        ciphertext.withUnsafeMutableBufferPointer { out in
                            tag.withUnsafeMutableBufferPointer { tagOut in
                                var written: Int32 = 0
                                if EVP_EncryptInit_ex(context, cipher, nil, nil, nil) != 1 {
                                    failedStep = "init"; return
                                }
                                if EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonceBytes.count), nil) != 1 {
                                    failedStep = "set IV length"; return
                                }
                                if EVP_EncryptInit_ex(context, nil, nil, keyBytes.baseAddress, nonceBytes.baseAddress) != 1 {
                                    failedStep = "set key"; return
                                }
                                if aadBytes.count > 0 {
                                    if EVP_EncryptUpdate(context, nil, &written, aadBytes.baseAddress, Int32(aadBytes.count)) != 1 {
                                        failedStep = "AAD"; return
                                    }
                                }
                                if input.count > 0 {
                                    if EVP_EncryptUpdate(context, out.baseAddress, &written, input.baseAddress, Int32(input.count)) != 1 {
                                        failedStep = "encrypt"; return
                                    }
                                    produced = Int(written)
                                }
                                if EVP_EncryptFinal_ex(context, out.baseAddress.map { $0 + produced }, &written) != 1 {
                                    failedStep = "final"; return
                                }
                                produced += Int(written)
                                if EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(gcmTagLength), tagOut.baseAddress) != 1 {
                                    failedStep = "get tag"; return
                                }
                            }
                        }
                    }
                }
            }
        }
        if let failedStep {
            throw .operationFailed("AES-GCM seal (\(failedStep)): \(drainErrors())")
        }
        guard produced == plaintext.count else {
            throw .operationFailed("AES-GCM seal produced \(produced) bytes for \(plaintext.count)")
        }
        return (Array(ciphertext.prefix(produced)), tag)
    }

    /// AES-256-GCM decryption and tag check.
    ///
    /// - Throws: `.authenticationFailed` when the tag does not match (wrong key, or any byte of the
    ///   ciphertext, tag, nonce or AAD changed); no plaintext is released in that case.
    package static func aes256GCMOpen(
        key: [UInt8], nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8], aad: [UInt8]
    ) throws(BackupCryptoError) -> SecretBytes {
        try checkGCMInputs(key: key, nonce: nonce, text: ciphertext, aad: aad)
        guard tag.count == gcmTagLength else { throw .invalidInput("GCM tag must be \(gcmTagLength) bytes") }
        guard let cipher = EVP_aes_256_gcm() else { throw .unavailable("AES-256-GCM") }
        guard let context = EVP_CIPHER_CTX_new() else {
            throw .operationFailed("EVP_CIPHER_CTX_new: \(drainErrors())")
        }
        defer { EVP_CIPHER_CTX_free(context) }

        var tagCopy = tag
        var failedStep: String?
        var tagMismatch = false
        // The plaintext is decrypted straight into the secret it is handed over in: no buffer
        // of it is ever freed unwiped. GCM writes exactly as many bytes as it reads; the block
        // of slack is what EVP's interface asks room for.
        let plaintext = SecretBytes(capacity: ciphertext.count + 16) { out -> Int in
            var produced = 0
            withNonNullBytes(key) { keyBytes in
                withNonNullBytes(nonce) { nonceBytes in
                    withNonNullBytes(ciphertext) { input in
                        withNonNullBytes(aad) { aadBytes in
                            tagCopy.withUnsafeMutableBufferPointer { tagBytes in
                                let outBase = out.baseAddress?.assumingMemoryBound(to: UInt8.self)
                                var written: Int32 = 0
                                if EVP_DecryptInit_ex(context, cipher, nil, nil, nil) != 1 {
                                    failedStep = "init"; return
                                }
                                if EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonceBytes.count), nil) != 1 {
                                    failedStep = "set IV length"; return
                                }
                                if EVP_DecryptInit_ex(context, nil, nil, keyBytes.baseAddress, nonceBytes.baseAddress) != 1 {
                                    failedStep = "set key"; return
                                }
                                if aadBytes.count > 0 {
                                    if EVP_DecryptUpdate(context, nil, &written, aadBytes.baseAddress, Int32(aadBytes.count)) != 1 {
                                        failedStep = "AAD"; return
                                    }
                                }
                                if input.count > 0 {
                                    if EVP_DecryptUpdate(context, outBase, &written, input.baseAddress, Int32(input.count)) != 1 {
                                        failedStep = "decrypt"; return
                                    }
                                    produced = Int(written)
                                }
                                if EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(tagBytes.count), tagBytes.baseAddress) != 1 {
                                    failedStep = "set tag"; return
                                }
                                if EVP_DecryptFinal_ex(context, outBase.map { $0 + produced }, &written) != 1 {
                                    tagMismatch = true; return
                                }
                                produced += Int(written)
                            }
                        }
                    }
                }
            }
            return produced
        }
        if tagMismatch {
            plaintext.wipe()
            _ = drainErrors()
            throw .authenticationFailed
        }
        if let failedStep {
            plaintext.wipe()
            throw .operationFailed("AES-GCM open (\(failedStep)): \(drainErrors())")
        }
        guard plaintext.count == ciphertext.count else {
            let produced = plaintext.count
            plaintext.wipe()
            throw .operationFailed("AES-GCM open produced \(produced) bytes for \(ciphertext.count)")
        }
        return plaintext
    }

    // MARK: Randomness and comparison

    /// `count` bytes from OpenSSL's CSPRNG.
    package static func randomBytes(_ count: Int) throws(BackupCryptoError) -> [UInt8] {
        guard count >= 0, count <= Int32.max else { throw .invalidInput("cannot produce \(count) random bytes") }
        var bytes = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return bytes }
        let status = bytes.withUnsafeMutableBufferPointer { out in
            RAND_bytes(out.baseAddress, Int32(out.count))
        }
        guard status == 1 else { throw .operationFailed("RAND_bytes: \(drainErrors())") }
        return bytes
    }

    /// Compares two byte strings in time that depends only on their length (`CRYPTO_memcmp`).
    /// Different lengths compare unequal at once; lengths are not secret here.
    package static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { left in
            b.withUnsafeBytes { right in
                CRYPTO_memcmp(left.baseAddress, right.baseAddress, left.count) == 0
            }
        }
    }

    // MARK: Helpers

    private enum ParamKey {
        // OSSL_PARAM keeps the key pointer, so the names must outlive the call: static strings do.
        static var password: UnsafePointer<CChar> { cString("pass") }
        static var salt: UnsafePointer<CChar> { cString("salt") }
        static var n: UnsafePointer<CChar> { cString("n") }
        static var r: UnsafePointer<CChar> { cString("r") }
        static var p: UnsafePointer<CChar> { cString("p") }
        static var maxMemory: UnsafePointer<CChar> { cString("maxmem_bytes") }

        private static func cString(_ name: StaticString) -> UnsafePointer<CChar> {
            UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self)
        }
    }

    private static func checkGCMInputs(
        key: [UInt8], nonce: [UInt8], text: [UInt8], aad: [UInt8]
    ) throws(BackupCryptoError) {
        guard key.count == aes256KeyLength else { throw .invalidInput("AES-256 key must be 32 bytes") }
        guard !nonce.isEmpty, nonce.count <= 128 else { throw .invalidInput("GCM nonce length \(nonce.count)") }
        guard text.count <= Int(Int32.max) - 64, aad.count <= Int(Int32.max) else {
            throw .invalidInput("GCM input is too long")
        }
    }

    /// Runs `body` with a buffer whose base address is never nil, even for an empty array
    /// (OpenSSL treats a NULL pointer differently from an empty buffer in places).
    private static func withNonNullBytes<Result>(
        _ bytes: [UInt8], _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        if bytes.isEmpty {
            let placeholder: [UInt8] = [0]
            return placeholder.withUnsafeBufferPointer { buffer in
                body(UnsafeBufferPointer(rebasing: buffer[0..<0]))
            }
        }
        return bytes.withUnsafeBufferPointer(body)
    }

    /// Empties this thread's OpenSSL error queue and describes what was in it.
    private static func drainErrors() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            buffer.withUnsafeMutableBufferPointer { out in
                ERR_error_string_n(code, out.baseAddress, out.count)
            }
            let end = buffer.firstIndex(of: 0) ?? buffer.endIndex
            messages.append(String(decoding: buffer[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? "no detail from OpenSSL" : messages.joined(separator: "; ")
    }
}

/// What went wrong inside the crypto library.
package enum BackupCryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The algorithm is not available in this libcrypto build (or its provider failed to load).
    case unavailable(String)
    /// An argument had the wrong size or range; nothing was computed.
    case invalidInput(String)
    /// OpenSSL reported a failure, with its error queue's text.
    case operationFailed(String)
    /// AES-GCM tag mismatch: the key is wrong or the data was changed.
    case authenticationFailed

    /// A short phrase naming the failure, carried into the container and code errors' reasons.
    public var description: String {
        switch self {
        case .unavailable(let what): return "crypto algorithm unavailable: \(what)"
        case .invalidInput(let why): return "invalid crypto input: \(why)"
        case .operationFailed(let why): return "crypto operation failed: \(why)"
        case .authenticationFailed: return "authentication tag mismatch"
        }
    }
}

extension Array where Element == UInt8 {
    /// Overwrites the bytes where they are with `OPENSSL_cleanse` (a loop of zeros before the
    /// array goes is a dead store the optimiser may drop). Only for arrays nothing shares: keys
    /// and buffers local to one function. Secrets that travel are ``SecretBytes``.
    mutating func overwriteWithZeros() {
        Secrets.wipe(&self)
    }
}
