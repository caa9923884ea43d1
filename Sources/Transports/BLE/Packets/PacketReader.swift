import HAL

/// Reads little-endian fields front to back, checking every length against what remains, so a
/// hostile length can neither crash a parser nor make it allocate more than it was given.
struct PacketReader {
    private let bytes: [UInt8]
    private(set) var offset: Int = 0
    /// Names the packet in error messages, e.g. "LE Connection Complete".
    let context: String

    init(_ bytes: [UInt8], context: String) {
        self.bytes = bytes
        self.context = context
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset >= bytes.count }

    mutating func require(_ count: Int, for field: String) throws(HCIParseError) {
        guard count >= 0, remaining >= count else {
            throw .truncated("\(context): \(field) needs \(count) bytes, \(max(remaining, 0)) left")
        }
    }

    mutating func u8(_ field: String) throws(HCIParseError) -> UInt8 {
        try require(1, for: field)
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func i8(_ field: String) throws(HCIParseError) -> Int8 {
        Int8(bitPattern: try u8(field))
    }

    mutating func u16(_ field: String) throws(HCIParseError) -> UInt16 {
        try require(2, for: field)
        defer { offset += 2 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    mutating func u64(_ field: String) throws(HCIParseError) -> UInt64 {
        try require(8, for: field)
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        offset += 8
        return value
    }

    mutating func bytes(_ count: Int, _ field: String) throws(HCIParseError) -> [UInt8] {
        try require(count, for: field)
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return offset < bytes.count ? Array(bytes[offset...]) : []
    }

    mutating func address(kind: BLEAddress.Kind, _ field: String) throws(HCIParseError) -> BLEAddress {
        let raw = try bytes(6, field)
        guard let address = BLEAddress(littleEndian: raw, kind: kind) else {
            throw .malformed("\(context): \(field) is not a 6-byte address")
        }
        return address
    }

    mutating func uuid(byteCount: Int, _ field: String) throws(HCIParseError) -> BluetoothUUID {
        let raw = try bytes(byteCount, field)
        guard let uuid = BluetoothUUID(littleEndian: raw) else {
            throw .malformed("\(context): \(field) of \(byteCount) bytes is not a UUID")
        }
        return uuid
    }

    /// For layouts with nothing after the last field: leftovers mean the length was wrong.
    func expectEnd() throws(HCIParseError) {
        guard isAtEnd else { throw .malformed("\(context): \(remaining) unexpected trailing bytes") }
    }
}
