/// Names for the UUIDs a person at the bench meets: the Bluetooth SIG's assigned numbers for the
/// services, characteristics, descriptors and declarations that matter to this project (and the
/// common ones around them), plus whatever a profile of our own adds (the mirror plugin's
/// `MirrorGATT.names`: HAL knows no profile's UUIDs).
///
/// One table for everything that words a UUID (`gatt`'s dump and JSON, `-v`), so the same UUID is
/// never called two things. The SIG's names are facts, copied from the Bluetooth SIG's
/// *Assigned Numbers* document (section 3, "UUIDs": 16-bit UUIDs for services, characteristics,
/// descriptors and GATT declarations; the same lists as `assigned_numbers/uuids/*.yaml` in the
/// SIG's public repository). Two spellings differ from the document on purpose: `1800` and `1801`
/// are listed there as "GAP" and "GATT"; they are called by the names of their services,
/// Generic Access and Generic Attribute, as the Core Specification and every GATT browser do.
public struct BluetoothNames: Sendable {
    /// One named UUID. `profile` says whose name it is when it is not the SIG's (`mirror`).
    public struct Entry: Sendable, Hashable {
        /// The UUID being named.
        public var uuid: BluetoothUUID
        /// The name shown in place of the UUID, spelled as its document spells it.
        public var name: String
        /// The profile the name belongs to (`mirror`); nil for the SIG's own names.
        public var profile: String?
        /// Whether the name says whose it is by itself (a profile's service, `Body-scan Mirror`),
        /// so ``BluetoothNames/qualifiedName(of:)`` does not prefix the profile.
        public var standsAlone: Bool

        /// Builds an entry; without a profile it is a SIG name.
        public init(uuid: BluetoothUUID, name: String, profile: String? = nil, standsAlone: Bool = false) {
            self.uuid = uuid
            self.name = name
            self.profile = profile
            self.standsAlone = standsAlone
        }
    }

    /// Every entry, SIG ones first in UUID order, then the profiles' as given.
    public let all: [Entry]
    private let byUUID: [BluetoothUUID: Entry]

