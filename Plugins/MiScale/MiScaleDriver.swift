import HAL

/// Xiaomi Mi Smart Scale 2 and Mi Body Composition Scale 2: they broadcast each reading as
/// service data under the standard service UUIDs instead of offering the GATT profiles, so
/// service data (more specific than a listed service) is what marks them.
public struct MiScaleDriver: Driver {
    /// Service data under 0x181B marks a Body Composition Scale 2 (13-byte frame).
    public static let bodyCompositionService = BluetoothUUID(0x181B)
    /// Service data under 0x181D marks a Smart Scale 2 (10-byte frame).
    public static let weightScaleService = BluetoothUUID(0x181D)

    /// The driver keeps no state; one instance serves every Mi scale.
    public init() {}

    /// Registry entry: id "mi-scale", matching service data (not just a listed service) under 0x181B or 0x181D.
    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "mi-scale", name: "Xiaomi Mi Scale (broadcast)", kind: .scale,
                         rules: [.serviceData(Self.bodyCompositionService), .serviceData(Self.weightScaleService)])
    }
}

extension MiScaleDriver: BroadcastScaleDriver {
    /// The reading in the scale's service data: 13 bytes under 0x181B (Body Composition Scale 2)
    /// or 10 bytes under 0x181D (Smart Scale 2). Any other length is not a Mi reading.
    public func reading(from advertisement: Advertisement) -> WeightReading? {
        if let data = advertisement.serviceData[Self.bodyCompositionService],
           let frame = MiScaleFrame(bodyCompositionServiceData: data) {
            return frame.reading
        }
        if let data = advertisement.serviceData[Self.weightScaleService],
           let frame = MiScaleFrame(weightScaleServiceData: data) {
            return frame.reading
        }
        return nil
    }
}
