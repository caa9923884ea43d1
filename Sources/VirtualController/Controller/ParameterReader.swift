import HAL

/// Reads a command's parameters front to back, little-endian. Every read is checked, so a host
/// that sends a command with the wrong length gets Invalid HCI Command Parameters, never a crash.
struct ParameterReader {
    struct Short: Error {}

    private let bytes: [UInt8]
    private(set) var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var remaining: Int { bytes.count - offset }

    mutating func u8() throws(Short) -> UInt8 {
        guard remaining >= 1 else { throw Short() }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u16() throws(Short) -> UInt16 {
        guard remaining >= 2 else { throw Short() }
        defer { offset += 2 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    mutating func u64() throws(Short) -> UInt64 {
        guard remaining >= 8 else { throw Short() }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        offset += 8
        return value
    }

    mutating func bytes(_ count: Int) throws(Short) -> [UInt8] {
        guard count >= 0, remaining >= count else { throw Short() }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// An address type byte (0 public, 1 random, 2/3 their identity forms) and six address bytes.
    mutating func address() throws(Short) -> (type: UInt8, address: BLEAddress) {
        let type = try u8()
        let raw = try bytes(6)
        guard let address = BLEAddress(littleEndian: raw, kind: type & 0x01 == 0 ? .public : .random) else { throw Short() }
        return (type, address)
    }
}

/// Little-endian writers for the events the controller builds.
enum LE {
    static func u16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    static func u32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) } }
    static func u64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) } }
}
