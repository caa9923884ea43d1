import HAL

/// Xiaomi's Mi Body Composition Scale 2 and Mi Smart Scale 2 as they broadcast each reading in
/// service data (`mi-scale`). They also offer a GATT history service, which the driver does not
/// use; here they only broadcast.
///
/// Facts, from Bluetooth-Devices/xiaomi-ble `src/xiaomi_ble/parser.py` (`_parse_scale_v1`,
/// `_parse_scale_v2`) and oliexdev/openScale `…/core/bluetooth/scales/MiScaleHandler.kt`
/// (`parseLive13`, the same 13-byte layout received over GATT), which agree:
/// - Body Composition Scale 2: 13 bytes of service data under 0x181B. Byte 0 bit 0 pounds; byte 1
///   bit 1 impedance present, bit 5 stabilised, bit 6 jin, bit 7 load removed; bytes 2–8 the date
///   and time (year little-endian, month, day, hour, minute, second); 9–10 the impedance
///   (little-endian, Ω); 11–12 the weight (little-endian; kg × 200, or lb / jin × 100).
/// - Smart Scale 2: 10 bytes under 0x181D. Byte 0 bit 0 pounds, bit 4 jin, bit 5 stabilised,
///   bit 7 load removed; 1–2 the weight as above; 3–9 the date and time.
/// - Names: "MIBFS" / "MIBCS" for the body composition scale, "MI SCALE2" for the smart scale
///   (openScale's name tests).
///
/// Our choices: byte 0 of the 13-byte frame carries 0x02 besides the pounds bit (kilograms read
/// `…2`, pounds `…3` in captures the driver's sources describe); the impedance is sent with the
/// stable reading only; after stepping off the last weight is repeated with "load removed" until
/// the scale sleeps; the date is the scale's clock (these scales are set through their GATT
/// service, which is not served, so it is the clock's factory setting plus the time since).
package struct MiScaleBroadcastDevice: ScaleBroadcastDevice {
    package static let driverID = "mi-scale"
    package static let bodyCompositionService = BluetoothUUID(0x181B)
    package static let weightScaleService = BluetoothUUID(0x181D)

    package enum Model: Hashable, Sendable {
        /// XMTZC05HM: 13 bytes under 0x181B, with impedance.
        case bodyCompositionScale2
        /// XMTZC04HM: 10 bytes under 0x181D.
        case smartScale2
    }

    package let model: Model
    package let name: String?
    /// Kilograms, pounds or jin on the display, and so in the frame.
    package let displayUnit: WeightUnit

    package init(model: Model = .bodyCompositionScale2, name: String? = nil, displayUnit: WeightUnit = .kilograms) {
        self.model = model
        self.name = name ?? (model == .bodyCompositionScale2 ? "MIBFS" : "MI SCALE2")
        self.displayUnit = displayUnit
    }

    package func advertisement(_ shown: ScaleBroadcastFrame, name: String?, address: BLEAddress) -> Advertisement {
        switch model {
        case .bodyCompositionScale2:
            Advertisement(flags: 0x06, localName: name, serviceData: [Self.bodyCompositionService: bodyCompositionFrame(shown)], connectable: false)
        case .smartScale2:
            Advertisement(flags: 0x06, localName: name, serviceData: [Self.weightScaleService: smartScaleFrame(shown)], connectable: false)
        }
    }

    /// kg × 200, or lb / jin × 100.
    func rawWeight(_ kilograms: Double) -> [UInt8] {
        let raw = switch displayUnit {
        case .kilograms: ScaleFrameFields.fixed(kilograms, per: 0.005)
        case .pounds: ScaleFrameFields.fixed(kilograms / 0.45359237, per: 0.01)
        case .jin: ScaleFrameFields.fixed(kilograms / 0.5, per: 0.01)
        }
        return LittleEndian.u16(raw)
    }

    func date(_ time: ScaleClock.Civil) -> [UInt8] {
        LittleEndian.u16(UInt16(clamping: time.year)) + [time.month, time.day, time.hour, time.minute, time.second].map { UInt8(clamping: $0) }
    }

    func bodyCompositionFrame(_ shown: ScaleBroadcastFrame) -> [UInt8] {
        let impedance = ScaleFrameFields.fixed(shown.composition?.impedanceOhms, per: 1, limit: 0xFFFC)
        var control1: UInt8 = 0
        if impedance > 0 { control1 |= 0x02 }
        if shown.reading.stable { control1 |= 0x20 }
        if displayUnit == .jin { control1 |= 0x40 }
        if shown.loadRemoved { control1 |= 0x80 }
        let control0: UInt8 = displayUnit == .pounds ? 0x03 : 0x02
        return [control0, control1] + date(shown.time) + LittleEndian.u16(impedance) + rawWeight(shown.reading.kilograms)
    }

    func smartScaleFrame(_ shown: ScaleBroadcastFrame) -> [UInt8] {
        var control: UInt8 = 0
        if displayUnit == .pounds { control |= 0x01 }
        if displayUnit == .jin { control |= 0x10 }
        if shown.reading.stable { control |= 0x20 }
        if shown.loadRemoved { control |= 0x80 }
        return [control] + rawWeight(shown.reading.kilograms) + date(shown.time)
    }
}