    /// The SIG's names and `profiles`' (a UUID listed twice keeps its first name).
    public init(profiles: [Entry] = []) {
        all = Self.sig.map { Entry(uuid: BluetoothUUID($0.0), name: $0.1, standsAlone: true) } + profiles
        byUUID = Dictionary(all.map { ($0.uuid, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The SIG's names alone.
    public static let standard = BluetoothNames()

    /// The name alone: `Battery Level`, `Weight Scale`, `scanState` (as its profile spells it).
    public func name(of uuid: BluetoothUUID) -> String? { byUUID[uuid]?.name }

    /// The name where the UUID says nothing of where it comes from: our profiles' names carry the
    /// profile (`mirror scanState`), the SIG's stand alone (`Weight Measurement`).
    public func qualifiedName(of uuid: BluetoothUUID) -> String? {
        guard let entry = byUUID[uuid] else { return nil }
        guard let profile = entry.profile, !entry.standsAlone else { return entry.name }
        return "\(profile) \(entry.name)"
    }

    /// The whole entry for `uuid`, profile included.
    public func entry(for uuid: BluetoothUUID) -> Entry? { byUUID[uuid] }

    /// The Bluetooth SIG's assigned 16-bit UUIDs (Assigned Numbers, section 3, "UUIDs").
    private static let sig: [(UInt16, String)] = [
        // GATT services
        (0x1800, "Generic Access"), (0x1801, "Generic Attribute"), (0x1802, "Immediate Alert"), (0x1803, "Link Loss"),
        (0x1804, "Tx Power"), (0x1805, "Current Time"), (0x1806, "Reference Time Update"), (0x1807, "Next DST Change"),
        (0x1808, "Glucose"), (0x1809, "Health Thermometer"), (0x180A, "Device Information"), (0x180D, "Heart Rate"),
        (0x180E, "Phone Alert Status"), (0x180F, "Battery"), (0x1810, "Blood Pressure"), (0x1811, "Alert Notification"),
        (0x1812, "Human Interface Device"), (0x1813, "Scan Parameters"), (0x1814, "Running Speed and Cadence"),
        (0x1815, "Automation IO"), (0x1816, "Cycling Speed and Cadence"), (0x1818, "Cycling Power"),
        (0x1819, "Location and Navigation"), (0x181A, "Environmental Sensing"), (0x181B, "Body Composition"),
        (0x181C, "User Data"), (0x181D, "Weight Scale"), (0x181E, "Bond Management"),
        (0x181F, "Continuous Glucose Monitoring"), (0x1820, "Internet Protocol Support"), (0x1821, "Indoor Positioning"),
        (0x1822, "Pulse Oximeter"), (0x1823, "HTTP Proxy"), (0x1824, "Transport Discovery"), (0x1825, "Object Transfer"),
        (0x1826, "Fitness Machine"), (0x1827, "Mesh Provisioning"), (0x1828, "Mesh Proxy"),
        (0x1829, "Reconnection Configuration"), (0x183A, "Insulin Delivery"), (0x183B, "Binary Sensor"),
        (0x183C, "Emergency Configuration"), (0x183D, "Authorization Control"), (0x183E, "Physical Activity Monitor"),
        (0x183F, "Elapsed Time"), (0x1840, "Generic Health Sensor"), (0x1847, "Device Time"),

        // GATT declarations: attribute types, met in raw ATT traffic
        (0x2800, "Primary Service"), (0x2801, "Secondary Service"), (0x2802, "Include"), (0x2803, "Characteristic"),

        // Descriptors
        (0x2900, "Characteristic Extended Properties"), (0x2901, "Characteristic User Description"),
        (0x2902, "Client Characteristic Configuration"), (0x2903, "Server Characteristic Configuration"),
        (0x2904, "Characteristic Presentation Format"), (0x2905, "Characteristic Aggregate Format"),
        (0x2906, "Valid Range"), (0x2907, "External Report Reference"), (0x2908, "Report Reference"),
        (0x2909, "Number of Digitals"), (0x290A, "Value Trigger Setting"), (0x290B, "Environmental Sensing Configuration"),
        (0x290C, "Environmental Sensing Measurement"), (0x290D, "Environmental Sensing Trigger Setting"),
        (0x290E, "Time Trigger Setting"), (0x290F, "Complete BR-EDR Transport Block Data"),

        // Characteristics
        // Generic Access, Generic Attribute
        (0x2A00, "Device Name"), (0x2A01, "Appearance"), (0x2A02, "Peripheral Privacy Flag"),
        (0x2A03, "Reconnection Address"), (0x2A04, "Peripheral Preferred Connection Parameters"),
        (0x2A05, "Service Changed"), (0x2AA6, "Central Address Resolution"), (0x2AC9, "Resolvable Private Address Only"),
        (0x2B29, "Client Supported Features"), (0x2B2A, "Database Hash"), (0x2B3A, "Server Supported Features"),
        // Immediate Alert, Link Loss, Tx Power
        (0x2A06, "Alert Level"), (0x2A07, "Tx Power Level"),
        // Current Time and its neighbours
        (0x2A08, "Date Time"), (0x2A09, "Day of Week"), (0x2A0A, "Day Date Time"), (0x2A0C, "Exact Time 256"),
        (0x2A0D, "DST Offset"), (0x2A0E, "Time Zone"), (0x2A0F, "Local Time Information"), (0x2A11, "Time with DST"),
        (0x2A12, "Time Accuracy"), (0x2A13, "Time Source"), (0x2A14, "Reference Time Information"),
        (0x2A16, "Time Update Control Point"), (0x2A17, "Time Update State"), (0x2A2B, "Current Time"),
        // Battery
        (0x2A19, "Battery Level"),
        // Health Thermometer
        (0x2A1C, "Temperature Measurement"), (0x2A1D, "Temperature Type"), (0x2A1E, "Intermediate Temperature"),
        (0x2A21, "Measurement Interval"),
        // Device Information
        (0x2A23, "System ID"), (0x2A24, "Model Number String"), (0x2A25, "Serial Number String"),
        (0x2A26, "Firmware Revision String"), (0x2A27, "Hardware Revision String"), (0x2A28, "Software Revision String"),
        (0x2A29, "Manufacturer Name String"), (0x2A2A, "IEEE 11073-20601 Regulatory Certification Data List"),
        (0x2A50, "PnP ID"),
        // Heart Rate
        (0x2A37, "Heart Rate Measurement"), (0x2A38, "Body Sensor Location"), (0x2A39, "Heart Rate Control Point"),
        // Human Interface Device, Scan Parameters
        (0x2A22, "Boot Keyboard Input Report"), (0x2A32, "Boot Keyboard Output Report"), (0x2A33, "Boot Mouse Input Report"),
        (0x2A4A, "HID Information"), (0x2A4B, "Report Map"), (0x2A4C, "HID Control Point"), (0x2A4D, "Report"),
        (0x2A4E, "Protocol Mode"), (0x2A4F, "Scan Interval Window"), (0x2A31, "Scan Refresh"),
        // Record Access Control Point (Glucose, Weight Scale and Body Composition records)
        (0x2A52, "Record Access Control Point"),
        // User Data
        (0x2A80, "Age"), (0x2A85, "Date of Birth"), (0x2A87, "Email Address"), (0x2A8A, "First Name"),
        (0x2A8C, "Gender"), (0x2A8E, "Height"), (0x2A90, "Last Name"), (0x2A98, "Weight"),
        (0x2A99, "Database Change Increment"), (0x2A9A, "User Index"), (0x2A9F, "User Control Point"), (0x2AA2, "Language"),
        // Body Composition, Weight Scale
        (0x2A9B, "Body Composition Feature"), (0x2A9C, "Body Composition Measurement"), (0x2A9D, "Weight Measurement"),
        (0x2A9E, "Weight Scale Feature"),
    ]
}
