import BeurerSanitasScale
import DualShock4
import EvdevRumble
import HAL
import IcomonScale
import MiScale
import MirrorV1
import OneByoneScale
import QNScale
import StandardScale
import Xbox360Pad
import YunmaiScale

/// Every linked driver, in registration order (which breaks ties between equally specific rules).
/// Adding a device is adding a folder under Plugins/ and a line here.
let linkedDrivers: [any Driver] = [
    MirrorV1Driver(),
    MiScaleDriver(),
    QNBroadcastDriver(),
    QNScaleDriver(),
    IcomonScaleDriver(),
    OneByoneScaleDriver(),
    YunmaiScaleDriver(),
    BeurerSanitasScaleDriver(),
    StandardScaleDriver(),
    Xbox360PadDriver(),
    DualShock4Driver(),
    EvdevRumbleDriver(),
]

extension DriverRegistry {
    /// The registry of every linked driver: built once, the one every command and lookup uses.
    static let linked = DriverRegistry(drivers: linkedDrivers)
}
