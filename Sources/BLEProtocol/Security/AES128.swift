import CCrypto

/// The two AES primitives the Security Manager is built on, through libcrypto: the block cipher
/// `e` (Vol 3 Part H §2.2.1, AES-128 on one block, most significant octet first, as FIPS-197) and
/// AES-CMAC (§2.2.5, RFC 4493), on which `f4`, `f5`, `f6`, `g2` stand.
package enum AES128 {
    /// `e(key, plaintext)`: one AES-128 block.
    package static func encrypt(key: SecurityKey, block: [UInt8]) throws(SecurityCryptoError) -> SecurityKey {
        guard block.count == 16 else { throw .operationFailed("AES-128 of a \(block.count)-byte block") }
        guard let cipher = EVP_aes_128_ecb() else { throw .unavailable("AES-128-ECB") }
        guard let context = EVP_CIPHER_CTX_new() else { throw .operationFailed("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: 32)
        var written: Int32 = 0
        let ok = key.bytes.withUnsafeBufferPointer { k in
            block.withUnsafeBufferPointer { input in
                output.withUnsafeMutableBufferPointer { out in
                    EVP_EncryptInit_ex(context, cipher, nil, k.baseAddress, nil) == 1
                        && EVP_CIPHER_CTX_set_padding(context, 0) == 1
                        && EVP_EncryptUpdate(context, out.baseAddress, &written, input.baseAddress, 16) == 1
                }
            }
        }
        defer { KeyMaterial.wipe(&output) }
        guard ok, written == 16 else { throw .operationFailed("AES-128: \(drainErrors())") }
        return SecurityKey(unchecked: Array(output.prefix(16)))
    }

    /// AES-CMAC of `message` under `key` (any length of message, the empty one included).
    package static func cmac(key: SecurityKey, message: [UInt8]) throws(SecurityCryptoError) -> SecurityKey {
        guard let mac = EVP_MAC_fetch(nil, "CMAC", nil) else { throw .unavailable("CMAC") }
        defer { EVP_MAC_free(mac) }
        guard let context = EVP_MAC_CTX_new(mac) else { throw .operationFailed("EVP_MAC_CTX_new") }
        defer { EVP_MAC_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: 16)
        var written = 0
        // OSSL_PARAM keeps pointers to its name and value until EVP_MAC_init: static strings.
        let params = [OSSL_PARAM_construct_utf8_string(cString("cipher"), UnsafeMutablePointer(mutating: cString("AES-128-CBC")), 0),
                      OSSL_PARAM_construct_end()]
        let ok = key.bytes.withUnsafeBufferPointer { k in
            params.withUnsafeBufferPointer { p in EVP_MAC_init(context, k.baseAddress, 16, p.baseAddress) == 1 }
        }
        guard ok else { throw .operationFailed("CMAC init: \(drainErrors())") }
        let updated = message.isEmpty || message.withUnsafeBufferPointer { EVP_MAC_update(context, $0.baseAddress, $0.count) == 1 }
        let finished = updated && output.withUnsafeMutableBufferPointer { EVP_MAC_final(context, $0.baseAddress, &written, 16) == 1 }
        guard finished, written == 16 else { throw .operationFailed("CMAC: \(drainErrors())") }
        return SecurityKey(unchecked: output)
    }

    /// A C string that lives as long as the program (libcrypto keeps parameter names and
    /// values by pointer), from a literal.
    static func cString(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// libcrypto's queued errors as one line, emptying the queue.
    static func drainErrors() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? "no detail" : messages.joined(separator: "; ")
    }
}

/// One way to wipe memory that held key material, which the optimiser cannot drop.
package enum KeyMaterial {
    /// `OPENSSL_cleanse` over the array's bytes where they are. Only for arrays nothing else
    /// shares (a local buffer): a shared one would be copied first and the copy wiped.
    package static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { wipe($0) }
    }

    /// `OPENSSL_cleanse` over a buffer the caller owns (a key kept behind a reference).
    package static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        OPENSSL_cleanse(base, buffer.count)
    }
}
