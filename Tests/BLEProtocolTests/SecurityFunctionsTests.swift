import BLEProtocol
import HAL
import Testing

/// The Security Manager's functions against the Core Specification's own sample data: Vol 3
/// Part H Appendix D (D.1 AES-CMAC, which is RFC 4493's; D.2 f4, D.3 f5, D.4 f6, D.5 g2, D.7 ah),
/// the `c1` and `s1` examples of §2.2.3 and §2.2.4, and the P-256 sample data of Vol 2 Part G
/// §7.1.2 (whose private key A is also Secure Connections' debug key). Values are written most
/// significant octet first, as the specification prints them.
@Suite struct SecurityFunctionsTests {
    static func key(_ hex: String) -> SecurityKey {
        guard let bytes = Hex.bytes(hex.filter { $0 != " " }), let key = SecurityKey(bytes: bytes) else {
            preconditionFailure("not 16 bytes of hex: \(hex)")
        }
        return key
    }

    static func bytes(_ hex: String) -> [UInt8] {
        guard let bytes = Hex.bytes(hex.filter { $0 != " " }) else { preconditionFailure("not hex: \(hex)") }
        return bytes
    }

    // Vol 2 Part G §7.1.2: the two sample key pairs and their DHKey.
    static let privateA = bytes("3f49f6d4 a3c55f38 74c9b3e3 d2103f50 4aff607b eb40b799 5899b8a6 cd3c1abd")
    static let privateB = bytes("55188b3d 32f6bb9a 900afcfb eed4e72a 59cb9ac2 f19d7cfb 6b4fdd49 f47fc5fd")
    static let publicAx = bytes("20b003d2 f297be2c 5e2c83a7 e9f9a5b9 eff49111 acf4fddb cc030148 0e359de6")
    static let publicAy = bytes("dc809c49 652aeb6d 63329abf 5a52155c 766345c2 8fed3024 741c8ed0 1589d28b")
    static let publicBx = bytes("1ea1f0f0 1faf1d96 09592284 f19e4c00 47b58afd 8615a69f 559077b2 2faaa190")
    static let publicBy = bytes("4c55f33e 429dad37 7356703a 9ab85160 472d1130 e28e3676 5f89aff9 15b1214a")
    static let dhKey = bytes("ec0234a3 57c8ad05 341010a6 0a397d9b 99796b13 b4f866f1 868d34f3 73bfa698")

    @Test func aesCMACMatchesD1() throws {
        let k = Self.key("2b7e1516 28aed2a6 abf71588 09cf4f3c")
        let m = Self.bytes("6bc1bee2 2e409f96 e93d7e11 7393172a ae2d8a57 1e03ac9c 9eb76fac 45af8e51 30c81c46 a35ce411 e5fbc119 1a0a52ef f69f2445 df4f9b17 ad2b417b e66c3710")
        #expect(try SecurityFunctions.cmac(k, []) == Self.key("bb1d6929 e9593728 7fa37d12 9b756746"))
        #expect(try SecurityFunctions.cmac(k, Array(m.prefix(16))) == Self.key("070a16b4 6b4d4144 f79bdd9d d04a287c"))
        #expect(try SecurityFunctions.cmac(k, Array(m.prefix(40))) == Self.key("dfa66747 de9ae630 30ca3261 1497c827"))
        #expect(try SecurityFunctions.cmac(k, m) == Self.key("51f0bebf 7e3b9d92 fc497417 79363cfe"))
    }

    @Test func c1MatchesTheSpecificationsExample() throws {
        // §2.2.3: k = 0, iat = 1 (random), rat = 0 (public).
        let initiator = try #require(BLEAddress(string: "A1:A2:A3:A4:A5:A6", defaultKind: .random))
        let responder = try #require(BLEAddress(string: "B1:B2:B3:B4:B5:B6", defaultKind: .public))
        let confirm = try SecurityFunctions.c1(k: .zero, r: Self.key("5783D52156AD6F0E6388274EC6702EE0"),
                                               preq: Self.bytes("07071000000101"), pres: Self.bytes("05000800000302"),
                                               initiator: initiator, responder: responder)
        #expect(confirm == Self.key("1e1e3fef878988ead2a74dc5bef13b86"), "\(confirm.revealedHex)")
    }

    @Test func s1MatchesTheSpecificationsExample() throws {
        let stk = try SecurityFunctions.s1(k: .zero, r1: Self.key("000F0E0D0C0B0A091122334455667788"),
                                           r2: Self.key("010203040506070899AABBCCDDEEFF00"))
        #expect(stk == Self.key("9a1fe1f0e8b0f49b5b4216ae796da062"), "\(stk.revealedHex)")
    }

    @Test func f4MatchesD2() throws {
        let value = try SecurityFunctions.f4(u: Self.publicAx, v: Self.privateB, x: Self.key("d5cb8454 d177733e ffffb2ec 712baeab"), z: 0)
        #expect(value == Self.key("f2c916f1 07a9bd1c f1eda1be a974872d"), "\(value.revealedHex)")
    }

