import HAL

/// The LeFu / ICOMON "MGB" protocol (Swan, Icomon, YG and their rebrands) on service FFB0:
/// configuration written to FFB1, results notified on FFB2.
///
/// Facts, from oliexdev/openScale: `android_app/app/src/main/java/com/health/openscale/core/
/// bluetooth/BluetoothMGB.java` (the original driver, by someone who had the scale) and its
/// rewrite `…/bluetooth/scales/MGBHandler.kt`; cross-checked with ble-scale-sync's MGB adapter
/// (`MgbAdapter`, "per openScale MGBHandler"):
/// - Configuration packets are 8 bytes, `AC 02 c0 c1 c2 c3 CC sum`, where `sum` is the low byte
///   of c0 + c1 + c2 + c3 + 0xCC. The sequence: `F7 00 00 00`, `FA 00 00 00` (openers),
///   `FB sex age height-cm` (1 male, 2 female), `FD yy mm dd` (year − 2000), `FC hh mm ss`,
///   `FE 06 unit 00` (1 kg, 2 lb, 3 st).
/// - Results are two 20-byte notifications. The first, `AC 02 FF` (MGBHandler.kt also accepts
///   `AC 03 FF`): three unknown bytes, the scale's date and time (6 bytes), then weight, BMI and
///   body fat as tenths (kg, kg/m², %) at 12–13, 14–15, 16–17. The second, `01 00`: muscle %,
///   basal metabolism, bone kg, water % as tenths at 2–3, 4–5, 6–7, 8–9, then age.
///
/// Where they disagree:
/// - Byte order of the tenths: BluetoothMGB.java reads them high byte first and ble-scale-sync
///   reads the first frame's big-endian too; MGBHandler.kt reads little-endian. Big-endian is
///   followed here (the original, and two readings against one).
/// - Framing of the configuration: ble-scale-sync writes the four bytes `F7 00 00 00` bare; both
///   openScale drivers wrap them as above, which is followed here.
/// - The unit: BluetoothMGB.java always sends 1 (kg), MGBHandler.kt the user's unit, ble-scale-sync 0.
/// No source shows a live (settling) weight: the scale sends its result once, so the first
/// frame is a stable reading.
public enum IcomonFrame: Hashable, Sendable {
    /// The first result frame: weight and body fat (the scale's own calculation).
    case result(weightTenths: UInt16, bmiTenths: UInt16, fatTenths: UInt16)
    /// The second result frame: muscle %, bone kg, water % in tenths.
    case composition(muscleTenths: UInt16, boneTenths: UInt16, waterTenths: UInt16)

    /// Both result frames are exactly 20 bytes; other lengths are not results.
    public static let length = 20

    /// Nil for values that are not one of the two result frames (other lengths, other headers).
    public init?(parsing bytes: [UInt8]) {
        guard bytes.count == Self.length else { return nil }
        func tenths(_ at: Int) -> UInt16 { UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1]) }
        if bytes[0] == 0xAC, bytes[1] == 0x02 || bytes[1] == 0x03, bytes[2] == 0xFF {
            self = .result(weightTenths: tenths(12), bmiTenths: tenths(14), fatTenths: tenths(16))
        } else if bytes[0] == 0x01, bytes[1] == 0x00 {
            self = .composition(muscleTenths: tenths(2), boneTenths: tenths(6), waterTenths: tenths(8))
        } else {
            return nil
        }
    }

    /// One configuration packet for FFB1.
    public static func configuration(_ c0: UInt8, _ c1: UInt8, _ c2: UInt8, _ c3: UInt8) -> [UInt8] {
        [0xAC, 0x02, c0, c1, c2, c3, 0xCC, c0 &+ c1 &+ c2 &+ c3 &+ 0xCC]
    }
}
