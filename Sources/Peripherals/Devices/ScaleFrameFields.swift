/// The field encodings the scale families' frames share: fixed-point figures and big-endian
/// integers (most vendor protocols here are big-endian; HAL's `LittleEndian` covers the rest).
enum ScaleFrameFields {
    /// `value ÷ resolution`, rounded, within `0…limit` (a figure that is not a number, or none,
    /// counts as 0): how every family puts a weight or a percentage in a fixed-point field, so an
    /// out-of-range figure saturates instead of wrapping.
    static func fixed(_ value: Double?, per resolution: Double, limit: UInt16 = .max) -> UInt16 {
        guard let value, value.isFinite, resolution > 0 else { return 0 }
        let raw = (value / resolution).rounded()
        return raw <= 0 ? 0 : raw >= Double(limit) ? limit : UInt16(raw)
    }

    static func bigEndian(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    static func bigEndianU16(_ bytes: [UInt8], at offset: Int) -> UInt16? {
        guard offset >= 0, offset + 1 < bytes.count else { return nil }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    static func bigEndianU32(_ bytes: [UInt8], at offset: Int) -> UInt32? {
        guard offset >= 0, offset + 3 < bytes.count else { return nil }
        return bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func littleEndianU32(_ bytes: [UInt8], at offset: Int) -> UInt32? {
        guard offset >= 0, offset + 3 < bytes.count else { return nil }
        return (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * UInt32($1)) }
    }
}
