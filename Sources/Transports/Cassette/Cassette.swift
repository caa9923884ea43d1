import HAL

/// Everything one cassette holds (format 1.1): the BLE peripherals of `BLECassette`, and the
/// cameras and haptic pads a command opened.
public struct Cassette: Hashable, Sendable {
    /// The Bluetooth LE part: peripherals, their advertising and connections.
    public var ble: BLECassette
    /// One entry per camera the command opened, with what it delivered.
    public var cameras: [CameraCassette]
    /// One entry per haptic pad the command opened, with what it did.
    public var pads: [PadCassette]

    /// Builds a cassette; every section empty by default.
    public init(ble: BLECassette = BLECassette(), cameras: [CameraCassette] = [], pads: [PadCassette] = []) {
        self.ble = ble
        self.cameras = cameras
        self.pads = pads
    }

    /// Sections of one kind a cassette may hold.
    public static let maximumMediaDevices = 16
}
