import HAL

/// Xiaomi Mi Smart Scale 2 and Mi Body Composition Scale 2: they broadcast each reading as
/// service data under the standard service UUIDs instead of offering the GATT profiles, so
/// service data (more specific than a listed service) is what marks them.
public struct MiScaleDriver: Driver {
    public init() {}

    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "mi-scale", name: "Xiaomi Mi Scale (broadcast)", kind: .scale,
                         rules: [.serviceData(BluetoothUUID(0x181B)), .serviceData(BluetoothUUID(0x181D))])
    }
}
