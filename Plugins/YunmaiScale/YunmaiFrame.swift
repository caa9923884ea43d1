import HAL

/// The Yunmai protocol (Mini, SE, Signal): frames notified on FFE4 (service FFE0), commands
/// written to FFE9 (service FFE5).
///
/// Facts, from oliexdev/openScale `android_app/app/src/main/java/com/health/openscale/core/
/// bluetooth/BluetoothYunmaiSE_Mini.java` and its rewrite `…/bluetooth/scales/YunmaiHandler.kt`
/// (ble-scale-sync's Yunmai adapter is "ported from openScale's YunmaiHandler"):
/// - Commands start `0D`, then their length, then the command; the last byte is the XOR of every
///   byte after the `0D`. The user: `0D 12 10 01 00 00 id(BE) height sex age 55 5A 00 00 unit
///   activity xor` (sex 1 male, 2 female; unit 1 kg, 2 lb); the time: `0D 0D 11 unix-seconds(BE)
///   00 00 00 00 00 xor`; start: `0D 05 13 00 16`.
/// - A notification is a final measurement when byte 3 is 2 (anything else is a live update
///   that neither source reads): the time (BE u32) at 5, the weight (BE u16, hundredths of a kg)
///   at 13, the resistance (BE u16) at 15 and, when byte 1 is 0x1E or more, the body fat the
///   scale computed itself (BE u16, hundredths of a percent) at 17; at least 19 bytes.
///
/// Where the two differ: BluetoothYunmaiSE_Mini.java's time command is 13 bytes with the XOR in
/// the last, matching its length byte 0x0D; YunmaiHandler.kt appends the XOR as a 14th byte,
/// so its length byte undercounts. The 13-byte form is followed. The Java driver sends activity
/// 3 always; the rewrite the user's level (3 is kept here, with no user to ask).
public enum YunmaiFrame: Hashable, Sendable {
    /// Byte 3 is 2: weight in 0.01 kg, resistance, and the scale's body fat in 0.01 % when byte 1 ≥ 0x1E.
    case final(weightHundredths: UInt16, resistance: UInt16, fatHundredths: UInt16?)
    /// Any other long-enough notification: a live update, not read by either source.
    case live

    /// Shortest notification that reaches the body fat field at bytes 17–18.
    public static let minimumLength = 19
    /// Byte 3's value in a final measurement.
    public static let finalMarker: UInt8 = 0x02

    /// Nil only for notifications shorter than `minimumLength`; all fields are big-endian.
    public init?(parsing bytes: [UInt8]) {
        guard bytes.count >= Self.minimumLength else { return nil }
        guard bytes[3] == Self.finalMarker else {
            self = .live
            return
        }
        func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1]) }
        let fat = bytes[1] >= 0x1E ? u16(17) : 0
        self = .final(weightHundredths: u16(13), resistance: u16(15), fatHundredths: fat > 0 ? fat : nil)
    }

    /// XOR of every byte after the leading `0D`.
    static func sealed(_ body: [UInt8]) -> [UInt8] {
        body + [body.dropFirst().reduce(0, ^)]
    }

    /// The 18-byte user command (0x10): id, height cm, sex, age and unit (1 kg, 2 lb); activity fixed at 3.
    public static func user(id: UInt16, heightCm: UInt8, male: Bool, age: UInt8, unit: WeightUnit) -> [UInt8] {
        sealed([0x0D, 0x12, 0x10, 0x01, 0x00, 0x00, UInt8(id >> 8), UInt8(id & 0xFF), heightCm, male ? 1 : 2, age,
                0x55, 0x5A, 0x00, 0x00, unit == .pounds ? 2 : 1, 0x03])
    }

    /// The 13-byte time command (0x11): Unix seconds big-endian, clamped to 0…UInt32.max.
    public static func time(unixSeconds: Int64) -> [UInt8] {
        let t = UInt32(clamping: max(0, unixSeconds))
        return sealed([0x0D, 0x0D, 0x11, UInt8(t >> 24), UInt8(t >> 16 & 0xFF), UInt8(t >> 8 & 0xFF), UInt8(t & 0xFF),
                       0, 0, 0, 0, 0])
    }

    /// The start command (0x13), sent last; its XOR byte 0x16 is precomputed.
    public static let start: [UInt8] = [0x0D, 0x05, 0x13, 0x00, 0x16]
}
