import HAL

/// The 1byone / Eufy (C1, P1, A1) protocol on service FFF0: commands written to FFF1, frames
/// notified on FFF4.
///
/// Facts, from oliexdev/openScale `android_app/app/src/main/java/com/health/openscale/core/
/// bluetooth/scales/OneByoneHandler.kt` ("based on legacy driver behavior"):
/// - Commands: `FD 37 unit group 00 00 00 00 00 00 xor` (unit 0 kg, 1 lb, 2 st; group 1; the
///   last byte the XOR of the ten before it); the clock `F1 yyyy(BE) mm dd hh mm ss`, which the
///   scale acknowledges with the two bytes `F1 00`; `F2 00` asks for the stored measurements,
///   which follow as `CF` frames and end with the two bytes `F2 00`; `F2 01` erases them.
/// - `CF` frames (at least 11 bytes): impedance as (byte 2 << 8 | byte 1) tenths of an ohm, the
///   weight as a little-endian u16 at 3–4 in hundredths of a kilogram; byte 9 = 1 means "no
///   impedance"; 18 bytes or more add the time (year BE at 11–12, month, day, h, m, s).
///
/// Where sources disagree: an early BluetoothOneByone.java (openScale commit 0447fc2c) read
/// 20-byte values with the weight at 11–12 and a 24-bit impedance at 15–17; the current handler
/// (above) is followed. openScale keeps only frames with impedance (it needs it for body fat)
/// and rate-limits them; here a frame with impedance is the scale's final, stable reading, and
/// one without is a reading with no stable flag of its own (so `weigh` waits for two equal ones:
/// a person weighing in socks gets a weight too). Stored measurements are read past, not
/// erased: `F2 01` would delete the owner's history, which a bench tool has no business doing.
public enum OneByoneFrame: Hashable, Sendable {
    /// A `CF` frame: weight in 0.01 kg (bytes 3–4, LE), impedance in 0.1 Ω or nil when byte 9 is 1 or it is 0.
    case measurement(weightHundredths: UInt16, impedanceTenths: UInt16?)
    /// The two bytes `F1 00`: the scale took the clock.
    case clockAcknowledged
    /// The two bytes `F2 00`: the stored measurements are over and live frames follow.
    case endOfStoredMeasurements

    /// Nil for anything else the scale sends on FFF4 (other headers, `CF` frames under 11 bytes).
    public init?(parsing bytes: [UInt8]) {
        if bytes == [0xF1, 0x00] {
            self = .clockAcknowledged
        } else if bytes == [0xF2, 0x00] {
            self = .endOfStoredMeasurements
        } else if bytes.count >= 11, bytes[0] == 0xCF {
            let impedance = UInt16(bytes[2]) << 8 | UInt16(bytes[1])
            self = .measurement(weightHundredths: UInt16(bytes[3]) | UInt16(bytes[4]) << 8,
                                impedanceTenths: bytes[9] == 1 || impedance == 0 ? nil : impedance)
        } else {
            return nil
        }
    }

    /// `FD 37 unit 01 00 … xor`.
    public static func unitSetting(_ unit: WeightUnit) -> [UInt8] {
        let code: UInt8 = unit == .pounds ? 0x01 : 0x00
        let body: [UInt8] = [0xFD, 0x37, code, 0x01, 0, 0, 0, 0, 0, 0]
        return body + [body.reduce(0, ^)]
    }

    /// `F1 yyyy mm dd hh mm ss` with the year big-endian; each field clamped to its byte(s), never negative.
    public static func clock(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> [UInt8] {
        let y = UInt16(clamping: max(0, year))
        let b = { (v: Int) in UInt8(clamping: max(0, v)) }
        return [0xF1, UInt8(y >> 8), UInt8(y & 0xFF), b(month), b(day), b(hour), b(minute), b(second)]
    }

    /// `F2 00`: ask for the stored measurements, which the scale sends before live ones.
    public static let storedMeasurementsRequest: [UInt8] = [0xF2, 0x00]
}
