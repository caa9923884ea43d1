import HAL
import Transports

/// One attribute of a GATT server (Core Vol 3 Part F §3.2): handle, type, value and who may do what.
package struct Attribute: Hashable, Sendable {
    package enum Value: Hashable, Sendable {
        /// Declarations and values that never change.
        case fixed([UInt8])
        /// Asked of the peripheral's behaviour at each read (and handed to it at each write).
        case dynamic
        /// A Client Characteristic Configuration descriptor: the ATT server keeps it per link.
        case clientConfiguration
    }

    package struct Permissions: OptionSet, Hashable, Sendable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        package static let read = Self(rawValue: 1 << 0)
        /// Write Request (with response).
        package static let write = Self(rawValue: 1 << 1)
        /// Write Command (without response).
        package static let writeCommand = Self(rawValue: 1 << 2)
    }

    package var handle: UInt16
    package var type: BluetoothUUID
    package var value: Value
    package var permissions: Permissions
    /// For a service declaration: the last handle of its group.
    package var groupEnd: UInt16?
    /// What the link must have before the value is read or written.
    package var security = AttributeSecurity()

    package static let primaryService = BluetoothUUID(0x2800)
    package static let secondaryService = BluetoothUUID(0x2801)
    package static let characteristicDeclaration = BluetoothUUID(0x2803)
    package static let clientConfigurationType = BluetoothUUID(0x2902)
}

