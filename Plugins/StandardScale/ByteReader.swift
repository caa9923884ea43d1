/// Reads little-endian fields front to back; running short is a typed error, never a trap.
struct ByteReader {
    private let bytes: [UInt8]
    private(set) var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var remaining: Int { bytes.count - offset }

    mutating func uint8(_ field: String) throws(StandardScaleParseError) -> UInt8 {
        try need(1, field)
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint16(_ field: String) throws(StandardScaleParseError) -> UInt16 {
        try need(2, field)
        defer { offset += 2 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    mutating func uint32(_ field: String) throws(StandardScaleParseError) -> UInt32 {
        try need(4, field)
        defer { offset += 4 }
        return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8
            | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }

    /// The 7-byte Date Time characteristic layout (GATT Specification Supplement, "Date Time").
    mutating func dateTime(_ field: String) throws(StandardScaleParseError) -> BluetoothDateTime {
        try need(7, field)
        let year = try uint16(field)
        return BluetoothDateTime(year: year, month: try uint8(field), day: try uint8(field),
                                 hours: try uint8(field), minutes: try uint8(field), seconds: try uint8(field))
    }

    private func need(_ count: Int, _ field: String) throws(StandardScaleParseError) {
        guard remaining >= count else {
            throw .truncated(field: field, needed: count, available: max(0, remaining))
        }
    }
}
