import BLEProtocol
import HAL
import Transports

/// A device described as data (`serve profile:FILE`, docs/serve-profile.md), for devices no
/// driver or recording covers: its advertisement and a GATT database of services and
/// characteristics with properties, security requirements, values and descriptors.
///
/// Its behaviour is the plainest a GATT server can have: a read answers the value as it is now;
/// a write (request or command, wherever the properties allow one) replaces it and, when the
/// characteristic notifies or indicates and the client subscribed, sends the new value.
package struct ProfilePeripheral: VirtualPeripheral {
    /// One characteristic of the description.
    package struct Characteristic: Sendable {
        package var uuid: BluetoothUUID
        package var properties: CharacteristicProperties
        package var value: [UInt8]
        package var security: AttributeSecurity
        package var descriptors: [(type: BluetoothUUID, value: [UInt8])]

        package init(uuid: BluetoothUUID, properties: CharacteristicProperties, value: [UInt8], security: AttributeSecurity = AttributeSecurity(),
                     descriptors: [(type: BluetoothUUID, value: [UInt8])] = []) {
            self.uuid = uuid
            self.properties = properties
            self.value = value
            self.security = security
            self.descriptors = descriptors
        }
    }

    /// One primary service.
    package struct Service: Sendable {
        package var uuid: BluetoothUUID
        package var characteristics: [Characteristic]

        package init(uuid: BluetoothUUID, characteristics: [Characteristic]) {
            self.uuid = uuid
            self.characteristics = characteristics
        }
    }

    package let address: BLEAddress
    package let advertising: VirtualAdvertising
    package private(set) var connected = false
    private var server: ATTServer
    private var behaviour: Behaviour

    /// `name` is the Device Name characteristic's value (Generic Access is added first, with
    /// Generic Attribute, unless the description has its own 0x1800 service).
    package init(address: BLEAddress, advertising: VirtualAdvertising, name: String, appearance: UInt16 = 0, services: [Service]) {
        self.address = address
        self.advertising = advertising
        var builder = AttributeDatabase.Builder()
        if !services.contains(where: { $0.uuid == BluetoothUUID(0x1800) }) {
            builder.standardServices(deviceName: name, appearance: appearance)
        }
        for service in services {
            builder.service(service.uuid, service.characteristics.map {
                // Values are kept by the behaviour, so writes change what is read.
                CharacteristicDefinition($0.uuid, $0.properties, security: $0.security, descriptors: $0.descriptors)
            })
        }
        let database = builder.build()
        var values: [UInt16: [UInt8]] = [:]
        var properties: [UInt16: CharacteristicProperties] = [:]
        // The Builder gives handles in order: find each characteristic's value handle by walking
        // the declarations in that order.
        var declared = database.attributes.filter { $0.type == Attribute.characteristicDeclaration }.makeIterator()
        // Generic Access (Device Name, Appearance) and Generic Attribute (Service Changed) come
        // first when the builder added them.
        if !services.contains(where: { $0.uuid == BluetoothUUID(0x1800) }) {
            for _ in 0..<3 { _ = declared.next() }
        }
        for service in services {
            for characteristic in service.characteristics {
                guard let declaration = declared.next(), case .fixed(let bytes) = declaration.value, bytes.count >= 3 else { continue }
                let handle = UInt16(bytes[1]) | UInt16(bytes[2]) << 8
                values[handle] = characteristic.value
                properties[handle] = characteristic.properties
            }
        }
        server = ATTServer(database: database)
        behaviour = Behaviour(values: values, properties: properties)
    }

    package var database: AttributeDatabase { server.database }
    package var isAdvertising: Bool { !connected }
    package var nextDeadline: Duration? { connected ? server.transactionDeadline : nil }

    package mutating func linkUp(_ link: VirtualLinkParameters, at now: Duration) -> [PeripheralAction] {
        connected = true
        server.reset()
        return []
    }

    package mutating func linkDown(reason: UInt8, at now: Duration) {
        connected = false
        server.reset()
    }

    package mutating func advance(to now: Duration) -> [PeripheralAction] {
        connected && server.expire(at: now) ? [.disconnect(reason: 0x13)] : []
    }

    package var attributeDatabase: AttributeDatabase? { server.database }

    package mutating func securityChanged(_ level: SecurityLevel, at now: Duration) -> [PeripheralAction] {
        server.setLinkSecurity(level)
        return []
    }

    package mutating func received(_ frame: L2CAPFrame, at now: Duration) -> [PeripheralAction] {
        switch PeripheralChannels.route(frame) {
        case .att(let pdu):
            var actions = server.receive(pdu, behaviour: &behaviour, at: now).map(PeripheralChannels.att)
            for handle in behaviour.changed {
                let value = behaviour.values[handle] ?? []
                if let pdu = server.notification(valueHandle: handle, value: value) {
                    actions.append(PeripheralChannels.att(pdu))
                } else if let pdu = server.indication(valueHandle: handle, value: value, at: now) {
                    actions.append(PeripheralChannels.att(pdu))
                }
            }
            behaviour.changed = []
            return actions
        case .reply(let frame):
            return [.send(frame)]
        case .parameterUpdateAnswered, .nothing:
            return []
        }
    }

    struct Behaviour: ATTServerBehaviour {
        var values: [UInt16: [UInt8]]
        let properties: [UInt16: CharacteristicProperties]
        /// Values written since the last PDU, to notify.
        var changed: [UInt16] = []

        mutating func read(_ handle: UInt16) -> Result<[UInt8], ATTRefusal> {
            guard let value = values[handle] else { return .failure(.readNotPermitted) }
            return .success(value)
        }

        mutating func write(_ value: [UInt8], to handle: UInt16, withResponse: Bool) -> ATTRefusal? {
            guard values[handle] != nil else { return ATTRefusal(ATTErrorCode.writeNotPermitted) }
            values[handle] = value
            if properties[handle].map({ !$0.isDisjoint(with: [.notify, .indicate]) }) ?? false, !changed.contains(handle) {
                changed.append(handle)
            }
            return nil
        }

        mutating func clientConfigurationChanged(valueHandle: UInt16, to value: UInt16) {}
    }
}
