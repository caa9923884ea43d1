import HAL

/// Bluetooth SIG Weight Scale (0x181D) and Body Composition (0x181B) services: any scale that
/// follows the standard profiles, whoever made it.
public struct StandardScaleDriver: Driver {
    public static let weightScaleService = BluetoothUUID(0x181D)
    public static let bodyCompositionService = BluetoothUUID(0x181B)

    public init() {}

    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "standard-scale", name: "Bluetooth Weight Scale / Body Composition profile",
                         kind: .scale,
                         rules: [.serviceUUID(Self.weightScaleService), .serviceUUID(Self.bodyCompositionService)])
    }
}
