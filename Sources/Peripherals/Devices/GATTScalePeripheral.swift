import BLEProtocol
import HAL
import Transports

/// A scale that takes a connection, of whichever family `Device` describes: it advertises as the
/// real device does, serves the family's GATT layout through an `ATTServer`, and sends the frames
/// `Device` makes of what `ScaleSimulation`'s display shows, once the central is ready for them.
///
/// The person on the scale follows `arrival`: on the bench (`automatic`) they step on the moment
/// a central is ready and off when it leaves, so every connection sees a whole weighing; under
/// `manual` only the controls move them, and a central that becomes ready while someone already
/// stands there is sent what the display shows at once, as a scale that keeps reporting would.
package struct GATTScalePeripheral<Device: ScaleGATTDevice>: ScalePeripheral {
    package let address: BLEAddress
    package let advertising: VirtualAdvertising
    package let name: String
    package let arrival: ScaleArrival
    /// The scale switches itself off (ends the link, 0x13) this long after its display settled,
    /// as many do to save their battery; nil: it stays on.
    package let powerOffAfterSettling: Duration?
    /// The person's body composition, sent by the families that carry it with their final reading.
    package var composition: ScaleBodyComposition?
    package private(set) var connected = false
    package private(set) var simulation: ScaleSimulation

    private var server: ATTServer
    private var behaviour: Behaviour
    /// The central is ready for readings (the last time we looked).
    private var listening = false
    private var powerOff: Duration?

    /// `name` replaces the device's own advertised name (a driver that knows the family by its
    /// name may then not recognise it).
    package init(_ device: Device, weightKilograms: Double, composition: ScaleBodyComposition? = nil, address: BLEAddress,
                 name: String? = nil, arrival: ScaleArrival = .automatic, settling: [ScaleSimulation.SettleStep] = ScaleSimulation.settling,
                 powerOffAfterSettling: Duration? = nil, interval: Duration = .milliseconds(100),
                 firstAdvertisement: Duration = .milliseconds(250), rssi: Int8 = -61) {
        self.address = address
        self.name = name ?? device.name
        self.arrival = arrival
        self.powerOffAfterSettling = powerOffAfterSettling
        self.composition = composition
        simulation = ScaleSimulation(weightKilograms: weightKilograms, steps: settling)
        let advertisement = Advertisement(flags: 0x06, localName: self.name, serviceUUIDs: device.advertisedServices)
        advertising = VirtualAdvertising(form: VirtualAdvertising.form(for: advertisement, extended: false), interval: interval,
                                         firstEvent: firstAdvertisement, rssi: rssi)
        var builder = AttributeDatabase.Builder()
        // Assigned Numbers, Appearance: Weight Scale category (0x032), generic.
        builder.standardServices(deviceName: self.name, appearance: 0x0C80)
        for service in device.services { builder.service(service.uuid, service.characteristics) }
        let database = builder.build()
        server = ATTServer(database: database, preferredMTU: device.preferredMTU)
        behaviour = Behaviour(device: device, database: database)
    }

    /// The family's state (what the central set up, what it was sent), for tests and screens.
    package var device: Device { behaviour.device }
    package var database: AttributeDatabase { server.database }
    /// The value handle of one of the family's characteristics.
    package func valueHandle(of characteristic: BluetoothUUID) -> UInt16? { server.database.valueHandle(of: characteristic) }

    // MARK: ScalePeripheral

    package var driverID: String { Device.driverID }
    package var weightKilograms: Double { simulation.weightKilograms }
    package var display: ScaleSimulation.Reading? { simulation.display }
    package var isOccupied: Bool { simulation.occupied }
    package mutating func stepOn() { simulation.stepOn() }
    package mutating func stepOff() { simulation.stepOff() }
    package mutating func setWeight(_ kilograms: Double) { simulation.setWeight(kilograms) }

    // MARK: VirtualPeripheral

    package var isAdvertising: Bool { !connected }

    package mutating func linkUp(_ link: VirtualLinkParameters, at now: Duration) -> [PeripheralAction] {
        connected = true
        listening = false
        powerOff = nil
        server.reset()
        behaviour.device.reset()
        return step(at: now)
    }

    package mutating func linkDown(reason: UInt8, at now: Duration) {
        connected = false
        listening = false
        powerOff = nil
        server.reset()
        behaviour.device.reset()
        if arrival == .automatic { simulation.stepOff() }
        // Nobody hears what happens now; the display still moves on.
        _ = simulation.advance(to: now)
    }

    package var nextDeadline: Duration? {
        [simulation.nextDeadline, powerOff, connected ? server.transactionDeadline : nil].compactMap { $0 }.min()
    }

    package mutating func advance(to now: Duration) -> [PeripheralAction] {
        // An indication unconfirmed for 30 s ends the bearer (Core Vol 3 Part F §3.3.3).
        if connected, server.expire(at: now) { return [.disconnect(reason: 0x13)] }
        return step(at: now)
    }

    package var attributeDatabase: AttributeDatabase? { server.database }

    package mutating func securityChanged(_ level: SecurityLevel, at now: Duration) -> [PeripheralAction] {
        server.setLinkSecurity(level)
        return []
    }

    package mutating func received(_ frame: L2CAPFrame, at now: Duration) -> [PeripheralAction] {
        switch PeripheralChannels.route(frame) {
        case .att(let pdu):
            behaviour.now = now
            let answers = server.receive(pdu, behaviour: &behaviour, at: now).map(PeripheralChannels.att)
            let outputs = behaviour.outputs
            behaviour.outputs = []
            return answers + send(outputs, at: now) + step(at: now)
        case .reply(let frame):
            return [.send(frame)]
        case .parameterUpdateAnswered, .nothing:
            return []
        }
    }

    /// Whatever fell due by `now`: the central becoming ready (and the person arriving), the
    /// display's changes as frames, the scale switching itself off.
    private mutating func step(at now: Duration) -> [PeripheralAction] {
        var actions: [PeripheralAction] = []
        let ready = connected && behaviour.device.isListening
        if ready, !listening {
            listening = true
            if arrival == .automatic, !simulation.occupied {
                simulation.stepOn()
            } else if let shown = simulation.display {
                actions += send(behaviour.device.show(.reading(shown), composition: composition, at: now), at: now)
            }
        } else if !ready {
            listening = false
        }
        for event in simulation.advance(to: now) {
            if listening { actions += send(behaviour.device.show(event, composition: composition, at: now), at: now) }
            if case .reading = event, !simulation.isSettling, connected, let tail = powerOffAfterSettling {
                powerOff = now + tail
            }
        }
        if let due = powerOff, due <= now, connected {
            powerOff = nil
            actions.append(.disconnect(reason: 0x13))
        }
        return actions
    }

    /// The device's outputs as the air carries them: notifications and indications go only to a
    /// central that subscribed to them (the ATT server keeps the CCCDs and the indication queue).
    private mutating func send(_ outputs: [ScaleDeviceOutput], at now: Duration) -> [PeripheralAction] {
        var actions: [PeripheralAction] = []
        for output in outputs {
            switch output {
            case .notify(let uuid, let value):
                if let handle = server.database.valueHandle(of: uuid), let pdu = server.notification(valueHandle: handle, value: value) {
                    actions.append(PeripheralChannels.att(pdu))
                }
            case .indicate(let uuid, let value):
                if let handle = server.database.valueHandle(of: uuid), let pdu = server.indication(valueHandle: handle, value: value, at: now) {
                    actions.append(PeripheralChannels.att(pdu))
                }
            case .disconnect(let reason):
                actions.append(.disconnect(reason: reason))
            }
        }
        return actions
    }

    /// Handles to the family's characteristics and back: what the ATT server asks of the device.
    struct Behaviour: ATTServerBehaviour {
        var device: Device
        let characteristics: [UInt16: BluetoothUUID]
        var now = Duration.zero
        var outputs: [ScaleDeviceOutput] = []

        init(device: Device, database: AttributeDatabase) {
            self.device = device
            var characteristics: [UInt16: BluetoothUUID] = [:]
            for attribute in database.attributes where attribute.type == Attribute.characteristicDeclaration {
                guard case .fixed(let declaration) = attribute.value, declaration.count >= 3 else { continue }
                let handle = UInt16(declaration[1]) | UInt16(declaration[2]) << 8
                if let value = database.attribute(handle) { characteristics[handle] = value.type }
            }
            self.characteristics = characteristics
        }

        mutating func read(_ handle: UInt16) -> Result<[UInt8], ATTRefusal> {
            guard let uuid = characteristics[handle] else { return .failure(.readNotPermitted) }
            return device.read(uuid, at: now)
        }

        mutating func write(_ value: [UInt8], to handle: UInt16, withResponse: Bool) -> ATTRefusal? {
            guard let uuid = characteristics[handle] else { return ATTRefusal(ATTErrorCode.writeNotPermitted) }
            let reply = device.write(value, to: uuid, withResponse: withResponse, at: now)
            outputs += reply.outputs
            return reply.refusal
        }

        mutating func clientConfigurationChanged(valueHandle: UInt16, to value: UInt16) {
            guard let uuid = characteristics[valueHandle] else { return }
            outputs += device.subscriptionChanged(uuid, to: value, at: now)
        }
    }
}


/// The keys of `hwprobe serve SCALE`: the person steps on and off, and the weight moves.
extension GATTScalePeripheral: ControllablePeripheral {
    package var controls: [PeripheralControl] { ScaleKeys.controls }
    package var stateSummary: String { ScaleKeys.summary(self) }
    package mutating func perform(_ key: Character, at now: Duration) -> [PeripheralAction] {
        ScaleKeys.perform(key, on: &self)
        return step(at: now)
    }
}
