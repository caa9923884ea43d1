import HAL
import Transports

/// Any pad the kernel drives with force feedback: the generic fallback, claimed only when no
/// device-specific driver matches more precisely.
public struct EvdevRumbleDriver: HapticPadDriver {
    public init() {}

    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "evdev-rumble", name: "Force-feedback pad (evdev FF_RUMBLE)", kind: .hapticPad,
                         rules: [.evdev(.rumble)])
    }

    public func openActuator(_ uri: DeviceURI) throws(HapticError) -> any RumbleActuator {
        guard case .evdev(let path) = uri else {
            throw .unsupported("\(descriptor.id) drives evdev:/dev/input/eventN devices, not \(uri)")
        }
        return try EvdevRumbleActuator(device: EvdevForceFeedback(path: path))
    }
}
