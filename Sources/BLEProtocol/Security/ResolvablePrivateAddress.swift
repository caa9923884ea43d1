import HAL

/// Resolvable private addresses (Vol 6 Part B §1.3.2.2, Vol 3 Part H §2.4.2.3): a random address
/// whose two top bits are 01, whose upper 24 bits (`prand`) are random and whose lower 24 are
/// `ah(IRK, prand)`. Whoever holds the IRK recognises every address the device makes; nobody else
/// can link two of them.
public enum ResolvablePrivateAddress {
    /// A random address with the top bits 01.
    public static func isResolvable(_ address: BLEAddress) -> Bool {
        address.kind == .random && address.bytes[0] >> 6 == 0b01
    }

    /// Whether `address` was made with `irk`. An all-zero IRK resolves nothing: "no IRK" must not
    /// match addresses anyone can compute.
    public static func resolves(_ address: BLEAddress, with irk: SecurityKey) -> Bool {
        guard isResolvable(address), !irk.isZero else { return false }
        let prand = Array(address.bytes[0..<3])
        guard let hash = try? SecurityFunctions.ah(irk: irk, prand: prand) else { return false }
        return hash == Array(address.bytes[3..<6])
    }

    /// The first of `bonds` whose IRK (or identity address) matches `address`.
    public static func resolve(_ address: BLEAddress, among bonds: [Bond]) -> Bond? {
        bonds.first { $0.matches(address) }
    }

    /// A new resolvable private address for `irk` from 22 random bits (`prand`'s top bits 01;
    /// neither all zeros nor all ones in its random part, §1.3.2.2).
    public static func make(irk: SecurityKey, random: inout SecurityRandom) throws(SecurityCryptoError) -> BLEAddress {
        var prand: [UInt8]
        repeat {
            prand = random.bytes(3)
            prand[0] = prand[0] & 0x3F | 0x40
        } while (prand[0] & 0x3F == 0 && prand[1] == 0 && prand[2] == 0) || (prand[0] & 0x3F == 0x3F && prand[1] == 0xFF && prand[2] == 0xFF)
        let hash = try SecurityFunctions.ah(irk: irk, prand: prand)
        guard let address = BLEAddress(bytes: prand + hash, kind: .random) else { throw .operationFailed("making a private address") }
        return address
    }
}
