/// Where the Security Manager's random values come from: the system's cryptographic generator
/// (`getrandom`, through Swift's `SystemRandomNumberGenerator`) in the product, a seeded sequence
/// in tests and fuzzing where a run must repeat. P-256 key pairs always come from libcrypto.
public struct SecurityRandom: Sendable {
    private var state: UInt64?

    /// The system's cryptographic generator.
    public static var system: SecurityRandom { SecurityRandom(state: nil) }

    /// A repeatable sequence (SplitMix64) for tests and fuzzing only: predictable by design.
    public static func seeded(_ seed: UInt64) -> SecurityRandom { SecurityRandom(state: seed) }

    private mutating func next() -> UInt64 {
        guard var s = state else {
            var system = SystemRandomNumberGenerator()
            return system.next()
        }
        s &+= 0x9E37_79B9_7F4A_7C15
        state = s
        var z = s
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` random octets.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            let word = next()
            for shift in stride(from: 0, to: 64, by: 8) where out.count < count {
                out.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return out
    }

    /// A random 128-bit value: a nonce, a legacy LTK, an IRK.
    public mutating func key() -> SecurityKey { SecurityKey(unchecked: bytes(16)) }

    /// A passkey, uniform over 000000–999999 (rejection sampling: no bias toward low values).
    public mutating func passkey() -> UInt32 {
        let limit = UInt64.max - UInt64.max % 1_000_000
        while true {
            let value = next()
            if value < limit { return UInt32(value % 1_000_000) }
        }
    }

    /// A random 16-bit value (a legacy EDIV).
    public mutating func u16() -> UInt16 { UInt16(truncatingIfNeeded: next()) }
    /// A random 64-bit value (a legacy Rand).
    public mutating func u64() -> UInt64 { next() }
}
