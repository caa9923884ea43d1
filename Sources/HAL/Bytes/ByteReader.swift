/// Reads little-endian fields front to back, checking every length against what remains, so a
/// hostile length can neither crash a parser nor make it allocate more than it was given.
///
/// One reader for every layer (HCI and ATT packets, a controller's command parameters, scale
/// measurements): each says, through `shortfall`, which of its own typed errors running short is,
/// so parsers keep throwing the error their callers know (`HCIParseError`,
/// `StandardScaleParseError`, …) and name the packet and field that was cut short.
public struct ByteReader<Failure: Error> {
    /// Running short: the packet (`context`), the field, the bytes it needs and the bytes left.
    public typealias Shortfall = (_ context: String, _ field: String, _ needed: Int, _ available: Int) -> Failure

    private let bytes: [UInt8]
    /// How many bytes have been read so far, for parsers that need to know where they are.
    public private(set) var offset = 0
    /// Names the packet in error messages, e.g. "LE Connection Complete".
    public let context: String
    private let shortfall: Shortfall

    /// Starts reading at the first byte; `shortfall` builds the caller's own error when a field runs short.
    public init(_ bytes: [UInt8], context: String = "", shortfall: @escaping Shortfall) {
        self.bytes = bytes
        self.context = context
        self.shortfall = shortfall
    }

    /// Bytes not read yet.
    public var remaining: Int { bytes.count - offset }
    /// True when every byte has been read, so a parser can reject trailing garbage.
    public var isAtEnd: Bool { offset >= bytes.count }

    /// Throws the shortfall error unless `count` more bytes remain; reads nothing.
    public func require(_ count: Int, for field: String) throws(Failure) {
        guard count >= 0, remaining >= count else { throw shortfall(context, field, count, max(remaining, 0)) }
    }

    /// Reads one byte; `field` names it in the error if none is left.
    public mutating func u8(_ field: String = "") throws(Failure) -> UInt8 {
        try require(1, for: field)
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Reads one byte as a signed value (two's complement).
    public mutating func i8(_ field: String = "") throws(Failure) -> Int8 {
        Int8(bitPattern: try u8(field))
    }

    /// Reads a little-endian 16-bit value.
    public mutating func u16(_ field: String = "") throws(Failure) -> UInt16 {
        try require(2, for: field)
        defer { offset += 2 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    /// Reads a little-endian 32-bit value.
    public mutating func u32(_ field: String = "") throws(Failure) -> UInt32 {
        try require(4, for: field)
        defer { offset += 4 }
        return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }

    /// Reads a little-endian 64-bit value.
    public mutating func u64(_ field: String = "") throws(Failure) -> UInt64 {
        try require(8, for: field)
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        offset += 8
        return value
    }

    /// Reads `count` bytes as they are; a negative or too-large count throws rather than traps.
    public mutating func bytes(_ count: Int, _ field: String = "") throws(Failure) -> [UInt8] {
        try require(count, for: field)
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// Everything not read yet (nothing when all was).
    public mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return offset < bytes.count ? Array(bytes[offset...]) : []
    }
}

/// Little-endian encodings of integers, for the writers beside the readers.
public enum LittleEndian {
    /// Two bytes, low byte first.
    public static func u16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    /// Four bytes, low byte first.
    public static func u32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) } }
    /// Eight bytes, low byte first.
    public static func u64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) } }
}
