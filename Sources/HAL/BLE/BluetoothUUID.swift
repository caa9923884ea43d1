/// A Bluetooth UUID kept in its shortest form, so a 16-bit UUID from an advertisement and the same
/// UUID spelled out in 128 bits compare equal.
public struct BluetoothUUID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 128-bit value, most significant byte first (the canonical text order).
    public let bytes: [UInt8]

    /// Bluetooth Base UUID `00000000-0000-1000-8000-00805F9B34FB`.
    static let baseTail: [UInt8] = [0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB]

    /// A SIG UUID from its 16-bit alias (`0x181D`), placed on the Bluetooth base UUID.
    public init(_ short: UInt16) { self.init(uint32: UInt32(short)) }

    /// A SIG UUID from its 32-bit alias, placed on the Bluetooth base UUID.
    public init(uint32 value: UInt32) {
        bytes = [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
            + Self.baseTail
    }

    /// A 128-bit UUID from its two halves as written (`0x7B9E0001_3C2A4F1B`, `0x9E6D5A4C_3B2A1F00`):
    /// constants in code without a string to parse, so without a failure to handle.
    public init(high: UInt64, low: UInt64) {
        bytes = (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64($0))) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64($0))) }
    }

    /// From 16 bytes in big-endian (text) order.
    public init?(bigEndianBytes: [UInt8]) {
        guard bigEndianBytes.count == 16 else { return nil }
        bytes = bigEndianBytes
    }

    /// From the little-endian bytes found on the air: 2, 4 or 16 of them.
    public init?(littleEndian raw: some Collection<UInt8>) {
        let le = Array(raw)
        switch le.count {
        case 2: self.init(UInt16(le[0]) | UInt16(le[1]) << 8)
        case 4: self.init(uint32: UInt32(le[0]) | UInt32(le[1]) << 8 | UInt32(le[2]) << 16 | UInt32(le[3]) << 24)
        case 16: self.init(bigEndianBytes: Array(le.reversed()))
        default: return nil
        }
    }

    /// Parses `181D`, `0000181D`, or the canonical 36-character form; case-insensitive.
    public init?(string: String) {
        let hex = string.filter { $0 != "-" }
        guard hex.count == 4 || hex.count == 8 || hex.count == 32,
              string.count == hex.count || string.count == 36 else { return nil }
        // Hex digits only: `UInt8(_:radix:)` would also take a sign ("+18D").
        guard let out = Hex.bytes(hex) else { return nil }
        switch out.count {
        case 2: self.init(UInt16(out[0]) << 8 | UInt16(out[1]))
        case 4: self.init(uint32: UInt32(out[0]) << 24 | UInt32(out[1]) << 16 | UInt32(out[2]) << 8 | UInt32(out[3]))
        default: self.init(bigEndianBytes: out)
        }
    }

    /// The 16-bit alias when this UUID is one, e.g. 0x181D.
    public var shortValue: UInt16? {
        guard bytes[0] == 0, bytes[1] == 0, Array(bytes[4...]) == Self.baseTail else { return nil }
        return UInt16(bytes[2]) << 8 | UInt16(bytes[3])
    }

    /// Little-endian bytes for the air: 2 when a 16-bit alias exists, else 16.
    public var littleEndianBytes: [UInt8] {
        if let short = shortValue { return [UInt8(short & 0xFF), UInt8(short >> 8)] }
        return bytes.reversed()
    }

    /// The contract's spelling: `181D` for 16-bit UUIDs, else canonical upper-case form.
    public var description: String {
        if let short = shortValue { return Hex.word(short) }
        let h = bytes.map { Hex.byte($0) }
        return [h[0..<4], h[4..<6], h[6..<8], h[8..<10], h[10..<16]].map { $0.joined() }.joined(separator: "-")
    }

    /// Orders by the 128-bit value, so lists of UUIDs print in a stable order.
    public static func < (lhs: BluetoothUUID, rhs: BluetoothUUID) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}

