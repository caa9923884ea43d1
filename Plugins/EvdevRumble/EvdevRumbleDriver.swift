import HAL
import Transports

/// Any pad the kernel drives with force feedback: the generic fallback, claimed only when no
/// device-specific driver matches more precisely.
public struct EvdevRumbleDriver: HapticPadDriver {
    /// The driver keeps no state; one instance serves every force-feedback pad.
    public init() {}

    /// Registry entry: id "evdev-rumble", matching any evdev node that can FF_RUMBLE.
    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "evdev-rumble", name: "Force-feedback pad (evdev FF_RUMBLE)", kind: .hapticPad,
                         rules: [.evdev(.rumble)])
    }

    /// Opens `evdev:/dev/input/eventN` and sets full gain; throws `.unsupported` for any other URI.
    public func openActuator(_ uri: DeviceURI) throws(HapticError) -> any RumbleActuator {
        guard case .evdev(let path) = uri else {
            throw .unsupported("\(descriptor.id) drives evdev:/dev/input/eventN devices, not \(uri)")
        }
        return try EvdevRumbleActuator(device: EvdevForceFeedback(path: path))
    }
}
