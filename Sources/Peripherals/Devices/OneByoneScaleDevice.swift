import BLEProtocol
import HAL

/// A 1byone / Eufy scale of the classic protocol (C1 T9146, P1 T9147, A1 T9120, 1byone "Health
/// Scale": `onebyone-eufy`).
///
/// Facts, from oliexdev/openScale `…/core/bluetooth/scales/OneByoneHandler.kt` and the Java driver
/// it follows, `…/bluetooth/legacy/BluetoothOneByone.java` (whose comments list the scale's
/// two-byte answers):
/// - Service FFF0: commands written to FFF1, frames notified on FFF4; the battery level in the
///   Battery Service (0x180F / 0x2A19, read and notify), which OneByoneHandler.kt reads.
/// - Commands: `FD 37 <unit> <group> 00 00 00 00 00 00 <xor of the ten before>` (unit 0 kg, 1 lb,
///   2 st); the clock `F1 <year BE u16> <month> <day> <hour> <minute> <second>`, answered `F1 00`;
///   `F2 00` asks for the stored measurements, which come as `CF` frames and end with `F2 00`;
///   `F2 01` clears them, answered `F2 01`.
/// - `CF` frames: impedance `(byte 2 << 8 | byte 1)` in 0.1 Ω, weight little-endian at 3–4 in
///   0.01 kg, byte 9 = 1 when there is no impedance; 11 bytes live, 18 with a time stamp (stored).
///   Both readers keep only frames with impedance: the scale measures it last, once the weight is
///   settled, so the settling frames go without.
///
/// Our choices: this scale keeps no stored measurements (it weighs only for a connected app), so
/// `F2 00` is answered `F2 00` at once; the unknown bytes of a frame (5–8, 10) are 0; stepping off
/// sends nothing. A command of the wrong length or with a wrong XOR is refused with 0x0D / 0x13.
package struct OneByoneScaleDevice: ScaleGATTDevice {
    package static let driverID = "onebyone-eufy"
    package static let service = BluetoothUUID(0xFFF0)
    package static let commands = BluetoothUUID(0xFFF1)
    package static let frames = BluetoothUUID(0xFFF4)
    package static let batteryService = BluetoothUUID(0x180F)
    package static let batteryLevel = BluetoothUUID(0x2A19)

    package let name: String
    package let batteryPercent: UInt8
    package private(set) var subscribed = false
    /// The display unit the app set (FD 37); nil before it did.
    package private(set) var unit: WeightUnit?
    package private(set) var clockSet = false
    package private(set) var clock = ScaleClock()
    /// The stored measurements are over: live frames follow.
    package private(set) var historyEnded = false

    package init(name: String = "Health Scale", batteryPercent: UInt8 = 85) {
        self.name = name
        self.batteryPercent = min(batteryPercent, 100)
    }

    package var advertisedServices: [BluetoothUUID] { [Self.service] }

    package var services: [ScaleGATTService] {
        [ScaleGATTService(Self.service, [CharacteristicDefinition(Self.commands, [.write, .writeWithoutResponse]),
                                         CharacteristicDefinition(Self.frames, .notify)]),
         ScaleGATTService(Self.batteryService, [CharacteristicDefinition(Self.batteryLevel, [.read, .notify])])]
    }

    package var isListening: Bool { subscribed && historyEnded }

    package mutating func reset() {
        subscribed = false
        unit = nil
        clockSet = false
        historyEnded = false
    }

    package mutating func read(_ characteristic: BluetoothUUID, at now: Duration) -> Result<[UInt8], ATTRefusal> {
        characteristic == Self.batteryLevel ? .success([batteryPercent]) : .failure(.readNotPermitted)
    }

    package mutating func subscriptionChanged(_ characteristic: BluetoothUUID, to configuration: UInt16, at now: Duration) -> [ScaleDeviceOutput] {
        if characteristic == Self.frames { subscribed = configuration & 0x0001 != 0 }
        return []
    }

    package mutating func write(_ value: [UInt8], to characteristic: BluetoothUUID, withResponse: Bool, at now: Duration) -> ScaleDeviceReply {
        guard characteristic == Self.commands else { return .refused(ATTRefusal(ATTErrorCode.writeNotPermitted)) }
        switch value.first {
        case 0xFD:
            guard value.count == 11 else { return .refused(.invalidLength) }
            guard value[1] == 0x37, value[10] == value.prefix(10).reduce(0, ^), value[2] <= 2 else { return .refused(.valueNotAllowed) }
            unit = value[2] == 0 ? .kilograms : .pounds
            return .accepted
        case 0xF1:
            guard value.count == 8 else { return .refused(.invalidLength) }
            clock.set(ScaleClock.Civil(year: Int(value[1]) << 8 | Int(value[2]), month: Int(value[3]), day: Int(value[4]),
                                       hour: Int(value[5]), minute: Int(value[6]), second: Int(value[7])), at: now)
            clockSet = true
            return ScaleDeviceReply(outputs: [.notify(Self.frames, [0xF1, 0x00])])
        case 0xF2:
            guard value.count == 2 else { return .refused(.invalidLength) }
            switch value[1] {
            case 0x00:
                historyEnded = true
                return ScaleDeviceReply(outputs: [.notify(Self.frames, [0xF2, 0x00])])
            case 0x01:
                return ScaleDeviceReply(outputs: [.notify(Self.frames, [0xF2, 0x01])])
            default:
                return .refused(.valueNotAllowed)
            }
        default:
            return .refused(.valueNotAllowed)
        }
    }

    package mutating func show(_ event: ScaleSimulation.Event, composition: ScaleBodyComposition?, at now: Duration) -> [ScaleDeviceOutput] {
        guard case .reading(let reading) = event else { return [] }
        let impedance = reading.stable ? ScaleFrameFields.fixed(composition?.impedanceOhms, per: 0.1) : 0
        return [.notify(Self.frames, Self.measurement(hundredths: ScaleFrameFields.fixed(reading.kilograms, per: 0.01), impedanceTenths: impedance))]
    }

    /// `CF <impedance: low, high> <weight LE> 00 00 00 00 <1 without impedance> 00`.
    static func measurement(hundredths: UInt16, impedanceTenths: UInt16) -> [UInt8] {
        let weight = LittleEndian.u16(hundredths), impedance = LittleEndian.u16(impedanceTenths)
        return [0xCF, impedance[0], impedance[1], weight[0], weight[1], 0, 0, 0, 0, impedanceTenths == 0 ? 1 : 0, 0]
    }
}
