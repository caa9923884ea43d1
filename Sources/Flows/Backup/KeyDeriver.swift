/// Turns a password into the 32-byte VB1 key.
///
/// This is its own step so an importer can run the slow part (scrypt takes about a second at the
/// default parameters) off the main thread, and so tests can substitute a fake.
/// The parameters given have already passed `ScryptParameters.unsupportedReason`.
public protocol KeyDeriver: Sendable {
    /// - Parameters:
    ///   - password: the NFC-normalised UTF-8 password. Read it where it is; the caller wipes it.
    ///   - salt: the 16-byte salt from the header.
    /// - Returns: the 32-byte key (the caller wipes it).
    func deriveKey(password: SecretBytes, salt: [UInt8], parameters: ScryptParameters) throws -> [UInt8]
}

/// The real deriver: scrypt through OpenSSL, 32-byte output.
public struct ScryptKeyDeriver: KeyDeriver {
    /// Holds no state: one instance can serve every import.
    public init() {}

    /// scrypt with the container's salt and parameters; throws `BackupCryptoError` when OpenSSL fails.
    public func deriveKey(password: SecretBytes, salt: [UInt8], parameters: ScryptParameters) throws -> [UInt8] {
        try password.withUnsafeBytes { bytes throws(BackupCryptoError) in
            try BackupCrypto.scrypt(
                password: bytes, salt: salt,
                logN: Int(parameters.logN), r: Int(parameters.r), p: Int(parameters.p),
                length: VB1Container.keyLength)
        }
    }
}
