import HAL

/// The UUIDs of docs/mirror-gatt-v1.md: `7B9E00XX-3C2A-4F1B-9E6D-5A4C3B2A1F00`, where XX is 01 for the
/// service and 02… for its characteristics. The profile's, so they live with its driver; hwprobe's
/// checks and names take them from here, while the simulated mirrors (HAL's fakes, the virtual
/// controller's peripheral) spell them from the spec on their own, as independent peers do.
public enum MirrorGATT {
    /// The service (XX = 01) or characteristic `id` (02 deviceInfo … 09 result).
    public static func uuid(_ id: UInt8) -> BluetoothUUID {
        BluetoothUUID(high: 0x7B9E_0000_3C2A_4F1B | UInt64(id) << 32, low: 0x9E6D_5A4C_3B2A_1F00)
    }

    /// `7B9E0001-3C2A-4F1B-9E6D-5A4C3B2A1F00`.
    public static let service = uuid(0x01)

    /// The profile's own ATT application errors (docs/mirror-gatt-v1.md), as a person reads them.
    public static let applicationErrors: [UInt8: String] = [0x80: "Not Aligned", 0x81: "Not Initialised", 0x82: "Not Ready"]

    /// Whether `uuid` is the mirror service's or one of its characteristics'.
    public static func isMirror(_ uuid: BluetoothUUID) -> Bool {
        names.contains { $0.uuid == uuid }
    }

    /// The service and its characteristics, named as the profile's table names them, for
    /// `BluetoothNames(profiles:)`.
    public static let names: [BluetoothNames.Entry] =
        [BluetoothNames.Entry(uuid: service, name: "Body-scan Mirror", profile: "mirror", standsAlone: true)]
        + [(0x02, "deviceInfo"), (0x03, "init"), (0x04, "scanToken"), (0x05, "scanState"), (0x06, "scale"),
           (0x07, "alignment"), (0x08, "control"), (0x09, "result")].map {
            BluetoothNames.Entry(uuid: uuid($0.0), name: $0.1, profile: "mirror")
        }
}
