import HAL
import Transports

/// The body-scan mirror profile v1 (docs/mirror-gatt-v1.md): recognised by its manufacturer data
/// (`FFFF` then "MR") or its 128-bit service.
public struct MirrorV1Driver: GATTScaleDriver {
    /// The profile's 128-bit service (`7B9E0001-…`); advertising it is enough to match.
    public static let service = MirrorGATT.service
    /// Company ID of the manufacturer data a mirror advertises (0xFFFF, the ID the SIG reserves for testing).
    public static let companyID: UInt16 = 0xFFFF
    /// The bytes "MR" that must open that manufacturer data for the driver to match.
    public static let marker: [UInt8] = [0x4D, 0x52]

    /// The driver keeps no state; one instance serves every mirror.
    public init() {}

    /// Registry entry: id "mirror-v1", matching on the "MR" manufacturer data or the service UUID.
    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "mirror-v1", name: "Body-scan mirror (profile v1)", kind: .mirror,
                         rules: [.manufacturer(companyID: Self.companyID, prefix: Self.marker), .serviceUUID(Self.service)])
    }

    /// Discovers the mirror service, checks all eight characteristics, subscribes and reports current values;
    /// throws `.opening` when any step fails.
    public func open(_ connection: BLEConnection, device: DiscoveredDevice, clock: any Clock<Duration>) async throws(ScaleError) -> any ScaleConnection {
        try await MirrorConnection.open(connection, device: device)
    }
}
