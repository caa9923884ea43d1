import BLEProtocol
import HAL
import HALFakes
import Transports

/// A Bluetooth SIG Weight Scale (Weight Scale Service 0x181D) as a GATT server, playing a
/// `FakeScale`'s readings as Weight Measurement indications: the bench scale that `weigh --hci
/// sim:` and the standard-scale driver meet.
///
/// The readings start when the client enables indications, as a scale that sends its stored
/// and settling measurements to whoever subscribes (WSS 1.0 §3.2), so none is lost to a client
/// still discovering. The standard has no stable flag: a reading the fake marks stable is sent
/// like any other (the driver counts two equal readings).
package struct StandardScalePeripheral: ControllablePeripheral {
    package let scale: FakeScale
    package let address: BLEAddress
    package let advertising: VirtualAdvertising
    package let measurementHandle: UInt16
    package private(set) var connected = false

    private var server: ATTServer
    private var behaviour: Behaviour

    package static let weightScaleService = BluetoothUUID(0x181D)
    package static let weightMeasurement = BluetoothUUID(0x2A9D)
    package static let weightScaleFeature = BluetoothUUID(0x2A9E)
    /// Assigned Numbers, Appearance: Weight Scale category (0x032), generic.
    static let weightScaleAppearance: UInt16 = 0x0C80

    package init(scale: FakeScale, interval: Duration = .milliseconds(100), firstAdvertisement: Duration = .milliseconds(250)) {
        self.scale = scale
        address = scale.device.address
        advertising = VirtualAdvertising(form: VirtualAdvertising.form(for: scale.device.advertisement, extended: false),
                                         interval: interval, firstEvent: firstAdvertisement, rssi: scale.device.rssi)
        var builder = AttributeDatabase.Builder()
        builder.standardServices(deviceName: scale.device.name ?? "Scale", appearance: Self.weightScaleAppearance)
        // Feature: weight resolution 0.05 kg (code 4, bits 3–6), no time stamp, users or BMI.
        builder.service(Self.weightScaleService, [
            CharacteristicDefinition(Self.weightScaleFeature, .read, value: LittleEndian.u32(4 << 3)),
            CharacteristicDefinition(Self.weightMeasurement, .indicate),
        ])
        let database = builder.build()
        measurementHandle = database.valueHandle(of: Self.weightMeasurement) ?? 0
        // Many scales keep the default ATT_MTU; a Weight Measurement fits in it.
        server = ATTServer(database: database, preferredMTU: 23)
        behaviour = Behaviour(measurementHandle: measurementHandle, steps: scale.steps, tail: scale.disconnectAfterLast)
        personKilograms = scale.steps.last?.reading.kilograms ?? 70
    }

    package var isAdvertising: Bool { !connected }

    package mutating func linkUp(_ link: VirtualLinkParameters, at now: Duration) -> [PeripheralAction] {
        connected = true
        server.reset()
        behaviour.reset()
        return []
    }

    package mutating func linkDown(reason: UInt8, at now: Duration) {
        connected = false
        server.reset()
        behaviour.reset()
    }

    package var nextDeadline: Duration? {
        guard connected else { return nil }
        return [behaviour.schedule.nextDeadline, server.transactionDeadline].compactMap { $0 }.min()
    }

    package mutating func advance(to now: Duration) -> [PeripheralAction] {
        // An indication unconfirmed for 30 s ends the bearer; a new one needs a new link.
        if connected, server.expire(at: now) { return [.disconnect(reason: 0x13)] }
        var actions: [PeripheralAction] = []
        while connected, let due = behaviour.schedule.popDue(at: now) {
            switch due {
            case .reading(let index):
                if let pdu = server.indication(valueHandle: measurementHandle, value: Self.weightMeasurement(scale.steps[index].reading), at: now) {
                    actions.append(PeripheralChannels.att(pdu))
                }
                if index == scale.steps.count - 1, let tail = scale.disconnectAfterLast {
                    behaviour.schedule.add(.disconnect, at: now + tail)
                }
            case .live(let kilograms):
                if let pdu = server.indication(valueHandle: measurementHandle, value: Self.weightMeasurement(WeightReading(kilograms: kilograms, stable: true)), at: now) {
                    actions.append(PeripheralChannels.att(pdu))
                }
            case .disconnect:
                actions.append(.disconnect(reason: 0x13))
            }
        }
        return actions
    }

    package var attributeDatabase: AttributeDatabase? { server.database }

    package mutating func securityChanged(_ level: SecurityLevel, at now: Duration) -> [PeripheralAction] {
        server.setLinkSecurity(level)
        return []
    }

    // MARK: ControllablePeripheral

    /// The person's weight as the keys set it (the last step's reading to begin with).
    package private(set) var personKilograms: Double = 0
    /// Whether the person at the keyboard has put someone on the scale.
    package private(set) var occupied = false

    package var controls: [PeripheralControl] {
        [PeripheralControl(key: "s", label: "step on/off"), PeripheralControl(key: "+", label: "weight +0.5 kg"),
         PeripheralControl(key: "-", label: "weight -0.5 kg")]
    }

    package var stateSummary: String {
        (occupied ? "occupied" : "empty") + " · person " + kilogramsText(personKilograms)
            + (server.configuration(ofValue: measurementHandle) & 0x0002 != 0 ? " · indications on" : "")
    }

    /// `s` steps on (a settling reading, then the weight twice, as the scale settles) or off;
    /// `+`/`-` change the weight by 0.5 kg, indicated at once while someone stands on it.
    package mutating func perform(_ key: Character, at now: Duration) -> [PeripheralAction] {
        switch key {
        case "s":
            occupied.toggle()
            guard occupied else { return [] }
            behaviour.schedule.add(.live(personKilograms * 0.97), at: now + .milliseconds(300))
            behaviour.schedule.add(.live(personKilograms), at: now + .milliseconds(700))
            behaviour.schedule.add(.live(personKilograms), at: now + .milliseconds(1100))
        case "+", "-":
            personKilograms = max(0, personKilograms + (key == "+" ? 0.5 : -0.5))
            if occupied { behaviour.schedule.add(.live(personKilograms), at: now + .milliseconds(400)) }
        default:
            break
        }
        return []
    }

    package mutating func received(_ frame: L2CAPFrame, at now: Duration) -> [PeripheralAction] {
        switch PeripheralChannels.route(frame) {
        case .att(let pdu):
            behaviour.now = now
            return server.receive(pdu, behaviour: &behaviour, at: now).map(PeripheralChannels.att)
        case .reply(let frame):
            return [.send(frame)]
        case .parameterUpdateAnswered, .nothing:
            return []
        }
    }

    /// A Weight Measurement (flags, weight, no optional fields): SI in 0.005 kg, or imperial in
    /// 0.01 lb when the scale shows pounds.
    static func weightMeasurement(_ reading: WeightReading) -> [UInt8] {
        guard reading.kilograms.isFinite, reading.kilograms >= 0 else { return [0x00] + LittleEndian.u16(0xFFFF) }
        if reading.displayUnit == .pounds {
            return [0x01] + LittleEndian.u16(UInt16(clamping: Int((reading.kilograms / 0.45359237 / 0.01).rounded())))
        }
        return [0x00] + LittleEndian.u16(UInt16(clamping: Int((reading.kilograms / 0.005).rounded())))
    }

    struct Behaviour: ATTServerBehaviour {
        enum Due: Sendable { case reading(Int), live(Double), disconnect }

        let measurementHandle: UInt16
        let steps: [FakeScale.Step]
        let tail: Duration?
        var now = Duration.zero
        var started = false
        var schedule = SimulationSchedule<Due>(capacity: 256)

        mutating func reset() {
            started = false
            schedule.removeAll()
        }

        mutating func read(_ handle: UInt16) -> Result<[UInt8], ATTRefusal> { .failure(.readNotPermitted) }

        mutating func write(_ value: [UInt8], to handle: UInt16, withResponse: Bool) -> ATTRefusal? {
            ATTRefusal(ATTErrorCode.writeNotPermitted)
        }

        /// The readings play once per connection, from the moment indications are enabled.
        mutating func clientConfigurationChanged(valueHandle: UInt16, to value: UInt16) {
            guard valueHandle == measurementHandle, value & 0x0002 != 0, !started else { return }
            started = true
            var at = now
            for (index, step) in steps.prefix(schedule.capacity - 1).enumerated() {
                at += step.after
                schedule.add(.reading(index), at: at)
            }
        }
    }
}
