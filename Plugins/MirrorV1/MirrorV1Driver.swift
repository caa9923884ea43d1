import HAL
import Transports

/// The body-scan mirror profile v1 (mirror-gatt-v1.md): recognised by its manufacturer data
/// (`FFFF` then "MR") or its 128-bit service.
public struct MirrorV1Driver: GATTScaleDriver {
    public static let service = MirrorGATT.service
    public static let companyID: UInt16 = 0xFFFF
    public static let marker: [UInt8] = [0x4D, 0x52]

    public init() {}

    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "mirror-v1", name: "Body-scan mirror (profile v1)", kind: .mirror,
                         rules: [.manufacturer(companyID: Self.companyID, prefix: Self.marker), .serviceUUID(Self.service)])
    }

    public func open(_ connection: BLEConnection, device: DiscoveredDevice, clock: any Clock<Duration>) async throws(ScaleError) -> any ScaleConnection {
        try await MirrorConnection.open(connection, device: device)
    }
}
