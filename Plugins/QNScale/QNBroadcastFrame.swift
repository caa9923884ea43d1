import HAL

/// The reading a broadcast-only QN scale puts in its manufacturer data (company 0xFFFF, the
/// bytes after the company ID). From oliexdev/openScale `…/bluetooth/scales/QNHandlerBroadcast.kt`:
///   0–1: `AA BB`;  2–7: the scale's address;  15: status, bit 5 (0x20) stable;
///   17–18: weight, little-endian, hundredths of a kilogram;  at least 19 bytes.
/// QNHandlerBroadcast.kt ignores weights outside 0.5–300 kg as implausible; we do the same, so a
/// frame of an empty scale (0) is no reading rather than a stable 0 kg.
public struct QNBroadcastFrame: Hashable, Sendable {
    public static let companyID: UInt16 = 0xFFFF
    public static let magic: [UInt8] = [0xAA, 0xBB]
    public static let minimumLength = 19
    public static let plausible = 0.5...300.0

    public var rawWeight: UInt16
    public var stable: Bool

    public init?(manufacturerData bytes: [UInt8]) {
        guard bytes.count >= Self.minimumLength, bytes.starts(with: Self.magic) else { return nil }
        rawWeight = UInt16(bytes[17]) | UInt16(bytes[18]) << 8
        stable = bytes[15] & 0x20 != 0
    }

    public var kilograms: Double { Double(rawWeight) / 100 }

    public var reading: WeightReading? {
        guard Self.plausible.contains(kilograms) else { return nil }
        return WeightReading(kilograms: kilograms, stable: stable)
    }
}
