/// A device named on the command line, per the contract's URI table.
public enum DeviceURI: Hashable, Sendable, CustomStringConvertible {
    /// A kernel Bluetooth controller (`hci:N`), opened through the HCI user channel.
    case hci(index: Int)
    /// A controller on a serial port speaking H4, e.g. a Zephyr `hci_uart` board.
    case uart(path: String, baud: Int, rtscts: Bool)
    /// An H4 controller over TCP, e.g. a virtual controller.
    case tcp(host: String, port: UInt16)
    /// A V4L2 camera node such as `/dev/video0`.
    case v4l2(path: String)
    /// A video file read as a camera; `paced` plays it at its frame rate, off with `pace=max`.
    case file(path: String, paced: Bool)
    /// A pad opened through libusb by its IDs, optionally at one bus and address.
    case usb(USBIdentity, bus: Int?, address: Int?)
    /// A HID pad's raw node such as `/dev/hidraw3`, e.g. a DualShock 4.
    case hidraw(path: String)
    /// An input event node with force feedback, for any rumble pad the kernel drives.
    case evdev(path: String)
    /// No device: cues are written out as the commands a pad would get, for terminals and CI.
    case log
    /// No device: the terminal bell rings on each pulse that would move a motor.
    case bell
    /// The built-in simulated bench; its `options` (`sim:?fault=…&backup=…`) pick what goes
    /// wrong on it, so a person can try how a flow behaves when a device misbehaves.
    case sim(options: [String: String])
    /// A cassette recorded with `--record PATH`, played back as the devices it recorded.
    case replay(path: String)
    /// A device named by what survives a replug (its USB port, serial number, V4L2 bus or
    /// controller address), looked up among what is attached before it is opened.
    case located(DeviceLocation)

    /// `sim:` with nothing going wrong.
    public static var simulatedBench: DeviceURI { .sim(options: [:]) }

    /// The sort of device a URI can stand for, so an option can reject a camera URI given as a controller.
    public enum Family: String, Sendable {
        /// A Bluetooth controller (`hci:`, `uart:`, `tcp:`, `sim:`, `replay:`).
        case hci
        /// A camera (`v4l2:`, `file:`, `replay:`).
        case camera
        /// A haptic pad (`usb:`, `hidraw:`, `evdev:`, `log:`).
        case haptics
        /// Any of them: for options that take whatever is attached.
        case any
    }

    /// Which sort of device this URI names; `.any` for the bench and cassettes, which stand for every sort.
    public var family: Family {
        switch self {
        case .hci, .uart, .tcp: .hci
        case .v4l2, .file: .camera
        case .usb, .hidraw, .evdev, .log, .bell: .haptics
        case .sim, .replay: .any
        case .located(let location):
            switch location.kind {
            case .hci, .uart: .hci
            case .v4l2: .camera
            case .usb, .hidraw, .evdev: .haptics
            }
        }
    }

    /// No hardware behind it: the simulated bench, or a cassette played back (both on the bench's clock).
    public var isSimulated: Bool {
        switch self {
        case .sim, .replay: true
        default: false
        }
    }

    /// A cassette (`replay:FILE`), which stands for whatever kind of device it recorded.
    public var isReplay: Bool {
        if case .replay = self { return true }
        return false
    }

