import HAL

/// The Security Manager's cryptographic toolbox (Core Specification Vol 3 Part H §2.2), each on
/// values written most significant octet first as the specification writes them. Checked in the
/// tests against the specification's own sample data (Appendix D; `c1`/`s1` examples in §2.2.3
/// and §2.2.4).
public enum SecurityFunctions {
    /// `e`: AES-128 of one block.
    public static func e(_ key: SecurityKey, _ plaintext: SecurityKey) throws(SecurityCryptoError) -> SecurityKey {
        try AES128.encrypt(key: key, block: plaintext.bytes)
    }

    /// AES-CMAC of `message` under `key` (RFC 4493).
    public static func cmac(_ key: SecurityKey, _ message: [UInt8]) throws(SecurityCryptoError) -> SecurityKey {
        try AES128.cmac(key: key, message: message)
    }

    /// `c1`, legacy pairing's confirm value generation (§2.2.3):
    /// `e(k, e(k, r XOR p1) XOR p2)` with `p1 = pres || preq || rat' || iat'` and
    /// `p2 = padding || ia || ra`. `preq`/`pres` are the 7-octet commands, code least significant.
    public static func c1(k: SecurityKey, r: SecurityKey, preq: [UInt8], pres: [UInt8],
                          initiator: BLEAddress, responder: BLEAddress) throws(SecurityCryptoError) -> SecurityKey {
        guard preq.count == 7, pres.count == 7 else { throw .operationFailed("c1 with commands of \(preq.count) and \(pres.count) bytes") }
        let p1 = pres + preq + [responder.kind == .random ? 1 : 0, initiator.kind == .random ? 1 : 0]
        let p2 = [UInt8](repeating: 0, count: 4) + initiator.bytes + responder.bytes
        let first = try e(k, xor(r.bytes, p1))
        return try e(k, xor(first.bytes, p2))
    }

    /// `s1`, legacy pairing's STK generation (§2.2.4): `e(k, r1' || r2')` with the least
    /// significant 64 bits of each (STK = s1(TK, Srand, Mrand)).
    public static func s1(k: SecurityKey, r1: SecurityKey, r2: SecurityKey) throws(SecurityCryptoError) -> SecurityKey {
        try e(k, SecurityKey(unchecked: Array(r1.bytes.suffix(8)) + Array(r2.bytes.suffix(8))))
    }

    /// `ah`, the random address hash (§2.2.2): `e(k, padding || r) mod 2^24`, 3 octets.
    public static func ah(irk: SecurityKey, prand: [UInt8]) throws(SecurityCryptoError) -> [UInt8] {
        guard prand.count == 3 else { throw .operationFailed("ah with a \(prand.count)-byte prand") }
        let value = try e(irk, SecurityKey(unchecked: [UInt8](repeating: 0, count: 13) + prand))
        return Array(value.bytes.suffix(3))
    }

    /// `f4`, Secure Connections' confirm value (§2.2.6): `AES-CMAC_X(U || V || Z)`, with U and V
    /// 256-bit X coordinates and Z one octet.
    public static func f4(u: [UInt8], v: [UInt8], x: SecurityKey, z: UInt8) throws(SecurityCryptoError) -> SecurityKey {
        guard u.count == 32, v.count == 32 else { throw .operationFailed("f4 with coordinates of \(u.count) and \(v.count) bytes") }
        return try cmac(x, u + v + [z])
    }

    /// `f5`, Secure Connections' key generation (§2.2.7): MacKey and LTK from the DHKey `w`, the
    /// two nonces and the two 56-bit addresses (type octet first).
    public static func f5(w: [UInt8], n1: SecurityKey, n2: SecurityKey, a1: [UInt8], a2: [UInt8]) throws(SecurityCryptoError) -> (macKey: SecurityKey, ltk: SecurityKey) {
        guard w.count == 32, a1.count == 7, a2.count == 7 else { throw .operationFailed("f5 with inputs of the wrong sizes") }
        var t = try cmac(f5Salt, w)
        // keyID "btle", then the two nonces, the two addresses, and Length = 256 bits.
        let body = [0x62, 0x74, 0x6C, 0x65] + n1.bytes + n2.bytes + a1 + a2 + [0x01, 0x00]
        let macKey = try cmac(t, [0x00] + body)
        let ltk = try cmac(t, [0x01] + body)
        t = .zero
        return (macKey, ltk)
    }

    /// `f6`, Secure Connections' DHKey check value (§2.2.8):
    /// `AES-CMAC_W(N1 || N2 || R || IOcap || A1 || A2)`.
    public static func f6(w: SecurityKey, n1: SecurityKey, n2: SecurityKey, r: SecurityKey, ioCap: [UInt8],
                          a1: [UInt8], a2: [UInt8]) throws(SecurityCryptoError) -> SecurityKey {
        guard ioCap.count == 3, a1.count == 7, a2.count == 7 else { throw .operationFailed("f6 with inputs of the wrong sizes") }
        return try cmac(w, n1.bytes + n2.bytes + r.bytes + ioCap + a1 + a2)
    }

    /// `g2`, Numeric Comparison's value (§2.2.9): `AES-CMAC_X(U || V || Y) mod 2^32`; the user
    /// compares its last six decimal digits.
    public static func g2(u: [UInt8], v: [UInt8], x: SecurityKey, y: SecurityKey) throws(SecurityCryptoError) -> UInt32 {
        guard u.count == 32, v.count == 32 else { throw .operationFailed("g2 with coordinates of \(u.count) and \(v.count) bytes") }
        let mac = try cmac(x, u + v + y.bytes).bytes
        return mac.suffix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// `f5`'s SALT (§2.2.7).
    static let f5Salt = SecurityKey(unchecked: [0x6C, 0x88, 0x83, 0x91, 0xAA, 0xF5, 0xA5, 0x38, 0x60, 0x37, 0x0B, 0xDB, 0x5A, 0x60, 0x83, 0xBE])

    /// A device's address as `f5` and `f6` take it: 56 bits, the address type octet (0 public,
    /// 1 random) most significant.
    public static func address56(_ address: BLEAddress) -> [UInt8] {
        [address.kind == .random ? 0x01 : 0x00] + address.bytes
    }

    private static func xor(_ a: [UInt8], _ b: [UInt8]) -> SecurityKey {
        SecurityKey(unchecked: zip(a, b).map { $0 ^ $1 })
    }
}
