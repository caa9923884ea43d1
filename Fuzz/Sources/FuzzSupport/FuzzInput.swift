/// The fuzzer's bytes, taken front to back: a harness cuts one input into the several values a
/// parser sees (packets of a stream, notifications of a link) without ever running past the end.
public struct FuzzInput {
    public let bytes: [UInt8]
    public private(set) var offset = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var isAtEnd: Bool { offset >= bytes.count }
    public var remaining: Int { bytes.count - offset }

    /// The next byte, or 0 once the input is used up.
    public mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A little-endian u16, zero-filled past the end.
    public mutating func u16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }

    /// A little-endian u32, zero-filled past the end.
    public mutating func u32() -> UInt32 { UInt32(u16()) | UInt32(u16()) << 16 }

    /// Up to `count` bytes (fewer at the end).
    public mutating func take(_ count: Int) -> [UInt8] {
        let end = offset + min(max(count, 0), remaining)
        defer { offset = end }
        return Array(bytes[offset..<end])
    }

    /// A chunk whose length is the next byte: the usual way a harness cuts a stream into values.
    public mutating func chunk() -> [UInt8] { take(Int(byte())) }

    /// Everything left.
    public mutating func rest() -> [UInt8] { take(remaining) }
}