    /// Parses a URI as typed on the command line; the error says what was wrong with it.
    public init(parsing text: String) throws(DeviceURIError) {
        guard let colon = text.firstIndex(of: ":") else { throw .malformed(text, "expected SCHEME:…") }
        let scheme = text[..<colon].lowercased()
        let rest = String(text[text.index(after: colon)...])
        let (body, query) = Self.splitQuery(rest)
        if let location = try Self.location(scheme: scheme, body: body, query: query, text: text) {
            self = .located(location)
            return
        }
        switch scheme {
        case "hci":
            let digits = body.hasPrefix("hci") ? String(body.dropFirst(3)) : body
            guard let index = Int(digits), index >= 0, index < 256 else { throw .malformed(text, "expected hci:N, e.g. hci:0") }
            self = .hci(index: index)
        case "uart":
            guard body.hasPrefix("/") else { throw .malformed(text, "expected uart:/dev/ttyX, uart:@PORT or uart:?serial=S") }
            var baud = 1_000_000
            var rtscts = true
            for (key, value) in query {
                switch key {
                case "baud":
                    guard let b = Int(value), b > 0 else { throw .malformed(text, "baud must be a positive number") }
                    baud = b
                case "rtscts":
                    guard value == "0" || value == "1" else { throw .malformed(text, "rtscts must be 0 or 1") }
                    rtscts = value == "1"
                default: throw .malformed(text, "unknown option \(key) (known: baud, rtscts)")
                }
            }
            self = .uart(path: body, baud: baud, rtscts: rtscts)
        case "tcp":
            guard let portColon = body.lastIndex(of: ":"), let port = UInt16(body[body.index(after: portColon)...]),
                  port > 0, portColon > body.startIndex
            else { throw .malformed(text, "expected tcp:HOST:PORT") }
            self = .tcp(host: String(body[..<portColon]), port: port)
        case "v4l2":
            guard body.hasPrefix("/") else { throw .malformed(text, "expected v4l2:/dev/videoN, v4l2:@PORT, v4l2:@BUSINFO or v4l2:?serial=S") }
            self = .v4l2(path: body)
        case "file":
            guard !body.isEmpty else { throw .malformed(text, "expected file:PATH") }
            var paced = true
            for (key, value) in query {
                guard key == "pace", value == "max" || value == "realtime" else {
                    throw .malformed(text, "the only option is pace=max")
                }
                paced = value != "max"
            }
            self = .file(path: body, paced: paced)
        case "usb":
            let (ids, location) = Self.split(body, at: "@")
            let parts = ids.split(separator: ":")
            guard parts.count == 2, parts.allSatisfy({ $0.count == 4 }),
                  let v = UInt16(parts[0], radix: 16), let p = UInt16(parts[1], radix: 16)
            else { throw .malformed(text, "expected usb:VID:PID, e.g. usb:045e:028e") }
            var bus: Int?
            var address: Int?
            if let location {
                let bits = location.split(separator: ".")
                guard bits.count == 2, let b = Int(bits[0]), let a = Int(bits[1]) else {
                    throw .malformed(text, "expected usb:VID:PID@BUS.ADDR")
                }
                bus = b
                address = a
            }
            self = .usb(USBIdentity(vendor: v, product: p), bus: bus, address: address)
        case "hidraw":
            guard body.hasPrefix("/") else { throw .malformed(text, "expected hidraw:/dev/hidrawN, hidraw:@PORT or hidraw:?serial=S") }
            self = .hidraw(path: body)
        case "evdev":
            guard body.hasPrefix("/") else { throw .malformed(text, "expected evdev:/dev/input/eventN, evdev:@PORT or evdev:?serial=S") }
            self = .evdev(path: body)
        case "log": self = .log
        case "bell": self = .bell
        case "replay":
            guard !body.isEmpty else { throw .malformed(text, "expected replay:PATH, the cassette --record wrote") }
            self = .replay(path: body)
        case "sim":
            guard body.isEmpty else { throw .malformed(text, "expected sim: or sim:?OPTION=VALUE") }
            self = .sim(options: Dictionary(query, uniquingKeysWith: { _, last in last }))
        default:
            throw .unknownScheme(String(scheme))
        }
        if case .uart = self {} else if case .file = self {} else if case .sim = self {} else if !query.isEmpty {
            throw .malformed(text, "this kind of device takes no ?options")
        }
    }

