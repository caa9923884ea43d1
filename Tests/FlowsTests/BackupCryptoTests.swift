import TestKit
import Flows
import Testing

@Suite("BackupCrypto over libcrypto")
struct BackupCryptoTests {
    @Test func sha256KnownAnswers() throws {
        #expect(hexString(try BackupCrypto.sha256(Array("abc".utf8)))
            == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hexString(try BackupCrypto.sha256([]))
            == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func hmacSHA256KnownAnswer() throws {
        // RFC 4231 test case 2.
        let mac = try BackupCrypto.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(hexString(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func scryptRFC7914Vectors() throws {
        let empty = try BackupCrypto.scrypt(password: [], salt: [], logN: 4, r: 1, p: 1, length: 64)
        #expect(hexString(empty) == "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442"
            + "fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906")
        let nacl = try BackupCrypto.scrypt(
            password: Array("password".utf8), salt: Array("NaCl".utf8), logN: 10, r: 8, p: 16, length: 64)
        #expect(hexString(nacl) == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
            + "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640")
    }

    @Test("scrypt above OpenSSL's default 32 MiB limit (logN 15, r 8) is allowed")
    func scryptAboveDefaultMemoryLimit() throws {
        // 128 · 8 · 2^15 = 32 MiB plus scrypt's extra blocks: refused unless maxmem_bytes is raised.
        let key = try BackupCrypto.scrypt(
            password: Array("pleaseletmein".utf8), salt: Array("SodiumChloride".utf8), logN: 15, r: 8, p: 1, length: 32)
        #expect(key.count == 32)
    }

    @Test func scryptRejectsNonsenseWithoutCrashing() {
        #expect(throws: BackupCryptoError.self) {
            try BackupCrypto.scrypt(password: [], salt: [], logN: 0, r: 8, p: 1, length: 32)
        }
        #expect(throws: BackupCryptoError.self) {
            try BackupCrypto.scrypt(password: [], salt: [], logN: 10, r: 0, p: 1, length: 32)
        }
        #expect(throws: BackupCryptoError.self) {
            try BackupCrypto.scrypt(password: [], salt: [], logN: 10, r: 8, p: 1, length: 0)
        }
        // N ≥ 2^(16·r) is invalid scrypt; OpenSSL refuses it and we report rather than trap.
        #expect(throws: BackupCryptoError.self) {
            try BackupCrypto.scrypt(password: [], salt: [], logN: 16, r: 1, p: 1, length: 32)
        }
    }

    @Test func aesGCMKnownAnswer() throws {
        // NIST GCM test case 13 (256-bit zero key, zero IV, no data) and 14 (one zero block).
        let key = [UInt8](repeating: 0, count: 32)
        let iv = [UInt8](repeating: 0, count: 12)
        let empty = try BackupCrypto.aes256GCMSeal(key: key, nonce: iv, plaintext: [], aad: [])
        #expect(empty.ciphertext.isEmpty)
        #expect(hexString(empty.tag) == "530f8afbc74536b9a963b4f1c4cb738b")
        let block = try BackupCrypto.aes256GCMSeal(key: key, nonce: iv, plaintext: [UInt8](repeating: 0, count: 16), aad: [])
        #expect(hexString(block.ciphertext) == "cea7403d4d606b6e074ec5d3baf39d18")
        #expect(hexString(block.tag) == "d0d1c8a799996bf0265b98b5d48ab919")
    }

    @Test func aesGCMRoundTripAndTamperDetection() throws {
        let key = try BackupCrypto.randomBytes(32)
        let nonce = try BackupCrypto.randomBytes(12)
        let plaintext = Array("attack at dawn".utf8)
        let aad = Array("header".utf8)
        let sealed = try BackupCrypto.aes256GCMSeal(key: key, nonce: nonce, plaintext: plaintext, aad: aad)
        #expect(try BackupCrypto.aes256GCMOpen(key: key, nonce: nonce, ciphertext: sealed.ciphertext, tag: sealed.tag, aad: aad)
            == plaintext)

        var badCiphertext = sealed.ciphertext
        badCiphertext[0] ^= 1
        #expect(throws: BackupCryptoError.authenticationFailed) {
            try BackupCrypto.aes256GCMOpen(key: key, nonce: nonce, ciphertext: badCiphertext, tag: sealed.tag, aad: aad)
        }
        #expect(throws: BackupCryptoError.authenticationFailed) {
            try BackupCrypto.aes256GCMOpen(key: key, nonce: nonce, ciphertext: sealed.ciphertext, tag: sealed.tag,
                                           aad: Array("Header".utf8))
        }
        var badTag = sealed.tag
        badTag[15] ^= 0x80
        #expect(throws: BackupCryptoError.authenticationFailed) {
            try BackupCrypto.aes256GCMOpen(key: key, nonce: nonce, ciphertext: sealed.ciphertext, tag: badTag, aad: aad)
        }
    }

    @Test func aesGCMRejectsBadSizes() {
        #expect(throws: BackupCryptoError.self) {
            try BackupCrypto.aes256GCMSeal(key: [1, 2, 3], nonce: [UInt8](repeating: 0, count: 12), plaintext: [], aad: [])
        }
        #expect(throws: BackupCryptoError.self) {
            try BackupCrypto.aes256GCMOpen(key: [UInt8](repeating: 0, count: 32), nonce: [UInt8](repeating: 0, count: 12),
                                           ciphertext: [], tag: [1], aad: [])
        }
    }

    @Test func randomBytesAndConstantTimeEquality() throws {
        let a = try BackupCrypto.randomBytes(32)
        let b = try BackupCrypto.randomBytes(32)
        #expect(a.count == 32)
        #expect(a != b)
        #expect(try BackupCrypto.randomBytes(0).isEmpty)
        #expect(BackupCrypto.constantTimeEqual(a, a))
        #expect(!BackupCrypto.constantTimeEqual(a, b))
        #expect(!BackupCrypto.constantTimeEqual([1, 2], [1, 2, 3]))
        #expect(BackupCrypto.constantTimeEqual([], []))
    }
}