    @Test func f5MatchesD3() throws {
        let keys = try SecurityFunctions.f5(w: Self.dhKey, n1: Self.key("d5cb8454 d177733e ffffb2ec 712baeab"),
                                            n2: Self.key("a6e8e7cc 25a75f6e 216583f7 ff3dc4cf"),
                                            a1: Self.bytes("00561237 37bfce"), a2: Self.bytes("00a71370 2dcfc1"))
        #expect(keys.macKey == Self.key("2965f176 a1084a02 fd3f6a20 ce636e20"), "\(keys.macKey.revealedHex)")
        #expect(keys.ltk == Self.key("69867911 69d7cd23 980522b5 94750a38"), "\(keys.ltk.revealedHex)")
    }

    @Test func f6MatchesD4() throws {
        let value = try SecurityFunctions.f6(w: Self.key("2965f176 a1084a02 fd3f6a20 ce636e20"),
                                             n1: Self.key("d5cb8454 d177733e ffffb2ec 712baeab"),
                                             n2: Self.key("a6e8e7cc 25a75f6e 216583f7 ff3dc4cf"),
                                             r: Self.key("12a3343b b453bb54 08da42d2 0c2d0fc8"), ioCap: Self.bytes("010102"),
                                             a1: Self.bytes("00561237 37bfce"), a2: Self.bytes("00a71370 2dcfc1"))
        #expect(value == Self.key("e3c47398 9cd0e8c5 d26c0b09 da958f61"), "\(value.revealedHex)")
    }

    @Test func g2MatchesD5() throws {
        let value = try SecurityFunctions.g2(u: Self.publicAx, v: Self.privateB, x: Self.key("d5cb8454 d177733e ffffb2ec 712baeab"),
                                             y: Self.key("a6e8e7cc 25a75f6e 216583f7 ff3dc4cf"))
        #expect(value == 0x2f9e_d5ba)
        // What the user compares: the last six decimal digits.
        #expect(value % 1_000_000 == 0x2f9e_d5ba % 1_000_000)
    }

    @Test func ahMatchesD7() throws {
        #expect(try SecurityFunctions.ah(irk: Self.key("ec0234a3 57c8ad05 341010a6 0a397d9b"), prand: Self.bytes("708194")) == Self.bytes("0dfbaa"))
    }

    @Test func ecdhMatchesTheP256SampleData() throws {
        let publicA = try #require(P256PublicKey(x: Self.publicAx, y: Self.publicAy))
        let publicB = try #require(P256PublicKey(x: Self.publicBx, y: Self.publicBy))
        let a = try P256KeyPair(privateKey: Self.privateA, publicKey: publicA)
        let b = try P256KeyPair(privateKey: Self.privateB, publicKey: publicB)
        #expect(try a.sharedSecret(with: publicB) == Self.dhKey)
        #expect(try b.sharedSecret(with: publicA) == Self.dhKey)
    }

    @Test func freshKeyPairsAgree() throws {
        let a = try P256KeyPair()
        let b = try P256KeyPair()
        #expect(a.publicKey != b.publicKey)
        #expect(try a.sharedSecret(with: b.publicKey) == b.sharedSecret(with: a.publicKey))
    }

    /// The invalid-curve attack: points off P-256 (one bit of Y changed, Y zero as in the
    /// fixed-coordinate attack, coordinates at or above the field prime, the origin) are refused
    /// before any arithmetic.
    @Test func keysOffTheCurveAreRefused() throws {
        let pair = try P256KeyPair()
        let good = pair.publicKey
        var flipped = good.y
        flipped[31] ^= 0x01
        let prime = Self.bytes("ffffffff 00000001 00000000 00000000 00000000 ffffffff ffffffff ffffffff")
        let candidates: [P256PublicKey?] = [
            P256PublicKey(x: good.x, y: flipped),
            P256PublicKey(x: good.x, y: [UInt8](repeating: 0, count: 32)),
            P256PublicKey(x: [UInt8](repeating: 0, count: 32), y: [UInt8](repeating: 0, count: 32)),
            P256PublicKey(x: prime, y: good.y),
            P256PublicKey(x: [UInt8](repeating: 0xFF, count: 32), y: [UInt8](repeating: 0xFF, count: 32)),
        ]
        #expect(P256KeyPair.isValid(good))
        for candidate in candidates {
            let bad = try #require(candidate)
            #expect(!P256KeyPair.isValid(bad))
            #expect(throws: SecurityCryptoError.publicKeyNotOnCurve) { try pair.sharedSecret(with: bad) }
        }
    }

    @Test func keyDescriptionsHideTheValue() {
        let key = Self.key("2b7e1516 28aed2a6 abf71588 09cf4f3c")
        #expect("\(key)" == "SecurityKey(16 bytes)")
        #expect(String(reflecting: key) == "SecurityKey(16 bytes)")
        #expect(!"\(EncryptionKey(ltk: key, ediv: 1, rand: 2))".contains("2b7e"))
    }

    @Test func maskingKeepsTheLeastSignificantOctets() {
        let key = Self.key("00112233 44556677 8899aabb ccddeeff")
        #expect(key.masked(toSize: 7) == Self.key("00000000 00000000 0099aabb ccddeeff"))
        #expect(key.masked(toSize: 16) == key)
    }
}