/// How secure a link is, or must be for an attribute: an encrypted link, an encrypted link whose
/// key came from an authenticated (MITM-protected) pairing (Core Vol 3 Part C §10.2).
package enum SecurityLevel: Int, Comparable, Hashable, Sendable, CaseIterable {
    case none, encrypted, authenticated

    package static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// What an attribute asks of the link before it is read, and before it is written.
package struct AttributeSecurity: Hashable, Sendable {
    package var read: SecurityLevel
    package var write: SecurityLevel

    package init(read: SecurityLevel = .none, write: SecurityLevel = .none) {
        self.read = read
        self.write = write
    }
}

/// A characteristic as a profile describes it, for `AttributeDatabase.Builder`.
package struct CharacteristicDefinition: Sendable {
    package var uuid: BluetoothUUID
    package var properties: CharacteristicProperties
    /// nil: the value is dynamic (asked of the peripheral's behaviour).
    package var fixedValue: [UInt8]?
    /// Readable even though the properties do not say so (the core specification lets a server
    /// decide); false by default, so a characteristic without `read` answers Read Not Permitted.
    package var extraPermissions: Attribute.Permissions
    /// What the declaration says, when it is not what the characteristic does: for peripherals
    /// that deviate from their profile on purpose (conformance tests); nil says `properties`.
    package var declaredProperties: CharacteristicProperties?
    /// No Client Characteristic Configuration descriptor even though it notifies or indicates
    /// (another deliberate deviation).
    package var omitClientConfiguration = false
    /// What the link needs before the value is read or written (its CCCD needs nothing).
    package var security: AttributeSecurity
    /// Descriptors after the value (and CCCD): type and fixed value, readable.
    package var descriptors: [(type: BluetoothUUID, value: [UInt8])]

    package init(_ uuid: BluetoothUUID, _ properties: CharacteristicProperties, value: [UInt8]? = nil,
                extraPermissions: Attribute.Permissions = [], declaredProperties: CharacteristicProperties? = nil,
                omitClientConfiguration: Bool = false, security: AttributeSecurity = AttributeSecurity(),
                descriptors: [(type: BluetoothUUID, value: [UInt8])] = []) {
        self.uuid = uuid
        self.properties = properties
        fixedValue = value
        self.extraPermissions = extraPermissions
        self.declaredProperties = declaredProperties
        self.omitClientConfiguration = omitClientConfiguration
        self.security = security
        self.descriptors = descriptors
    }
}

/// The attributes of a GATT server in handle order, as a profile lays them out: each service's
/// declaration, then per characteristic its declaration, value and (for notify or indicate) a
/// CCCD. Handles are given out from 1 up; the database is fixed once built (no Service Changed
/// is ever needed).
package struct AttributeDatabase: Hashable, Sendable {
    package private(set) var attributes: [Attribute] = []

    package init() {}

    package var lastHandle: UInt16 { attributes.last?.handle ?? 0 }

    package func attribute(_ handle: UInt16) -> Attribute? {
        // Handles are 1…n without gaps, so the index is the handle less one.
        guard handle >= 1, Int(handle) <= attributes.count else { return nil }
        return attributes[Int(handle) - 1]
    }

    /// Attributes whose handle lies in `start...end` (empty for an inverted range).
    package func attributes(in start: UInt16, _ end: UInt16) -> ArraySlice<Attribute> {
        guard start >= 1, start <= end, Int(start) <= attributes.count else { return [] }
        let upper = min(Int(end), attributes.count)
        return attributes[(Int(start) - 1)..<upper]
    }

    /// The value handle of the first characteristic with `uuid`.
    package func valueHandle(of uuid: BluetoothUUID) -> UInt16? {
        attributes.first { $0.type == uuid && $0.handle > 1 && attributes[Int($0.handle) - 2].type == Attribute.characteristicDeclaration }?
            .handle
    }

    /// The CCCD belonging to a characteristic value, if it has one.
    package func clientConfigurationHandle(forValue handle: UInt16) -> UInt16? {
        for attribute in attributes(in: handle &+ 1, lastHandle) {
            if attribute.type == Attribute.characteristicDeclaration || attribute.groupEnd != nil { return nil }
            if attribute.type == Attribute.clientConfigurationType { return attribute.handle }
        }
        return nil
    }

    /// The characteristic value a CCCD configures, with its properties.
    package func characteristic(ofClientConfiguration handle: UInt16) -> (valueHandle: UInt16, properties: CharacteristicProperties)? {
        var index = Int(handle) - 2
        while index >= 0 {
            let attribute = attributes[index]
            if attribute.type == Attribute.characteristicDeclaration, case .fixed(let declaration) = attribute.value,
               declaration.count >= 3 {
                return (UInt16(declaration[1]) | UInt16(declaration[2]) << 8, CharacteristicProperties(rawValue: declaration[0]))
            }
            if attribute.groupEnd != nil { return nil }
            index -= 1
        }
        return nil
    }

    /// Lays out services in the order added.
    package struct Builder: Sendable {
        private var database = AttributeDatabase()

        package init() {}

        package mutating func service(_ uuid: BluetoothUUID, _ characteristics: [CharacteristicDefinition]) {
            let start = UInt16(database.attributes.count + 1)
            database.attributes.append(Attribute(handle: start, type: Attribute.primaryService, value: .fixed(uuid.littleEndianBytes),
                                                 permissions: .read, groupEnd: start))
            for characteristic in characteristics {
                let declaration = UInt16(database.attributes.count + 1)
                let valueHandle = declaration + 1
                let declared: [UInt8] = [(characteristic.declaredProperties ?? characteristic.properties).rawValue] + LittleEndian.u16(valueHandle)
                    + characteristic.uuid.littleEndianBytes
                database.attributes.append(Attribute(handle: declaration, type: Attribute.characteristicDeclaration,
                                                     value: .fixed(declared), permissions: .read))
                var permissions = characteristic.extraPermissions
                if characteristic.properties.contains(.read) { permissions.insert(.read) }
                if characteristic.properties.contains(.write) { permissions.insert(.write) }
                if characteristic.properties.contains(.writeWithoutResponse) { permissions.insert(.writeCommand) }
                database.attributes.append(Attribute(handle: valueHandle, type: characteristic.uuid,
                                                     value: characteristic.fixedValue.map { .fixed($0) } ?? .dynamic,
                                                     permissions: permissions, security: characteristic.security))
                if !characteristic.properties.isDisjoint(with: [.notify, .indicate]), !characteristic.omitClientConfiguration {
                    database.attributes.append(Attribute(handle: valueHandle + 1, type: Attribute.clientConfigurationType,
                                                         value: .clientConfiguration, permissions: [.read, .write]))
                }
                for descriptor in characteristic.descriptors {
                    database.attributes.append(Attribute(handle: UInt16(database.attributes.count + 1), type: descriptor.type,
                                                         value: .fixed(descriptor.value), permissions: .read))
                }
            }
            database.attributes[Int(start) - 1].groupEnd = UInt16(database.attributes.count)
        }

        /// Generic Access (Device Name, Appearance) and Generic Attribute (Service Changed), which
        /// every GATT server has (Core Vol 3 Part C §12, Part G §7).
        package mutating func standardServices(deviceName: String, appearance: UInt16) {
            service(BluetoothUUID(0x1800), [
                CharacteristicDefinition(BluetoothUUID(0x2A00), .read, value: Array(deviceName.utf8.prefix(248))),
                CharacteristicDefinition(BluetoothUUID(0x2A01), .read, value: LittleEndian.u16(appearance)),
            ])
            service(BluetoothUUID(0x1801), [CharacteristicDefinition(BluetoothUUID(0x2A05), .indicate, value: LittleEndian.u16(0x0001) + LittleEndian.u16(0xFFFF))])
        }

        package func build() -> AttributeDatabase { database }
    }
}
