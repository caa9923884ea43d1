import Foundation

/// One VB1 backup container: a 45-byte header, then the AES-256-GCM ciphertext and its 16-byte tag.
///
/// Reading is split into steps so an importer can show progress and keep the slow part off the
/// main thread: `init(parsing:)` (format and parameter checks, cheap and safe on hostile input),
/// `deriveKey(password:deriver:)` (scrypt), then `open(key:)` (key check and decryption).
/// `open(password:deriver:)` does the last two in one call.
public struct VB1Container: Hashable, Sendable {
    /// The four bytes every container starts with, `VLTB`.
    public static let magic: [UInt8] = Array("VLTB".utf8)
    /// The only container version this code reads and writes (header byte 4).
    public static let formatVersion: UInt8 = 1
    /// The KDF id for scrypt (header byte 5), the only key derivation the format defines.
    public static let scryptKDF: UInt8 = 1
    /// Bytes of random salt fed to scrypt (header offsets 9–24).
    public static let saltLength = 16
    /// Bytes of AES-GCM nonce (header offsets 25–36).
    public static let nonceLength = 12
    /// Bytes of key check, which tells a wrong password apart from damaged data (offsets 37–44).
    public static let keyCheckLength = 8
    /// Bytes of the derived AES-256 key.
    public static let keyLength = 32
    /// Bytes of the GCM authentication tag that ends the container.
    public static let tagLength = 16
    /// Bytes of header before the ciphertext; all of them are authenticated as the GCM additional data.
    public static let headerLength = 45
    /// The shortest container: a header and a tag around an empty plaintext.
    public static let minimumLength = headerLength + tagLength
    static let keyCheckLabel: [UInt8] = Array("VLTB key check".utf8)

    /// The whole container, exactly as stored in the codes.
    public let bytes: [UInt8]
    /// Key-derivation parameters from the header (already checked to be supported).
    public let parameters: ScryptParameters

    /// The format version byte; always `formatVersion` once parsed.
    public var version: UInt8 { bytes[4] }
    /// The KDF id byte; always `scryptKDF` once parsed.
    public var kdfID: UInt8 { bytes[5] }
    /// The 16 salt bytes scrypt needs to re-derive the key.
    public var salt: [UInt8] { Array(bytes[9..<25]) }
    /// The 12 nonce bytes AES-GCM needs to decrypt.
    public var nonce: [UInt8] { Array(bytes[25..<37]) }
    /// The 8 bytes a derived key must reproduce before decryption is even tried.
    public var keyCheck: [UInt8] { Array(bytes[37..<45]) }
    /// Offsets 0–44: the additional authenticated data.
    public var header: [UInt8] { Array(bytes[0..<Self.headerLength]) }
    /// The encrypted plaintext, without the tag.
    public var ciphertext: [UInt8] { Array(bytes[Self.headerLength..<(bytes.count - Self.tagLength)]) }
    /// The 16-byte GCM tag that proves the header and ciphertext are unchanged.
    public var tag: [UInt8] { Array(bytes[(bytes.count - Self.tagLength)...]) }

    /// Checks a container in the order the format prescribes, without deriving anything.
    ///
    /// - Throws: `.notABackup` for a wrong magic, version or KDF, or too few bytes;
    ///   `.unsupportedParameters` for scrypt parameters outside the supported ranges or needing more
    ///   than 1 GiB.
    public init(parsing bytes: [UInt8]) throws(VB1ContainerError) {
        guard bytes.count >= Self.minimumLength,
              Array(bytes[0..<4]) == Self.magic,
              bytes[4] == Self.formatVersion,
              bytes[5] == Self.scryptKDF
        else {
            throw .notABackup
        }
        let parameters = ScryptParameters(logN: bytes[6], r: bytes[7], p: bytes[8])
        if let reason = parameters.unsupportedReason {
            throw .unsupportedParameters(reason)
        }
        self.bytes = bytes
        self.parameters = parameters
    }

    // MARK: Reading

    /// The password as the format hashes it: Unicode NFC, then UTF-8.
    public static func passwordBytes(_ password: String) -> [UInt8] {
        Array(password.precomposedStringWithCanonicalMapping.utf8)
    }

