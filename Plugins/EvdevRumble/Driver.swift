import HAL

/// Any pad the kernel drives with force feedback: the generic fallback, claimed only when no
/// device-specific driver matches more precisely.
public struct EvdevRumbleDriver: Driver {
    public init() {}

    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "evdev-rumble", name: "Force-feedback pad (evdev FF_RUMBLE)", kind: .hapticPad,
                         rules: [.evdev(.rumble)])
    }
}
