/// Helpers for the packet-layer tests.
enum PacketBytes {
    /// `"04 0E 04 01"` → bytes; spaces are ignored. Bad hex is a test bug, so it traps.
    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.filter { !$0.isWhitespace })
        precondition(digits.count % 2 == 0, "odd number of hex digits in \(text)")
        return stride(from: 0, to: digits.count, by: 2).map { index in
            guard let byte = UInt8(String(digits[index...index + 1]), radix: 16) else {
                preconditionFailure("bad hex in \(text)")
            }
            return byte
        }
    }

    static func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }
}

/// SplitMix64: a tiny seeded generator so "random" splits are the same on every run.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
