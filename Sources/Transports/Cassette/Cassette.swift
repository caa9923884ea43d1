import HAL

/// Everything one cassette holds (format 1.1): the BLE peripherals of `BLECassette`, and the
/// cameras and haptic pads a command opened.
public struct Cassette: Hashable, Sendable {
    public var ble: BLECassette
    public var cameras: [CameraCassette]
    public var pads: [PadCassette]

    public init(ble: BLECassette = BLECassette(), cameras: [CameraCassette] = [], pads: [PadCassette] = []) {
        self.ble = ble
        self.cameras = cameras
        self.pads = pads
    }

    /// Sections of one kind a cassette may hold.
    public static let maximumMediaDevices = 16
}
