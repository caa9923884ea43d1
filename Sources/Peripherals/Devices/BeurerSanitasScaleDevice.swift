import BLEProtocol
import HAL

/// A Beurer / Sanitas / SilverCrest scale of the legacy FFE0 protocol (BF700, BF710, BF800,
/// Runtastic Libra, Sanitas SBF70, SilverCrest SBF75: `beurer-sanitas`).
///
/// Facts, from oliexdev/openScale `…/core/bluetooth/scales/BeurerSanitasHandler.kt` (the state
/// machine of the older `…/bluetooth/legacy/BluetoothBeurerSanitas.java`):
/// - One characteristic, FFE1 of service FFE0, written and notified.
/// - Every frame starts with the model's start byte, high nibble 0xF for the BF700 / BF800 /
///   Runtastic Libra and 0xE for the BF710 and the Sanitas family, low nibble 7. "Alternative"
///   start bytes keep the high nibble and put 6 (init), 9 (set time) or 10 (disconnect) below.
/// - The app's opening: init `alt(6) 01`, answered by a frame starting `alt(6)` (its content is
///   read by nobody); the time `alt(9) <Unix seconds BE u32>`, not answered; the scale status
///   `start 4F <user id, 8 bytes>`, answered `start F0 4F <status> <battery> <weight threshold>
///   <body fat threshold> <unit> <user exists: 0> <reference weight exists: 0> <measurement
///   exists: 0> <version>` (unit 1 kg, 2 lb, 4 st); the unit `start 4D <unit>`, answered
///   `start F0 4D <0: taken>`; the user list `start 33`, answered `start F0 33 <status> <users>
///   <maximum users>` (then one `start 34` frame per user).
/// - While someone stands on it the scale sends `start 58 <0 stable, else settling> <weight BE
///   u16 in 50 g>`.
///
/// Not served: users (this scale has none, and refuses to create one), the `0x59` body
/// composition measurement that needs one, and saved measurements. Every command it does not
/// serve is answered `start F0 <command> 01` (the acknowledgement with a non-zero status, which
/// the handler reads as refused), so an app is told instead of left waiting. A frame that starts
/// with neither this model's start byte nor one of its alternatives is refused with 0x13.
package struct BeurerSanitasScaleDevice: ScaleGATTDevice {
    package static let driverID = "beurer-sanitas"
    package static let service = BluetoothUUID(0xFFE0)
    package static let characteristic = BluetoothUUID(0xFFE1)

    /// The two start bytes, by model (and the name each advertises, which the driver knows them by).
    package enum Model: Hashable, Sendable {
        /// Beurer BF700 / BF800, Runtastic Libra: start byte 0xF7.
        case beurerBF700
        /// Beurer BF710, Sanitas SBF70, SilverCrest SBF75: start byte 0xE7.
        case sanitasSBF70

        package var startByte: UInt8 { self == .beurerBF700 ? 0xF7 : 0xE7 }
        package var name: String { self == .beurerBF700 ? "BEURER BF700" : "SANITAS SBF70" }
    }

    package let model: Model
    package let name: String
    package let batteryPercent: UInt8
    package private(set) var subscribed = false
    package private(set) var initialised = false
    package private(set) var statusAnswered = false
    /// The unit on the display: 1 kg, 2 lb, 4 st (the status's codes); it outlives a link.
    package private(set) var unitCode: UInt8 = 1
    package private(set) var clock = ScaleClock()

    package init(model: Model = .beurerBF700, name: String? = nil, batteryPercent: UInt8 = 80) {
        self.model = model
        self.name = name ?? model.name
        self.batteryPercent = min(batteryPercent, 100)
    }

    var start: UInt8 { model.startByte }
    func alternative(_ nibble: UInt8) -> UInt8 { start & 0xF0 | nibble }

    package var advertisedServices: [BluetoothUUID] { [Self.service] }

    package var services: [ScaleGATTService] {
        [ScaleGATTService(Self.service, [CharacteristicDefinition(Self.characteristic, [.write, .writeWithoutResponse, .notify])])]
    }

    package var isListening: Bool { subscribed && initialised && statusAnswered }

    package mutating func reset() {
        subscribed = false
        initialised = false
        statusAnswered = false
    }

    package mutating func subscriptionChanged(_ characteristic: BluetoothUUID, to configuration: UInt16, at now: Duration) -> [ScaleDeviceOutput] {
        if characteristic == Self.characteristic { subscribed = configuration & 0x0001 != 0 }
        return []
    }

    package mutating func write(_ value: [UInt8], to characteristic: BluetoothUUID, withResponse: Bool, at now: Duration) -> ScaleDeviceReply {
        guard characteristic == Self.characteristic else { return .refused(ATTRefusal(ATTErrorCode.writeNotPermitted)) }
        guard let first = value.first, value.count <= 32 else { return .refused(.invalidLength) }
        switch first {
        case alternative(6):
            initialised = true
            return answer([alternative(6), 0x01])
        case alternative(9):
            guard value.count == 5, let seconds = ScaleFrameFields.bigEndianU32(value, at: 1) else { return .refused(.invalidLength) }
            clock.set(unixSeconds: Int64(seconds), at: now)
            return .accepted
        case alternative(10):
            return ScaleDeviceReply(outputs: [.disconnect(reason: 0x13)])
        case start:
            guard value.count >= 2 else { return .refused(.invalidLength) }
            return command(value[1], Array(value.dropFirst(2)))
        default:
            return .refused(.valueNotAllowed)
        }
    }

    private mutating func command(_ command: UInt8, _ parameters: [UInt8]) -> ScaleDeviceReply {
        switch command {
        case 0x4F:
            statusAnswered = true
            // Weight and body fat thresholds of 1.0 (tenths), no user, firmware 1.
            return answer([start, 0xF0, 0x4F, 0x00, batteryPercent, 10, 10, unitCode, 0x01, 0x01, 0x01, 0x01])
        case 0x4D:
            guard let unit = parameters.first, [1, 2, 4].contains(unit) else { return answer([start, 0xF0, 0x4D, 0x01]) }
            unitCode = unit
            return answer([start, 0xF0, 0x4D, 0x00])
        case 0x33:
            return answer([start, 0xF0, 0x33, 0x00, 0x00, 0x08])
        case 0xF1:
            // The app acknowledging a frame of ours: nothing more to say.
            return .accepted
        default:
            return answer([start, 0xF0, command, 0x01])
        }
    }

    private func answer(_ frame: [UInt8]) -> ScaleDeviceReply {
        ScaleDeviceReply(outputs: [.notify(Self.characteristic, frame)])
    }

    package mutating func show(_ event: ScaleSimulation.Event, composition: ScaleBodyComposition?, at now: Duration) -> [ScaleDeviceOutput] {
        guard case .reading(let reading) = event else { return [] }
        let weight = ScaleFrameFields.bigEndian(ScaleFrameFields.fixed(reading.kilograms, per: 0.05))
        return [.notify(Self.characteristic, [start, 0x58, reading.stable ? 0x00 : 0x01] + weight)]
    }
}
