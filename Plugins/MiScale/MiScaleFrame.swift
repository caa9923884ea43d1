import HAL

/// The reading a Xiaomi scale broadcasts as service data. Xiaomi never published these layouts;
/// they come from the public reverse-engineering work (openScale's MiScale/MiScale2 handlers and
/// its wiki, the Theengs decoder's XMTZC04HM/XMTZC05HM models, the bvp MIBFS parser, the
/// cezaris13/MiCompositionScale2 notes, ble_monitor's miscale parser, Tasmota's MI32 MIBCS driver).
///
/// Mi Body Composition Scale 2 — service data 0x181B, 13 bytes:
///   0: control byte 0 — bit 0 pounds; bit 2 "small object" weighing mode
///   1: control byte 1 — bit 1 impedance present, bit 5 stabilised, bit 6 jin, bit 7 load removed
///   2–8: date and time (year u16, month, day, hours, minutes, seconds)
///   9–10: impedance u16 in ohms;  11–12: weight u16
///
/// Mi Smart Scale 2 — service data 0x181D, 10 bytes:
///   0: control byte — bit 0 pounds, bit 4 jin, bit 5 stabilised, bit 7 load removed
///   1–2: weight u16;  3–9: date and time
///
/// Weight is raw / 200 in kilograms and raw / 100 in pounds or jin (1 jin = 0.5 kg). Tasmota's
/// driver treats weight 0xFFF0 and above as overload and impedance 0xFFFD and above as "no
/// impedance"; both are far outside what the 150 kg scale can measure, so we do the same.
///
/// Where sources disagree (we follow openScale, the most widely used and tested reading, which the
/// Theengs decoder's kg/lb conditions also confirm):
/// - Pounds: openScale and Theengs read bit 0 of the first byte (0x02 kg, 0x03 lb in the low
///   nibble); the pohy/mi-scale-2 notes put kilograms at bit 1 and pounds at bit 2 instead.
/// - Jin on the 13-byte frame: openScale and the cezaris13 notes read bit 6 of control byte 1, but
///   openScale's older handler also names that same bit "date invalid", bvp calls it unknown, and
///   Theengs ignores jin altogether.
/// - Jin on the 10-byte frame: openScale reads bit 4; pohy/mi-scale-2 agrees.
public struct MiScaleFrame: Hashable, Sendable {
    /// Which scale sent the frame, known from the service UUID and length.
    public enum Model: Hashable, Sendable {
        /// Mi Body Composition Scale 2 (XMTZC05HM), 0x181B service data.
        case bodyCompositionScale2
        /// Mi Smart Scale 2 (XMTZC04HM), 0x181D service data.
        case smartScale2
    }

    /// Which frame layout this was read from.
    public var model: Model
    /// The unit the scale shows (pounds, jin or kg, from the control bits); also fixes how `rawWeight` scales.
    public var displayUnit: WeightUnit
    /// Weight as sent: kg × 200, or lb / jin × 100; see `kilograms`.
    public var rawWeight: UInt16
    /// The scale's "stabilised" bit: the weight has settled and can be taken as final.
    public var stable: Bool
    /// The "load removed" bit: the person stepped off and the frame repeats the last weight.
    public var loadRemoved: Bool
    /// Ohms, when the scale measured it (the impedance bit is set and the value is neither zero nor a sentinel).
    public var impedanceOhms: Double?

    /// Impedance values from here up mean "no impedance" (as Tasmota's driver treats them).
    public static let impedanceSentinels: UInt16 = 0xFFFD
    /// Raw weights from here up mean overload; such frames give no reading.
    public static let overload: UInt16 = 0xFFF0
    /// Service data length of a Body Composition Scale 2 frame under 0x181B.
    public static let bodyCompositionLength = 13
    /// Service data length of a Smart Scale 2 frame under 0x181D.
    public static let smartScaleLength = 10

    /// Parses 13 bytes of 0x181B service data; nil for any other length.
    public init?(bodyCompositionServiceData bytes: [UInt8]) {
        guard bytes.count == Self.bodyCompositionLength else { return nil }
        let control0 = bytes[0]
        let control1 = bytes[1]
        model = .bodyCompositionScale2
        displayUnit = control0 & 0x01 != 0 ? .pounds : (control1 & 0x40 != 0 ? .jin : .kilograms)
        stable = control1 & 0x20 != 0
        loadRemoved = control1 & 0x80 != 0
        let impedance = UInt16(bytes[9]) | UInt16(bytes[10]) << 8
        impedanceOhms = control1 & 0x02 != 0 && impedance > 0 && impedance < Self.impedanceSentinels
            ? Double(impedance) : nil
        rawWeight = UInt16(bytes[11]) | UInt16(bytes[12]) << 8
    }

    /// Parses 10 bytes of 0x181D service data; nil for any other length.
    public init?(weightScaleServiceData bytes: [UInt8]) {
        guard bytes.count == Self.smartScaleLength else { return nil }
        let control = bytes[0]
        model = .smartScale2
        displayUnit = control & 0x01 != 0 ? .pounds : (control & 0x10 != 0 ? .jin : .kilograms)
        stable = control & 0x20 != 0
        loadRemoved = control & 0x80 != 0
        impedanceOhms = nil
        rawWeight = UInt16(bytes[1]) | UInt16(bytes[2]) << 8
    }

    /// The weight in kilograms: raw / 200 for kg, raw / 100 converted for pounds and jin (0.5 kg).
    public var kilograms: Double {
        switch displayUnit {
        case .kilograms: Double(rawWeight) / 200
        case .pounds: Double(rawWeight) / 100 * 0.45359237
        case .jin: Double(rawWeight) / 100 * 0.5
        }
    }

    /// The HAL reading; nil when the scale reports an overload.
    public var reading: WeightReading? {
        guard rawWeight < Self.overload else { return nil }
        return WeightReading(kilograms: kilograms, stable: stable, displayUnit: displayUnit,
                      impedanceOhms: impedanceOhms, loadRemoved: loadRemoved)
    }
}
