import HAL

/// The wired Xbox 360 pad (045e:028e), driven through libusb on interface 0's interrupt OUT endpoint.
public struct Xbox360PadDriver: Driver {
    public static let identity = USBIdentity(vendor: 0x045E, product: 0x028E)

    public init() {}

    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "xbox360-usb", name: "Xbox 360 wired pad (libusb)", kind: .hapticPad,
                         rules: [.usb(vendor: Self.identity.vendor, product: Self.identity.product)])
    }
}
