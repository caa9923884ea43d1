/// What stays the same about a device when it is unplugged and plugged in again, so a lab with
/// ten identical pads or cameras can name each one in a script (issue 19, item 5).
///
/// Device nodes (`/dev/video2`, `/dev/hidraw3`) and USB addresses (`@1.7`) are handed out in
/// the order devices appear and change on every replug; these do not:
/// - `usbPort`: the physical port chain the device hangs off (`1-2.3`: bus 1, port 2 of the root
///   hub, port 3 of the hub there), the name the kernel gives the USB device in sysfs. Survives a
///   replug into the same socket; tells identical devices without serial numbers apart.
/// - `serial`: the device's own serial number (USB `iSerialNumber`, a HID device's `uniq`, which
///   is the Bluetooth address for a Bluetooth pad). Survives moving to another socket; cheap
///   devices often have none, or all the same one.
/// - `busInfo`: what a V4L2 driver reports as its bus (`usb-0000:00:14.0-2.3`,
///   `platform:vivid-000`); for a camera not on USB it is the only stable name there is.
public struct DeviceIdentity: Hashable, Sendable {
    /// The sysfs port chain (`1-2.3`); nil when the device is not on USB or the port was not found.
    public var usbPort: String?
    /// The device's own serial number or `uniq`; nil when it reports none.
    public var serial: String?
    /// V4L2's bus info; nil for anything that is not a camera.
    public var busInfo: String?

    /// Builds an identity from whatever was found; leave out what the device does not have.
    public init(usbPort: String? = nil, serial: String? = nil, busInfo: String? = nil) {
        self.usbPort = usbPort
        self.serial = serial
        self.busInfo = busInfo
    }

    /// No identity at all: for fakes, files and devices nothing stable could be read from.
    public static let unknown = DeviceIdentity()

    /// True when nothing stable is known, so the device can only be named by its node.
    public var isUnknown: Bool { usbPort == nil && serial == nil && busInfo == nil }

    /// Whether `text` is a USB port chain as sysfs names it: `BUS-PORT[.PORT]…`, all decimal
    /// (`1-2`, `3-1.4.2`). A bus-and-address (`1.7`) is not one.
    public static func isUSBPort(_ text: some StringProtocol) -> Bool {
        let halves = text.split(separator: "-", omittingEmptySubsequences: false)
        guard halves.count == 2, !halves[0].isEmpty, halves[0].allSatisfy(\.isASCIIDigit) else { return false }
        let ports = halves[1].split(separator: ".", omittingEmptySubsequences: false)
        return !ports.isEmpty && ports.count <= 7 && ports.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCIIDigit) }
    }

    /// Whether a serial number can go into a URI unchanged: printable ASCII without the URI's
    /// own separators or spaces, at most 126 characters (USB string descriptors hold 126).
    public static func isURISafeSerial(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.count <= 126 && text.unicodeScalars.allSatisfy { s in
            s.value > 0x20 && s.value < 0x7F && !"?&=@#%/\\\"'".unicodeScalars.contains(s)
        }
    }
}

/// A device named by its identity rather than its node: `usb:045e:028e@1-2.3`,
/// `usb:045e:028e?serial=3B0A71C2`, `v4l2:@platform:vivid-000`, `evdev:@1-4`,
/// `hidraw:?serial=a4:53:85:1c:2b:90`, `uart:@1-1.2?baud=115200`, `hci:AA:BB:CC:DD:EE:FF`.
/// hwprobe looks it up among what is attached when the command starts, so the same URI keeps
/// working after a replug gives the device another node.
public struct DeviceLocation: Hashable, Sendable, CustomStringConvertible {
    /// The URI's scheme: which sort of attached device the one meant is looked for among.
    public enum Kind: String, Hashable, Sendable {
        /// A Bluetooth controller, by its address (`hci:AA:BB:CC:DD:EE:FF`).
        case hci
        /// A serial HCI board, by its USB port (`uart:@1-1.2?baud=115200`).
        case uart
        /// A camera, by its V4L2 bus info (`v4l2:@platform:vivid-000`).
        case v4l2
        /// A USB device, by vendor:product with a port or serial (`usb:045e:028e@1-2.3`).
        case usb
        /// A hidraw node, by the device's serial (`hidraw:?serial=a4:53:85:1c:2b:90`).
        case hidraw
        /// An evdev node, by its USB port (`evdev:@1-4`).
        case evdev
    }

    /// The stable fact the device is found by: the part after `@`, `?serial=`, or a Bluetooth address.
    public enum Key: Hashable, Sendable {
        /// The sysfs port chain after `@`, e.g. `1-2.3`; survives a replug into the same socket.
        case usbPort(String)
        /// The device's own serial number or `uniq`, from `?serial=`.
        case serial(String)
        /// A camera's V4L2 bus info after `@`, e.g. `platform:vivid-000`.
        case busInfo(String)
        /// A controller by its Bluetooth address, as `hci:AA:BB:CC:DD:EE:FF`.
        case address(BLEAddress)
    }

    /// The sort of device looked for.
    public var kind: Kind
    /// What identifies the one meant among the attached devices of that kind.
    public var key: Key
    /// `usb:VID:PID…`: only a device with these IDs matches.
    public var usb: USBIdentity?
    /// `uart:…`'s line settings, carried to the port once it is found.
    public var baud: Int
    /// Whether the serial port uses hardware flow control (RTS/CTS); only `uart:` reads it.
    public var rtscts: Bool

    /// Builds a location; the line settings default to 1 Mbaud with flow control, a common HCI UART setup.
    public init(kind: Kind, key: Key, usb: USBIdentity? = nil, baud: Int = 1_000_000, rtscts: Bool = true) {
        self.kind = kind
        self.key = key
        self.usb = usb
        self.baud = baud
        self.rtscts = rtscts
    }

    /// Whether `identity` (of a device of this kind, already filtered by USB IDs) is the one meant.
    public func matches(_ identity: DeviceIdentity, address: BLEAddress? = nil) -> Bool {
        switch key {
        case .usbPort(let port): identity.usbPort == port
        case .serial(let serial): identity.serial == serial
        case .busInfo(let bus): identity.busInfo == bus
        case .address(let wanted): address == wanted
        }
    }

    /// The location written back as a URI, in the form it parses from.
    public var description: String {
        let ids = usb.map { "\($0)" } ?? ""
        let uart = kind == .uart ? "baud=\(baud)&rtscts=\(rtscts ? 1 : 0)" : ""
        switch key {
        case .usbPort(let port): return "\(kind.rawValue):\(ids)@\(port)" + (uart.isEmpty ? "" : "?" + uart)
        case .busInfo(let bus): return "\(kind.rawValue):\(ids)@\(bus)"
        case .serial(let serial): return "\(kind.rawValue):\(ids)?serial=\(serial)" + (uart.isEmpty ? "" : "&" + uart)
        case .address(let address): return "\(kind.rawValue):\(address)"
        }
    }

    /// In words, for "no … is attached" messages: `the USB device at port 1-2.3`.
    public var spoken: String {
        let what = switch kind {
        case .hci: "controller"
        case .uart: "serial port"
        case .v4l2: "camera"
        case .usb: usb.map { "USB device \($0)" } ?? "USB device"
        case .hidraw: "hidraw device"
        case .evdev: "input device"
        }
        return switch key {
        case .usbPort(let port): "\(what) at USB port \(port)"
        case .serial(let serial): "\(what) with serial number \(serial)"
        case .busInfo(let bus): "\(what) on bus \(bus)"
        case .address(let address): "\(what) with address \(address)"
        }
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