    /// The typed (or read) password as the format hashes it, NFC then UTF-8, without copying it
    /// where that can be avoided: valid UTF-8 whose scalars are all below U+0300 (ASCII, Latin-1
    /// and Latin Extended, typed precomposed: nearly every password) is already NFC, since every
    /// canonical composition and decomposition involves a scalar at or above U+0300 — those
    /// bytes are returned as they are, the same object. Anything else goes through Swift's and
    /// Foundation's normalisation, whose intermediate strings cannot be wiped; the result is a
    /// new secret the caller wipes.
    public static func normalizedPassword(_ typed: SecretBytes) -> SecretBytes {
        let alreadyNFC = typed.withUnsafeBytes { bytes -> Bool in
            var iterator = bytes.makeIterator()
            var decoder = UTF8()
            while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let scalar): if scalar.value >= 0x300 { return false }
                case .emptyInput: return true
                case .error: return false
                }
            }
        }
        if alreadyNFC { return typed }
        return typed.withUnsafeBytes { bytes in
            var normalized = Array(String(decoding: bytes, as: UTF8.self).precomposedStringWithCanonicalMapping.utf8)
            defer { normalized.overwriteWithZeros() }
            return SecretBytes(copying: normalized)
        }
    }

    /// Runs the (slow) key derivation for this container's salt and parameters. The password is
    /// read where it is and left to the caller to wipe.
    ///
    /// - Throws: `.cryptoFailure` when the deriver fails or returns a key of the wrong size.
    package func deriveKey(
        password: SecretBytes, deriver: any KeyDeriver = ScryptKeyDeriver()
    ) throws(VB1ContainerError) -> [UInt8] {
        let normalized = Self.normalizedPassword(password)
        defer { if normalized !== password { normalized.wipe() } }
        return try Self.runDeriver(deriver, password: normalized, salt: salt, parameters: parameters)
    }

    /// The same for a password given as a string (tests, and exporters, whose password is
    /// theirs): a string's bytes cannot be wiped, so the importer never holds one.
    package func deriveKey(
        password: String, deriver: any KeyDeriver = ScryptKeyDeriver()
    ) throws(VB1ContainerError) -> [UInt8] {
        let secret = SecretBytes(copying: password.utf8)
        defer { secret.wipe() }
        return try deriveKey(password: secret, deriver: deriver)
    }

    /// Checks a derived key against the key check (in constant time), then decrypts into a
    /// secret: the only copy of the plaintext.
    ///
    /// - Throws: `.incorrectPassword` when the key check differs; `.damaged` when the key check
    ///   matches but the GCM tag does not (the bytes were changed, never a wrong password).
    public func open(key: [UInt8]) throws(VB1ContainerError) -> SecretBytes {
        guard key.count == Self.keyLength else {
            throw .cryptoFailure("derived key is \(key.count) bytes, expected \(Self.keyLength)")
        }
        let expected = try Self.keyCheck(for: key)
        guard BackupCrypto.constantTimeEqual(expected, keyCheck) else {
            throw .incorrectPassword
        }
        do throws(BackupCryptoError) {
            return try BackupCrypto.aes256GCMOpen(
                key: key, nonce: nonce, ciphertext: ciphertext, tag: tag, aad: header)
        } catch .authenticationFailed {
            throw .damaged("the encrypted data does not match its authentication tag")
        } catch {
            throw .cryptoFailure(error.description)
        }
    }

    /// Derives the key and opens the container: `open(key: deriveKey(password:deriver:))`.
    public func open(
        password: SecretBytes, deriver: any KeyDeriver = ScryptKeyDeriver()
    ) throws(VB1ContainerError) -> SecretBytes {
        var key = try deriveKey(password: password, deriver: deriver)
        defer { key.overwriteWithZeros() }
        return try open(key: key)
    }

    /// The same for a password given as a string (tests, and exporters checking their own work).
    public func open(
        password: String, deriver: any KeyDeriver = ScryptKeyDeriver()
    ) throws(VB1ContainerError) -> SecretBytes {
        let secret = SecretBytes(copying: password.utf8)
        defer { secret.wipe() }
        return try open(password: secret, deriver: deriver)
    }

    /// Parses and opens container bytes with a password in one call.
    public static func open(
        _ bytes: [UInt8], password: String, deriver: any KeyDeriver = ScryptKeyDeriver()
    ) throws(VB1ContainerError) -> SecretBytes {
        try VB1Container(parsing: bytes).open(password: password, deriver: deriver)
    }

    // MARK: Writing

    /// Encrypts `plaintext` into a new container.
    ///
    /// - Parameters:
    ///   - salt: 16 bytes; fresh random bytes when nil (always nil outside tests).
    ///   - nonce: 12 bytes; fresh random bytes when nil (always nil outside tests).
    /// - Throws: `.unsupportedParameters` for parameters a reader would refuse or a salt/nonce of the
    ///   wrong size; `.cryptoFailure` when the crypto library fails.
    public static func write(
        plaintext: [UInt8],
        password: String,
        parameters: ScryptParameters = .exportDefault,
        salt: [UInt8]? = nil,
        nonce: [UInt8]? = nil,
        deriver: any KeyDeriver = ScryptKeyDeriver()
    ) throws(VB1ContainerError) -> VB1Container {
        if let reason = parameters.unsupportedReason {
            throw .unsupportedParameters(reason)
        }
        let salt = try Self.given(salt, orRandom: saltLength)
        let nonce = try Self.given(nonce, orRandom: nonceLength)
        guard salt.count == saltLength else {
            throw .unsupportedParameters("salt must be \(saltLength) bytes, not \(salt.count)")
        }
        guard nonce.count == nonceLength else {
            throw .unsupportedParameters("nonce must be \(nonceLength) bytes, not \(nonce.count)")
        }

        let passwordBytes = SecretBytes(copying: password.precomposedStringWithCanonicalMapping.utf8)
        defer { passwordBytes.wipe() }
        var key = try runDeriver(deriver, password: passwordBytes, salt: salt, parameters: parameters)
        defer { key.overwriteWithZeros() }

        var header = magic
        header += [formatVersion, scryptKDF, parameters.logN, parameters.r, parameters.p]
        header += salt
        header += nonce
        header += try keyCheck(for: key)

        let sealed: (ciphertext: [UInt8], tag: [UInt8])
        do throws(BackupCryptoError) {
            sealed = try BackupCrypto.aes256GCMSeal(key: key, nonce: nonce, plaintext: plaintext, aad: header)
        } catch {
            throw .cryptoFailure(error.description)
        }
        return try VB1Container(parsing: header + sealed.ciphertext + sealed.tag)
    }

    // MARK: Helpers

    /// The first 8 bytes of HMAC-SHA256(key, "VLTB key check").
    static func keyCheck(for key: [UInt8]) throws(VB1ContainerError) -> [UInt8] {
        do throws(BackupCryptoError) {
            return Array(try BackupCrypto.hmacSHA256(key: key, message: keyCheckLabel).prefix(keyCheckLength))
        } catch {
            throw .cryptoFailure(error.description)
        }
    }

    private static func given(_ bytes: [UInt8]?, orRandom count: Int) throws(VB1ContainerError) -> [UInt8] {
        if let bytes { return bytes }
        do throws(BackupCryptoError) {
            return try BackupCrypto.randomBytes(count)
        } catch {
            throw .cryptoFailure(error.description)
        }
    }

    private static func runDeriver(
        _ deriver: any KeyDeriver, password: SecretBytes, salt: [UInt8], parameters: ScryptParameters
    ) throws(VB1ContainerError) -> [UInt8] {
        let key: [UInt8]
        do {
            key = try deriver.deriveKey(password: password, salt: salt, parameters: parameters)
        } catch let error as VB1ContainerError {
            throw error
        } catch {
            throw .cryptoFailure("key derivation failed: \(error)")
        }
        guard key.count == keyLength else {
            throw .cryptoFailure("key derivation returned \(key.count) bytes, expected \(keyLength)")
        }
        return key
    }
}

/// Why a container could not be read or written. The first four are the outcomes the format
/// defines; `cryptoFailure` means the crypto library itself failed (not the user's fault).
public enum VB1ContainerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not a VB1 container at all (wrong magic, version or KDF, or too short).
    case notABackup
    /// A VB1 container whose parameters this reader refuses; nothing was derived.
    case unsupportedParameters(String)
    /// The key check does not match: the password is wrong.
    case incorrectPassword
    /// The password is right but the data was changed.
    case damaged(String)
    /// The crypto library or the key deriver failed.
    case cryptoFailure(String)

    /// A short lower-case phrase naming the outcome, for messages and logs.
    public var description: String {
        switch self {
        case .notABackup: return "this is not a vault backup"
        case .unsupportedParameters(let reason): return "this backup uses unsupported parameters: \(reason)"
        case .incorrectPassword: return "incorrect password"
        case .damaged(let reason): return "this backup is damaged: \(reason)"
        case .cryptoFailure(let reason): return "cryptography failed: \(reason)"
        }
    }
}
