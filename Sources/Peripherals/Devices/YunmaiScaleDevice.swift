import BLEProtocol
import HAL

/// A Yunmai Mini / SE / Signal scale (`yunmai`).
///
/// Facts, from oliexdev/openScale `…/core/bluetooth/scales/YunmaiHandler.kt` (and the Java driver
/// it replaced, `…/bluetooth/legacy/BluetoothYunmaiSE_Mini.java`), and the protocol notes of the
/// pwnall / conoro gists ("Yunmai smart scale (M1301, M1302, M1303) Bluetooth LE protocol notes",
/// which YunmaiHandler.kt cites for its frame sizes):
/// - Commands are written to FFE9 (service FFE5); the scale answers with notifications of FFE4
///   (service FFE0).
/// - Every frame starts `0D`; then, in a command, the frame's length and the command; in an
///   answer, the scale's software version (0x1E), the length and the answer type. The last byte is
///   the XOR of every byte after the `0D`.
/// - Commands: the user `0D 12 10 01 00 00 <id BE u16> <height cm> <sex> <age> 55 5A 00 00 <unit>
///   <activity> <xor>` (18 bytes; unit 1 kg, 2 lb); the time `0D 0D 11 <Unix seconds BE u32>
///   00 00 00 00 00 <xor>` (13 bytes); and `0D 05 13 00 16`, which starts the weighing (the
///   handler names it "get protocol version"), answered `0D 1E 05 05 1E`.
/// - Answers while weighing: `0D 1E 0B 01 <date BE u32> <weight BE u16, 0.01 kg> <xor>` (11 bytes,
///   "unfinished weighing"), then the result `0D 1E 14 02 00 <date> <user id BE u32> <weight>
///   <resistance BE u16> <body fat BE u16, 0.01 %> <xor>` (20 bytes: the body fat is there from
///   software version 0x1E, YunmaiHandler.kt's comment says). YunmaiHandler.kt drops a result
///   whose user id is not the one it set, so the id written in the user command comes back.
///
/// Our choices: dates are the scale's clock (the time the app set, running since); the
/// resistance field carries the impedance in ohms (neither source decodes it); the scale weighs
/// once the app has subscribed and sent the start command; stepping off sends nothing (no
/// source shows a frame for it). Frames that do not start `0D` or whose length byte or XOR is
/// wrong are refused with 0x13, where the real scale would drop them.
package struct YunmaiScaleDevice: ScaleGATTDevice {
    package static let driverID = "yunmai"
    package static let measurementService = BluetoothUUID(0xFFE0)
    package static let measurements = BluetoothUUID(0xFFE4)
    package static let commandService = BluetoothUUID(0xFFE5)
    package static let commands = BluetoothUUID(0xFFE9)
    /// The software version every answer carries (the gists' example scale).
    static let softwareVersion: UInt8 = 0x1E

    /// Who the app said stands on the scale.
    package struct User: Hashable, Sendable {
        package var id: UInt16, heightCm: UInt8, male: Bool, age: UInt8, unit: WeightUnit
    }

    package let name: String
    package private(set) var subscribed = false
    package private(set) var started = false
    package private(set) var user: User?
    package private(set) var clock = ScaleClock()

    /// A Yunmai Mini 2's name, as one advertises itself (YunmaiHandler.kt matches "YUNMAI-ISM…").
    package init(name: String = "YUNMAI-ISM2-W") {
        self.name = name
    }

    package var advertisedServices: [BluetoothUUID] { [Self.measurementService] }

    package var services: [ScaleGATTService] {
        [ScaleGATTService(Self.measurementService, [CharacteristicDefinition(Self.measurements, .notify)]),
         ScaleGATTService(Self.commandService, [CharacteristicDefinition(Self.commands, [.write, .writeWithoutResponse])])]
    }

    package var isListening: Bool { subscribed && started }

    package mutating func reset() {
        subscribed = false
        started = false
        user = nil
    }

    package mutating func subscriptionChanged(_ characteristic: BluetoothUUID, to configuration: UInt16, at now: Duration) -> [ScaleDeviceOutput] {
        if characteristic == Self.measurements { subscribed = configuration & 0x0001 != 0 }
        return []
    }

    package mutating func write(_ value: [UInt8], to characteristic: BluetoothUUID, withResponse: Bool, at now: Duration) -> ScaleDeviceReply {
        guard characteristic == Self.commands else { return .refused(ATTRefusal(ATTErrorCode.writeNotPermitted)) }
        guard value.count >= 4, value.count <= 32 else { return .refused(.invalidLength) }
        guard value[0] == 0x0D, Int(value[1]) == value.count, value.last == Self.xor(value.dropFirst().dropLast()) else {
            return .refused(.valueNotAllowed)
        }
        switch value[2] {
        case 0x10:
            guard value.count == 18 else { return .refused(.invalidLength) }
            user = User(id: UInt16(value[6]) << 8 | UInt16(value[7]), heightCm: value[8], male: value[9] == 1, age: value[10],
                        unit: value[15] == 2 ? .pounds : .kilograms)
            return .accepted
        case 0x11:
            guard value.count == 13, let seconds = ScaleFrameFields.bigEndianU32(value, at: 3) else { return .refused(.invalidLength) }
            clock.set(unixSeconds: Int64(seconds), at: now)
            return .accepted
        case 0x13:
            started = true
            return ScaleDeviceReply(outputs: [.notify(Self.measurements, Self.answer(type: 0x05, []))])
        default:
            return .accepted
        }
    }

    package mutating func show(_ event: ScaleSimulation.Event, composition: ScaleBodyComposition?, at now: Duration) -> [ScaleDeviceOutput] {
        guard case .reading(let reading) = event else { return [] }
        let date = ScaleFrameFields.bigEndian(UInt32(clamping: clock.unixSeconds(at: now)))
        let weight = ScaleFrameFields.bigEndian(ScaleFrameFields.fixed(reading.kilograms, per: 0.01))
        guard reading.stable else { return [.notify(Self.measurements, Self.answer(type: 0x01, date + weight))] }
        let id = ScaleFrameFields.bigEndian(UInt32(user?.id ?? 0))
        let resistance = ScaleFrameFields.bigEndian(ScaleFrameFields.fixed(composition?.impedanceOhms, per: 1))
        let fat = ScaleFrameFields.bigEndian(ScaleFrameFields.fixed(composition?.fatPercent, per: 0.01, limit: 10_000))
        return [.notify(Self.measurements, Self.answer(type: 0x02, [0x00] + date + id + weight + resistance + fat))]
    }

    static func xor(_ bytes: some Sequence<UInt8>) -> UInt8 { bytes.reduce(0, ^) }

    /// `0D 1E <length> <type> <payload> <xor>`.
    static func answer(type: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let body: [UInt8] = [0x0D, softwareVersion, UInt8(truncatingIfNeeded: payload.count + 5), type] + payload
        return body + [xor(body.dropFirst())]
    }
}
