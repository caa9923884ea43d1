import TestKit

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