    /// The URI written back out, in a form `init(parsing:)` accepts.
    public var description: String {
        switch self {
        case .hci(let index): "hci:\(index)"
        case .uart(let path, let baud, let rtscts): "uart:\(path)?baud=\(baud)&rtscts=\(rtscts ? 1 : 0)"
        case .tcp(let host, let port): "tcp:\(host):\(port)"
        case .v4l2(let path): "v4l2:\(path)"
        case .file(let path, let paced): "file:\(path)" + (paced ? "" : "?pace=max")
        case .usb(let id, let bus, let address):
            "usb:\(id)" + ((bus != nil && address != nil) ? "@\(bus ?? 0).\(address ?? 0)" : "")
        case .hidraw(let path): "hidraw:\(path)"
        case .evdev(let path): "evdev:\(path)"
        case .log: "log:"
        case .bell: "bell:"
        case .replay(let path): "replay:\(path)"
        case .located(let location): location.description
        case .sim(let options):
            "sim:" + (options.isEmpty ? "" : "?" + options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&"))
        }
    }

    /// The identity forms (`@PORT`, `@BUSINFO`, `?serial=S`, `hci:ADDRESS`); nil for a URI
    /// that names a node or index, parsed as before.
    private static func location(scheme: String, body: String, query: [(String, String)], text: String) throws(DeviceURIError) -> DeviceLocation? {
        guard let kind = DeviceLocation.Kind(rawValue: scheme) else { return nil }
        let serial = query.first { $0.0 == "serial" }?.1
        if kind == .hci {
            guard body.contains(":") else { return nil }
            guard let address = BLEAddress(string: body) else {
                throw .malformed(text, "expected hci:N or hci:AA:BB:CC:DD:EE:FF (the controller's address)")
            }
            guard query.isEmpty else { throw .malformed(text, "this kind of device takes no ?options") }
            return DeviceLocation(kind: .hci, key: .address(address))
        }
        var ids = ""
        var at: String?
        if kind == .usb {
            let (head, location) = split(body, at: "@")
            ids = head
            at = location
            // `usb:VID:PID@BUS.ADDR` and plain `usb:VID:PID` stay what they were.
            if let location, !DeviceIdentity.isUSBPort(location) { return nil }
            if at == nil && serial == nil { return nil }
        } else {
            guard body.hasPrefix("@") || (body.isEmpty && serial != nil) else { return nil }
            at = body.hasPrefix("@") ? String(body.dropFirst()) : nil
        }
        var usb: USBIdentity?
        if kind == .usb {
            let parts = ids.split(separator: ":")
            guard parts.count == 2, parts.allSatisfy({ $0.count == 4 }),
                  let v = UInt16(parts[0], radix: 16), let p = UInt16(parts[1], radix: 16)
            else { throw .malformed(text, "expected usb:VID:PID@PORT or usb:VID:PID?serial=S, e.g. usb:045e:028e@1-2.3") }
            usb = USBIdentity(vendor: v, product: p)
        }
        var baud = 1_000_000
        var rtscts = true
        for (key, value) in query {
            switch (key, kind) {
            case ("serial", _):
                guard at == nil else { throw .malformed(text, "give either @PORT or ?serial=S, not both") }
                guard DeviceIdentity.isURISafeSerial(value) else {
                    throw .malformed(text, "serial must be 1–126 printable characters without spaces or ?&=@#%/\\ quotes")
                }
            case ("baud", .uart):
                guard let b = Int(value), b > 0 else { throw .malformed(text, "baud must be a positive number") }
                baud = b
            case ("rtscts", .uart):
                guard value == "0" || value == "1" else { throw .malformed(text, "rtscts must be 0 or 1") }
                rtscts = value == "1"
            default:
                throw .malformed(text, "unknown option \(key) (known: serial" + (kind == .uart ? ", baud, rtscts)" : ")"))
            }
        }
        let key: DeviceLocation.Key
        if let serial {
            key = .serial(serial)
        } else if let at, DeviceIdentity.isUSBPort(at) {
            key = .usbPort(at)
        } else if let at, kind == .v4l2, !at.isEmpty, at.count <= 31, at.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) {
            key = .busInfo(at)   // QUERYCAP's bus_info is at most 31 characters
        } else {
            throw .malformed(text, kind == .v4l2
                ? "expected v4l2:@PORT (a USB port such as 1-2.3), v4l2:@BUSINFO (as list shows it) or v4l2:?serial=S"
                : "expected \(scheme):@PORT with a USB port such as 1-2.3, or \(scheme):?serial=S")
        }
        return DeviceLocation(kind: kind, key: key, usb: usb, baud: baud, rtscts: rtscts)
    }

    private static func splitQuery(_ s: String) -> (String, [(String, String)]) {
        let (body, query) = split(s, at: "?")
        guard let query else { return (body, []) }
        let pairs = query.split(separator: "&").map { pair -> (String, String) in
            let (k, v) = split(String(pair), at: "=")
            return (k, v ?? "")
        }
        return (body, pairs)
    }

    private static func split(_ s: String, at separator: Character) -> (String, String?) {
        guard let i = s.firstIndex(of: separator) else { return (s, nil) }
        return (String(s[..<i]), String(s[s.index(after: i)...]))
    }
}

/// Why a device URI from the command line was not accepted.
public enum DeviceURIError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The part before the colon is none of the kinds we know.
    case unknownScheme(String)
    /// The scheme is known but the rest is wrong: the text typed, then what was expected.
    case malformed(String, String)

    /// The words a person reads in messages and reports, quoting what they typed.
    public var description: String {
        switch self {
        case .unknownScheme(let scheme):
            "unknown device kind '\(scheme):' (known: hci, uart, tcp, v4l2, file, usb, hidraw, evdev, log, bell, sim, replay)"
        case .malformed(let uri, let why): "bad device URI '\(uri)': \(why)"
        }
    }
}
