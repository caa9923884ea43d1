import BLEProtocol
import HAL

/// A QN / Yolanda scale that takes a connection (Renpho, FITINDEX and their rebrands: `qn-scale`),
/// in either of its two GATT layouts.
///
/// Facts, from oliexdev/openScale: `android_app/app/src/main/java/com/health/openscale/core/
/// bluetooth/scales/QNHandler.kt` and the older `…/bluetooth/legacy/BluetoothQNScale.java`, whose
/// comments hold captures of a real scale (`13 09 15 01 10 00 00 00 42`, `20 08 15 68 DF 40 23 E7`,
/// the FFE2 indication `21 05 15 01 3C`, and the `120f15…` / `140b15…` frames):
/// - Layout 1 is service FFE0 with FFE1 (notify: every frame the scale sends), FFE2 (indicate),
///   FFE3 and FFE4 (write); layout 2 is FFF0 with FFF1 (notify) and FFF2 (write).
/// - Every frame is `opcode, length, protocol type, …, checksum`: the length counts the whole
///   frame, the checksum is the low byte of the sum of the bytes before it. The captures' protocol
///   type is 0x15, which the app echoes.
/// - Once the app subscribes, the scale sends its information frame `0x12` (15 bytes); byte 10 is
///   1 when its weights are in hundredths of a kilogram (else tenths). The app answers with the
///   unit setting `13 09 <type> <unit> 10 00 00 00 <sum>` (unit 1 kg, 2 lb); the scale answers
///   `0x14` (11 bytes), and the app sends the time `20 08 <type> <u32 LE seconds since 2000> <sum>`
///   (QNHandler.kt writes it to FFE3 on layout 1, BluetoothQNScale.java's capture to FFE4; both
///   are taken). BluetoothQNScale.java also writes the bare `02 <u32 LE seconds>` to FFE4 (or
///   FFF2), which QNHandler.kt still sends after the unit setting: taken too. The time "always
///   prompts" the FFE2 indication, as that capture's comment says.
/// - Weight frames `0x10`: weight at 3–4 (big-endian, in the `0x12` frame's unit), byte 5 1 once
///   stable (0 while settling), two resistances at 6–7 and 8–9 (big-endian). QNHandler.kt turns the
///   first into an impedance as `0.3 × (r − 400)` Ω, so the impedance we are given goes out as
///   `r = impedance / 0.3 + 400`.
/// - `1F 05 15 10 49` "terminates connection" (BluetoothQNScale.java): the scale ends the link.
///
/// Our choices where the sources say nothing: the `0x12` frame says hundredths (so both layouts'
/// weights mean the same, and QNHandler.kt's /10 retry for odd weights never fires); the unknown
/// bytes of every frame are 0; the `0x10` frame is 11 bytes (both readers need 10); weights flow
/// once the unit setting has come, and stepping off sends one frame of 0 kg (the display going
/// back to zero). The stored-records exchange of the newer firmware (`0x22` / `0x23`) is taken and
/// left unanswered: this scale keeps no records. A frame with a wrong length byte or checksum is
/// refused with 0x13 (Value Not Allowed), one shorter than its opcode needs with 0x0D, where a
/// real scale would silently drop it: an app's mistake shows at once.
package struct QNScaleDevice: ScaleGATTDevice {
    package static let driverID = "qn-scale"

    /// The two GATT layouts (QNHandler.kt's "type 1" and "type 2").
    package enum Layout: Hashable, Sendable { case ffe0, fff0 }

    package static let ffe0Service = BluetoothUUID(0xFFE0)
    package static let ffe1Frames = BluetoothUUID(0xFFE1)
    package static let ffe2Indications = BluetoothUUID(0xFFE2)
    package static let ffe3Unit = BluetoothUUID(0xFFE3)
    package static let ffe4Time = BluetoothUUID(0xFFE4)
    package static let fff0Service = BluetoothUUID(0xFFF0)
    package static let fff1Frames = BluetoothUUID(0xFFF1)
    package static let fff2Commands = BluetoothUUID(0xFFF2)

    /// The protocol type of the captures, echoed by the app in what it writes.
    package static let protocolType: UInt8 = 0x15
    /// Seconds from 1970-01-01 to 2000-01-01, the scale's epoch (openScale's comment; its
    /// constant 946_702_800 is five hours off, see the driver's `QNFrame.epochOffset`).
    static let epochOffset: Int64 = 946_684_800

    package let layout: Layout
    package let name: String
    /// Notifications of the frame characteristic are on.
    package private(set) var framesSubscribed = false
    package private(set) var miscIndications = false
    /// The unit the app asked the display to show; nil until it sends the unit setting.
    package private(set) var unit: WeightUnit?
    /// The time the app set, when it set one.
    package private(set) var timeSet = false
    package private(set) var clock = ScaleClock()

    package init(layout: Layout = .ffe0, name: String = "QN-Scale") {
        self.layout = layout
        self.name = name
    }

    var frames: BluetoothUUID { layout == .ffe0 ? Self.ffe1Frames : Self.fff1Frames }

    package var advertisedServices: [BluetoothUUID] { [layout == .ffe0 ? Self.ffe0Service : Self.fff0Service] }

    package var services: [ScaleGATTService] {
        switch layout {
        case .ffe0:
            [ScaleGATTService(Self.ffe0Service, [
                CharacteristicDefinition(Self.ffe1Frames, .notify),
                CharacteristicDefinition(Self.ffe2Indications, .indicate),
                CharacteristicDefinition(Self.ffe3Unit, [.write, .writeWithoutResponse]),
                CharacteristicDefinition(Self.ffe4Time, [.write, .writeWithoutResponse]),
            ])]
        case .fff0:
            [ScaleGATTService(Self.fff0Service, [
                CharacteristicDefinition(Self.fff1Frames, .notify),
                CharacteristicDefinition(Self.fff2Commands, [.write, .writeWithoutResponse]),
            ])]
        }
    }

    package var isListening: Bool { framesSubscribed && unit != nil }

    package mutating func reset() {
        framesSubscribed = false
        miscIndications = false
        unit = nil
        timeSet = false
    }

    package mutating func subscriptionChanged(_ characteristic: BluetoothUUID, to configuration: UInt16, at now: Duration) -> [ScaleDeviceOutput] {
        if characteristic == Self.ffe2Indications { miscIndications = configuration & 0x0002 != 0 }
        guard characteristic == frames else { return [] }
        let subscribing = configuration & 0x0001 != 0 && !framesSubscribed
        framesSubscribed = configuration & 0x0001 != 0
        // The scale introduces itself to whoever subscribes: hundredths (byte 10 = 1).
        return subscribing ? [.notify(frames, Self.frame(0x12, length: 15, [10: 0x01]))] : []
    }

    package mutating func write(_ value: [UInt8], to characteristic: BluetoothUUID, withResponse: Bool, at now: Duration) -> ScaleDeviceReply {
        let writable = layout == .ffe0 ? [Self.ffe3Unit, Self.ffe4Time] : [Self.fff2Commands]
        guard writable.contains(characteristic) else { return .refused(ATTRefusal(ATTErrorCode.writeNotPermitted)) }
        // BluetoothQNScale.java's bare time: 02 and seconds since 2000, little-endian.
        if value.count == 5, value[0] == 0x02 {
            setTime(ScaleFrameFields.littleEndianU32(value, at: 1), at: now)
            return .accepted
        }
        guard value.count >= 4, value.count <= 32 else { return .refused(.invalidLength) }
        guard Int(value[1]) == value.count, value.last == Self.checksum(value.dropLast()) else { return .refused(.valueNotAllowed) }
        switch value[0] {
        case 0x13:
            guard value.count == 9 else { return .refused(.invalidLength) }
            guard value[3] == 0x01 || value[3] == 0x02 else { return .refused(.valueNotAllowed) }
            unit = value[3] == 0x02 ? .pounds : .kilograms
            return ScaleDeviceReply(outputs: [.notify(frames, Self.frame(0x14, length: 11))])
        case 0x20:
            guard value.count == 8 else { return .refused(.invalidLength) }
            setTime(ScaleFrameFields.littleEndianU32(value, at: 3), at: now)
            return ScaleDeviceReply(outputs: layout == .ffe0 ? [.indicate(Self.ffe2Indications, Self.frame(0x21, length: 5, [3: 0x01]))] : [])
        case 0x1F:
            return ScaleDeviceReply(outputs: [.disconnect(reason: 0x13)])
        default:
            // Acknowledgements and the stored-records query: taken, nothing to say.
            return .accepted
        }
    }

    package mutating func show(_ event: ScaleSimulation.Event, composition: ScaleBodyComposition?, at now: Duration) -> [ScaleDeviceOutput] {
        switch event {
        case .reading(let reading):
            let resistance = reading.stable ? Self.resistance(composition?.impedanceOhms) : 0
            return [.notify(frames, Self.weightFrame(hundredths: ScaleFrameFields.fixed(reading.kilograms, per: 0.01),
                                                     stable: reading.stable, resistance: resistance))]
        case .steppedOff:
            return [.notify(frames, Self.weightFrame(hundredths: 0, stable: false, resistance: 0))]
        }
    }

    private mutating func setTime(_ sinceEpoch: UInt32?, at now: Duration) {
        guard let sinceEpoch else { return }
        clock.set(unixSeconds: Int64(sinceEpoch) + Self.epochOffset, at: now)
        timeSet = true
    }

    // MARK: frames

    /// The low byte of the sum of `bytes`.
    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt8 { bytes.reduce(0) { $0 &+ $1 } }

    /// `opcode, length, protocol type`, zeros with the given bytes set, and the checksum.
    static func frame(_ opcode: UInt8, length: Int, _ set: [Int: UInt8] = [:]) -> [UInt8] {
        var body = [UInt8](repeating: 0, count: max(4, length) - 1)
        body[0] = opcode
        body[1] = UInt8(body.count + 1)
        body[2] = protocolType
        for (index, byte) in set where index > 2 && index < body.count { body[index] = byte }
        return body + [checksum(body)]
    }

    /// `10 0B 15 <weight BE> <stable> <r1 BE> <r2 BE> <sum>`.
    static func weightFrame(hundredths: UInt16, stable: Bool, resistance: UInt16) -> [UInt8] {
        let weight = ScaleFrameFields.bigEndian(hundredths), r = ScaleFrameFields.bigEndian(resistance)
        return frame(0x10, length: 11, [3: weight[0], 4: weight[1], 5: stable ? 1 : 0, 6: r[0], 7: r[1], 8: r[0], 9: r[1]])
    }

    /// The resistance QNHandler.kt reads back as `impedance` ohms; 0 without one.
    static func resistance(_ impedance: Double?) -> UInt16 {
        guard let impedance, impedance.isFinite, impedance > 0 else { return 0 }
        return ScaleFrameFields.fixed(impedance / 0.3 + 400, per: 1)
    }
}
