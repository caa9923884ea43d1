import TestKit

/// Helpers for the Weight Scale / Body Composition tests: byte builders that follow the field
/// definitions of WSS 1.0 §3.2, BCS 1.0 §3.2 and the GATT Specification Supplement
/// ("Weight Measurement", "Body Composition Measurement", "Date Time"), written independently of
/// the parsers so a test does not check the parser against itself.
enum SpecBytes {
    static func u16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

    /// Date Time: year u16, month, day, hours, minutes, seconds.
    static func dateTime(_ year: UInt16, _ month: UInt8, _ day: UInt8, _ h: UInt8, _ m: UInt8, _ s: UInt8) -> [UInt8] {
        u16(year) + [month, day, h, m, s]
    }

    /// 2024-03-15 07:30:00 — E8 07 03 0F 07 1E 00.
    static let morning = dateTime(2024, 3, 15, 7, 30, 0)
}

func approximately(_ a: Double?, _ b: Double, tolerance: Double = 1e-9) -> Bool {
    guard let a else { return false }
    return abs(a - b) <= tolerance
}

