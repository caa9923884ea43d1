import HAL

/// Sony DualShock 4, first and second revision, through hidraw output report 0x05.
public struct DualShock4Driver: Driver {
    public static let identities = [USBIdentity(vendor: 0x054C, product: 0x05C4), USBIdentity(vendor: 0x054C, product: 0x09CC)]

    public init() {}

    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "dualshock4-hidraw", name: "DualShock 4 (hidraw)", kind: .hapticPad,
                         rules: Self.identities.map { .hidraw(vendor: $0.vendor, product: $0.product) })
    }
}
