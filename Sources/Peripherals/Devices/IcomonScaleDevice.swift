import BLEProtocol
import HAL

/// A LeFu / ICOMON scale of the "MGB" protocol (Swan, Icomon, YG and their rebrands: `icomon-mgb`).
///
/// Facts, from oliexdev/openScale: `…/bluetooth/legacy/BluetoothMGB.java` (the original driver,
/// written against the scale, with the constant bytes it saw noted) and its rewrite
/// `…/core/bluetooth/scales/MGBHandler.kt`:
/// - Service FFB0: configuration written to FFB1, results notified on FFB2.
/// - Configuration packets are 8 bytes, `AC 02 c0 c1 c2 c3 CC <low byte of c0+c1+c2+c3+CC>`: the
///   openers `F7 00 00 00` and `FA 00 00 00`, the person `FB <sex: 1 male, 2 female> <age>
///   <height cm>`, the date `FD <year − 2000> <month> <day>`, the time `FC <h> <min> <s>`, the unit
///   `FE 06 <unit> 00`.
/// - The result is two 20-byte notifications. The first: `AC 02 FF 00 02 21 <yy mm dd hh mm ss>
///   <weight> <BMI> <body fat> 00 00`, the three figures in tenths (kg, kg/m², %). The second:
///   `01 00 <muscle %> <basal metabolism> <bone kg> <water %>` in tenths, `<age>`, `<protein %>`,
///   then `00 01 1B A5 02 47` and a last byte.
///
/// Where the sources differ: BluetoothMGB.java reads every figure high byte first; MGBHandler.kt
/// reads the first frame's high byte first too (its `readDeciBE`, though its comments say LE) but
/// the second frame's low byte first. The original is followed: all big-endian. No source shows a
/// settling weight for this 20-byte form (MGBHandler.kt's 8-byte "streaming" frames are another
/// model's), so the scale says nothing until its display settles, and then sends its result.
///
/// Our choices: the date and time are the scale's clock (what the app set); the BMI comes from
/// the height the app sent (0 without one); figures the person lacks are 0; the age is the app's.
/// A packet that is not 8 bytes is refused with 0x0D, one with a wrong header or sum with 0x13.
package struct IcomonScaleDevice: ScaleGATTDevice {
    package static let driverID = "icomon-mgb"
    package static let service = BluetoothUUID(0xFFB0)
    package static let configuration = BluetoothUUID(0xFFB1)
    package static let results = BluetoothUUID(0xFFB2)

    /// Who the app said stands on the scale (the `FB` packet).
    package struct Person: Hashable, Sendable {
        package var male: Bool, age: UInt8, heightCm: UInt8
    }

    package let name: String
    package private(set) var subscribed = false
    package private(set) var person: Person?
    /// The unit byte of the last `FE` packet (1 kg, 2 lb, 3 st).
    package private(set) var unitCode: UInt8?
    /// Configuration packets taken on this link, by their first byte, in order.
    package private(set) var configured: [UInt8] = []
    package private(set) var clock = ScaleClock()
    private var date: (year: Int, month: Int, day: Int)?

    package init(name: String = "Swan") {
        self.name = name
    }

    package var advertisedServices: [BluetoothUUID] { [Self.service] }

    package var services: [ScaleGATTService] {
        [ScaleGATTService(Self.service, [CharacteristicDefinition(Self.configuration, [.write, .writeWithoutResponse]),
                                         CharacteristicDefinition(Self.results, .notify)])]
    }

    package var isListening: Bool { subscribed }

    package mutating func reset() {
        subscribed = false
        person = nil
        unitCode = nil
        configured = []
        date = nil
    }

    package mutating func subscriptionChanged(_ characteristic: BluetoothUUID, to configuration: UInt16, at now: Duration) -> [ScaleDeviceOutput] {
        if characteristic == Self.results { subscribed = configuration & 0x0001 != 0 }
        return []
    }

    package mutating func write(_ value: [UInt8], to characteristic: BluetoothUUID, withResponse: Bool, at now: Duration) -> ScaleDeviceReply {
        guard characteristic == Self.configuration else { return .refused(ATTRefusal(ATTErrorCode.writeNotPermitted)) }
        guard value.count == 8 else { return .refused(.invalidLength) }
        guard value[0] == 0xAC, value[1] == 0x02, value[6] == 0xCC, value[7] == value[2...6].reduce(0, &+) else {
            return .refused(.valueNotAllowed)
        }
        let (c0, c1, c2, c3) = (value[2], value[3], value[4], value[5])
        switch c0 {
        case 0xFB: person = Person(male: c1 == 1, age: c2, heightCm: c3)
        case 0xFD: date = (2000 + Int(c1), Int(c2), Int(c3))
        case 0xFC:
            let day = date ?? { let civil = clock.civil(at: now); return (civil.year, civil.month, civil.day) }()
            clock.set(ScaleClock.Civil(year: day.year, month: day.month, day: day.day, hour: Int(c1), minute: Int(c2), second: Int(c3)), at: now)
        case 0xFE: unitCode = c2
        default: break
        }
        configured.append(c0)
        return .accepted
    }

    package mutating func show(_ event: ScaleSimulation.Event, composition: ScaleBodyComposition?, at now: Duration) -> [ScaleDeviceOutput] {
        guard case .reading(let reading) = event, reading.stable else { return [] }
        return [.notify(Self.results, firstFrame(reading.kilograms, composition, at: now)),
                .notify(Self.results, secondFrame(composition))]
    }

    /// The first frame: header, the scale's date and time, weight, BMI and body fat in tenths.
    func firstFrame(_ kilograms: Double, _ composition: ScaleBodyComposition?, at now: Duration) -> [UInt8] {
        let time = clock.civil(at: now)
        let stamp = [time.year - 2000, time.month, time.day, time.hour, time.minute, time.second].map { UInt8(clamping: max(0, $0)) }
        let metres = Double(person?.heightCm ?? 0) / 100
        let bmi = metres > 0 ? kilograms / (metres * metres) : 0
        func tenths(_ value: Double?) -> [UInt8] { ScaleFrameFields.bigEndian(ScaleFrameFields.fixed(value, per: 0.1)) }
        return [0xAC, 0x02, 0xFF, 0x00, 0x02, 0x21] + stamp + tenths(kilograms) + tenths(bmi) + tenths(composition?.fatPercent) + [0x00, 0x00]
    }

    /// The second frame: muscle, basal metabolism (not known here: 0), bone, water, age, protein (0).
    func secondFrame(_ composition: ScaleBodyComposition?) -> [UInt8] {
        func tenths(_ value: Double?) -> [UInt8] { ScaleFrameFields.bigEndian(ScaleFrameFields.fixed(value, per: 0.1)) }
        return [0x01, 0x00] + tenths(composition?.musclePercent) + tenths(nil) + tenths(composition?.boneKilograms)
            + tenths(composition?.waterPercent) + [person?.age ?? 0] + tenths(nil) + [0x00, 0x01, 0x1B, 0xA5, 0x02, 0x47, 0x00]
    }
}
