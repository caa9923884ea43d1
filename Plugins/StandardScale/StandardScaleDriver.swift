import HAL
import Transports

/// Bluetooth SIG Weight Scale (0x181D) and Body Composition (0x181B) services: any scale that
/// follows the standard profiles, whoever made it.
public struct StandardScaleDriver: Driver {
    /// Weight Scale Service; advertising it is enough for this driver to match.
    public static let weightScaleService = BluetoothUUID(0x181D)
    /// Body Composition Service; advertising it is enough for this driver to match.
    public static let bodyCompositionService = BluetoothUUID(0x181B)
    /// Weight Measurement characteristic (indicate), decoded by `WeightMeasurement`.
    public static let weightMeasurement = BluetoothUUID(0x2A9D)
    /// Weight Scale Feature characteristic (read), decoded by `WeightScaleFeature`.
    public static let weightScaleFeature = BluetoothUUID(0x2A9E)
    /// Body Composition Measurement characteristic (indicate), decoded by `BodyCompositionMeasurement`.
    public static let bodyCompositionMeasurement = BluetoothUUID(0x2A9C)
    /// Body Composition Feature characteristic (read), decoded by `BodyCompositionFeature`.
    public static let bodyCompositionFeature = BluetoothUUID(0x2A9B)

    /// The ATT_MTU we offer: large enough that a whole Body Composition Measurement (30 bytes)
    /// fits one indication, though the assembler copes when the peer keeps 23.
    public static let preferredMTU: UInt16 = 247

    /// The driver keeps no state; one instance serves every standard scale.
    public init() {}

    /// Registry entry: id "standard-scale", matching any device that advertises 0x181D or 0x181B.
    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "standard-scale", name: "Bluetooth Weight Scale / Body Composition profile",
                         kind: .scale,
                         rules: [.serviceUUID(Self.weightScaleService), .serviceUUID(Self.bodyCompositionService)])
    }
}

extension StandardScaleDriver: GATTScaleDriver {
    /// Exchanges the MTU, finds the Weight Scale and/or Body Composition service, reads their
    /// feature characteristics, and subscribes to the measurement indications. Every step is an
    /// ATT transaction bounded by the bearer's 30-second timeout (on the link's clock), so no
    /// extra deadline is kept here. The per-handle streams `subscribe` returns go unread: the
    /// connection reads the bearer's ordered stream of all notifications instead, so a weight and
    /// the body composition sent after it are seen in the order the scale sent them.
    public func open(_ connection: BLEConnection, device: DiscoveredDevice,
                     clock: any Clock<Duration>) async throws(ScaleError) -> any ScaleConnection {
        do {
            _ = try await connection.bearer.exchangeMTU(Self.preferredMTU)
        } catch .att {
            // The peer refused the exchange: the default ATT_MTU of 23 works, the assembler copes.
        } catch {
            throw error.scaleError()
        }
        do {
            // Listen before subscribing so no indication sent right after the CCCD write is missed.
            let notifications = connection.bearer.notifications()
            let weight = try await measurementCharacteristic(
                Self.weightMeasurement, feature: Self.weightScaleFeature, in: Self.weightScaleService, on: connection)
            let composition = try await measurementCharacteristic(
                Self.bodyCompositionMeasurement, feature: Self.bodyCompositionFeature, in: Self.bodyCompositionService,
                on: connection)
            guard weight != nil || composition != nil else {
                throw ScaleError.unsupported("a Weight Measurement (2A9D) or Body Composition Measurement (2A9C) to subscribe to")
            }
            for found in [weight, composition].compactMap({ $0 }) {
                _ = try await connection.gatt.subscribe(found.characteristic)
            }
            return StandardScaleConnection(
                device: device, link: connection, notifications: notifications,
                weightHandle: weight?.characteristic.valueHandle, compositionHandle: composition?.characteristic.valueHandle,
                weightScaleFeature: weight?.feature.flatMap { try? WeightScaleFeature(parsing: $0) },
                bodyCompositionFeature: composition?.feature.flatMap { try? BodyCompositionFeature(parsing: $0) })
        } catch {
            throw .opening(error)
        }
    }

    /// The measurement characteristic of `service` when the device has it, with the feature
    /// value when it can be read (the feature only describes; a failed read is not fatal).
    private func measurementCharacteristic(_ uuid: BluetoothUUID, feature featureUUID: BluetoothUUID,
                                           in service: BluetoothUUID, on connection: BLEConnection)
        async throws(BLEError) -> (characteristic: GATTCharacteristic, feature: [UInt8]?)? {
        guard let found = try await connection.gatt.primaryServices(uuid: service).first else { return nil }
        let characteristics = try await connection.gatt.characteristics(of: found)
        guard let measurement = characteristics.first(where: { $0.uuid == uuid }) else { return nil }
        var feature: [UInt8]?
        if let featureCharacteristic = characteristics.first(where: { $0.uuid == featureUUID }),
           featureCharacteristic.properties.contains(.read) {
            do { feature = try await connection.gatt.read(featureCharacteristic.valueHandle) } catch .att {}
        }
        return (measurement, feature)
    }
}
