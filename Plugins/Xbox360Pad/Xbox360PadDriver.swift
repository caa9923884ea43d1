import HAL
import Transports

/// The wired Xbox 360 pad (045e:028e), driven through libusb on interface 0's interrupt OUT endpoint.
public struct Xbox360PadDriver: HapticPadDriver {
    /// The wired pad's USB vendor and product, 045e:028e; the only identity this driver opens.
    public static let identity = USBIdentity(vendor: 0x045E, product: 0x028E)
    /// Interface 0 of a 360 pad is vendor-specific class ff, subclass 5d, protocol 01 (the
    /// controls); the others carry the headset and the security handshake.
    public static let controlInterface = USBInterruptPipe.InterfaceClass(class: 0xFF, subclass: 0x5D, protocol: 0x01)

    /// Opt-in: take the pad from the kernel's `xpad` driver for as long as the actuator is open
    /// (the pad's evdev node vanishes meanwhile), and give it back on close.
    public var detachKernelDriver: Bool
    /// How long one report may take; short, so a stalled pad fails a cue instead of holding it up.
    public var transferTimeout: Duration

    /// Defaults leave `xpad` attached and give each report 300 ms.
    public init(detachKernelDriver: Bool = false, transferTimeout: Duration = .milliseconds(300)) {
        self.detachKernelDriver = detachKernelDriver
        self.transferTimeout = transferTimeout
    }

    /// Registry entry: id "xbox360-usb", matching USB 045e:028e.
    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "xbox360-usb", name: "Xbox 360 wired pad (libusb)", kind: .hapticPad,
                         rules: [.usb(vendor: Self.identity.vendor, product: Self.identity.product)])
    }

    /// `open(_:)` as a type-erased actuator, with this driver's own `detachKernelDriver`.
    public func openActuator(_ uri: DeviceURI) throws(HapticError) -> any RumbleActuator {
        try open(uri)
    }

    /// Detaches `xpad` when either this driver or the person's options ask for it.
    public func openActuator(_ uri: DeviceURI, options: HapticOpenOptions) throws(HapticError) -> any RumbleActuator {
        var driver = self
        driver.detachKernelDriver = detachKernelDriver || options.detachKernelDriver
        return try driver.open(uri)
    }

    /// `usb:045e:028e` (the first such pad) or `usb:045e:028e@BUS.ADDR` (that one).
    public func open(_ uri: DeviceURI) throws(HapticError) -> Xbox360Actuator {
        guard case .usb(let identity, let bus, let address) = uri else {
            throw .unsupported("the Xbox 360 driver opens usb:045e:028e[@BUS.ADDR] URIs, not \(uri)")
        }
        guard identity == Self.identity else {
            throw .unsupported("usb:\(identity) is not a wired Xbox 360 pad (usb:\(Self.identity))")
        }
        let pipe: USBInterruptPipe
        do {
            pipe = try USBInterruptPipe.open(identity, bus: bus, address: address,
                                             options: .init(interface: 0, detachKernelDriver: detachKernelDriver, timeout: transferTimeout))
        } catch {
            throw Self.hapticError(error)
        }
        guard pipe.interfaceClass == Self.controlInterface else {
            pipe.close()
            throw .unsupported("interface 0 of usb:\(pipe.name) is class \(pipe.interfaceClass), not a 360 pad's controls (\(Self.controlInterface))")
        }
        return Xbox360Actuator(pipe: pipe)
    }

    /// USB failures in the words of someone holding a pad.
    static func hapticError(_ error: USBPipeError) -> HapticError {
        switch error {
        case .disappeared(let device): .disappeared("usb:\(device)")
        case .permissionDenied(let device): .permissionDenied("usb:\(device)")
        case .kernelDriverAttached:
            .busy("the kernel's xpad driver holds this pad: use evdev:/dev/input/eventN (hwprobe list shows it) or pass --detach-kernel-driver")
        case .busy(let why): .busy(why)
        case .notFound(let what): .notFound("no Xbox 360 pad usb:\(what) is attached: check the cable, or run `hwprobe list`")
        case .unsuitable(let why): .unsupported(why)
        case .timedOut(let why), .io(let why): .io(why)
        case .unavailable: .io(error.description)
        }
    }
}
