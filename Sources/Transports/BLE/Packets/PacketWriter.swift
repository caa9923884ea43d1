/// Little-endian writers for the encoders (named so they cannot collide with other helpers in the module).
enum PacketWriter {
    static func u16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

    static func u64(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// `4F` / `200C`: upper-case hex without prefix, for names and messages.
    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }

    static func hex(_ word: UInt16) -> String { hex(UInt8(word >> 8)) + hex(UInt8(word & 0xFF)) }
}
