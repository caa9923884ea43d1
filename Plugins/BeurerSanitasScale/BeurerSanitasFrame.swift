import HAL

/// The legacy Beurer / Sanitas / SilverCrest protocol (Beurer BF700, BF710, BF800, Runtastic
/// Libra; Sanitas SBF70, SilverCrest SBF75, Crane) on one characteristic, FFE1 of service FFE0,
/// written and notified.
///
/// Facts, from oliexdev/openScale `android_app/app/src/main/java/com/health/openscale/core/
/// bluetooth/scales/BeurerSanitasHandler.kt` (the older `…/bluetooth/BluetoothBeurerSanitas.java`
/// has the same state machine):
/// - Every command starts with the model's start byte: 0xF7 for BF700 / BF800 / Runtastic Libra,
///   0xE7 for BF710 and the Sanitas family. "Alternative" start bytes keep the high nibble and put
///   6 (init), 9 (set time) or 10 (disconnect) in the low one.
/// - The opening: init `alt(6) 01`, answered by a value starting `alt(6)`; the time `alt(9)
///   unix-seconds(BE u32)`, not answered; the scale status `start 4F` + an 8-byte user ID (zeros
///   for none), answered by the acknowledgement `start F0 4F …` with the battery at 4 and the
///   unit at 7 (1 kg, 2 lb, 4 st); when the unit is not the one wanted, `start 4D unit`,
///   acknowledged `start F0 4D 00`. (openScale always sets the user's unit; here the scale is
///   left as it is unless a unit is asked for, since its weights are in 50 g units either way.)
/// - Weight-only measurements `start 58 stable weight(BE u16, units of 50 g)`, where stable is 0.
///
/// Not done: openScale goes on to list the scale's users, create one and ask for a measurement
/// for that user (`0x59` frames with body composition), and reads and deletes saved
/// measurements. A bench tool has no user to create on someone's scale, so only the weight-only
/// frames the scale sends while anyone stands on it are read.
public enum BeurerSanitasFrame: Hashable, Sendable {
    /// A value starting `alt(6)`: the scale answered the init command.
    case initAcknowledged
    /// `start F0 4F …`: battery (byte 4) and the unit the scale shows (byte 7: 1 kg, 2 lb, 4 st).
    case statusAcknowledged(battery: UInt8, unit: UInt8)
    /// `start F0 4D x`: the scale took the unit when x is 0.
    case unitAcknowledged(accepted: Bool)
    /// `start 58 s w w`: a weight-only measurement in 50 g units (big-endian), stable when s is 0.
    case weight(fiftyGrams: UInt16, stable: Bool)
    /// Starts with the model's start byte but is nothing this driver reads.
    case other

    /// Command byte asking for the scale status, answered with an `F0 4F` acknowledgement.
    public static let statusCommand: UInt8 = 0x4F
    /// Command byte setting the scale's display unit, answered with `F0 4D`.
    public static let setUnitCommand: UInt8 = 0x4D
    /// Second byte of a weight-only measurement frame.
    public static let weightCommand: UInt8 = 0x58
    /// Second byte of the scale's acknowledgements; the third names the command answered.
    public static let scaleAcknowledgement: UInt8 = 0xF0

    /// Nil when the value does not start with this model's start byte (or its init answer).
    public init?(parsing bytes: [UInt8], startByte: UInt8) {
        guard let first = bytes.first else { return nil }
        if first == Self.alternative(startByte, 6) {
            self = .initAcknowledged
            return
        }
        guard first == startByte, bytes.count >= 2 else { return nil }
        switch bytes[1] {
        case Self.scaleAcknowledgement where bytes.count >= 8 && bytes[2] == Self.statusCommand:
            self = .statusAcknowledged(battery: bytes[4], unit: bytes[7])
        case Self.scaleAcknowledgement where bytes.count >= 4 && bytes[2] == Self.setUnitCommand:
            self = .unitAcknowledged(accepted: bytes[3] == 0)
        case Self.weightCommand where bytes.count >= 5:
            self = .weight(fiftyGrams: UInt16(bytes[3]) << 8 | UInt16(bytes[4]), stable: bytes[2] == 0)
        default:
            self = .other
        }
    }

    /// The model's "alternative" start byte: its high nibble with `nibble` (6 init, 9 time, 10 disconnect) below.
    public static func alternative(_ startByte: UInt8, _ nibble: UInt8) -> UInt8 { startByte & 0xF0 | nibble & 0x0F }

    /// The init command `alt(6) 01`, the first write of the opening.
    public static func initialise(startByte: UInt8) -> [UInt8] { [alternative(startByte, 6), 0x01] }

    /// The time command `alt(9)` + Unix seconds (BE u32, clamped to 0…UInt32.max); the scale does not answer.
    public static func setTime(startByte: UInt8, unixSeconds: Int64) -> [UInt8] {
        let t = UInt32(clamping: max(0, unixSeconds))
        return [alternative(startByte, 9), UInt8(t >> 24), UInt8(t >> 16 & 0xFF), UInt8(t >> 8 & 0xFF), UInt8(t & 0xFF)]
    }

    /// The status request `start 4F` with an all-zero 8-byte user ID (no user).
    public static func status(startByte: UInt8) -> [UInt8] { [startByte, statusCommand] + Array(repeating: 0, count: 8) }

    /// The unit code of `unit` on these scales.
    public static func unitCode(_ unit: WeightUnit) -> UInt8 { unit == .pounds ? 2 : 1 }

    /// The unit command `start 4D code`, sent only when the caller asked for a unit the scale is not showing.
    public static func setUnit(startByte: UInt8, _ unit: WeightUnit) -> [UInt8] { [startByte, setUnitCommand, unitCode(unit)] }
}
