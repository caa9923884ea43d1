import HAL

/// The reading a broadcast-only QN scale puts in its manufacturer data (company 0xFFFF, the
/// bytes after the company ID). From oliexdev/openScale `…/bluetooth/scales/QNHandlerBroadcast.kt`:
///   0–1: `AA BB`;  2–7: the scale's address;  15: status, bit 5 (0x20) stable;
///   17–18: weight, little-endian, hundredths of a kilogram;  at least 19 bytes.
/// QNHandlerBroadcast.kt ignores weights outside 0.5–300 kg as implausible; we do the same, so a
/// frame of an empty scale (0) is no reading rather than a stable 0 kg.
public struct QNBroadcastFrame: Hashable, Sendable {
    /// Company ID the reading is filed under in the manufacturer data (0xFFFF, not a registered vendor).
    public static let companyID: UInt16 = 0xFFFF
    /// The two bytes that open every QN broadcast frame; the registry matches on them.
    public static let magic: [UInt8] = [0xAA, 0xBB]
    /// Shortest frame that reaches the weight at bytes 17–18.
    public static let minimumLength = 19
    /// Weights in kg outside this range are ignored as implausible, as QNHandlerBroadcast.kt does.
    public static let plausible = 0.5...300.0

    /// Weight as sent at bytes 17–18, in 0.01 kg.
    public var rawWeight: UInt16
    /// Bit 5 of status byte 15: the weight has settled.
    public var stable: Bool

    /// Parses the manufacturer data after the company ID; nil unless it starts `AA BB` and has 19 bytes or more.
    public init?(manufacturerData bytes: [UInt8]) {
        guard bytes.count >= Self.minimumLength, bytes.starts(with: Self.magic) else { return nil }
        rawWeight = UInt16(bytes[17]) | UInt16(bytes[18]) << 8
        stable = bytes[15] & 0x20 != 0
    }

    /// The weight in kilograms (raw / 100), before the plausibility check.
    public var kilograms: Double { Double(rawWeight) / 100 }

    /// The HAL reading; nil when the weight is outside `plausible` (an empty scale sends 0).
    public var reading: WeightReading? {
        guard Self.plausible.contains(kilograms) else { return nil }
        return WeightReading(kilograms: kilograms, stable: stable)
    }
}
