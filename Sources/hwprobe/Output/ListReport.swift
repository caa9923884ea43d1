/// `hwprobe list --json`: the contract's shape, key for key (docs/cli.md, "JSON").
///
/// Every local device also carries `id`: a URI that names it across replugs (issue 19, item 5;
/// `DeviceIdentityChoice` picks it), and what it was made from (`usbPort`, `serial`, `busInfo`)
/// when known. `id` equals `uri` when nothing more stable is known (a uinput pad, a node two
/// devices share a port with).
struct ListReport: Codable, Equatable, Sendable {
    struct Controller: Codable, Equatable, Sendable {
        var uri: String
        var name: String
        var address: String?
        var id: String?
    }

    struct Camera: Codable, Equatable, Sendable {
        struct Format: Codable, Equatable, Sendable {
            var fourcc: String
            var sizes: [String]
        }
        var uri: String
        var card: String
        var driver: String
        var formats: [Format]
        var id: String?
        var busInfo: String?
        var usbPort: String?
        var serial: String?
    }

    struct HapticDevice: Codable, Equatable, Sendable {
        var uri: String
        var name: String
        var driver: String
        var id: String?
        var usbPort: String?
        var serial: String?
    }

    struct SerialPort: Codable, Equatable, Sendable {
        var path: String
        var id: String?
        var usbPort: String?
        var serial: String?
    }

    struct Peripheral: Codable, Equatable, Sendable {
        var hci: String
        var address: String
        var name: String?
        var rssi: Int
        var services: [String]
        var driver: String?
        var kind: String?
        var weightKg: Double?
        /// `public` or `random`: a connection needs it, and the address alone does not say it.
        var addressType: String
        /// Why `driver` claimed it (the registry's claim reason), when a driver does.
        var reason: String?
        /// For a device no driver claims that looks like a scale: the family it resembles and
        /// what would be needed (issue 18). `kind` is then `scale` and `driver` an explicit null.
        var hint: String?
        /// For a claimed device whose reading cannot be read: why (a scale that encrypts its
        /// advertisements, with no bind key or a wrong one). Never the key.
        var note: String?
        /// The resolvable private address the device advertised from, when a bond's IRK
        /// resolved it to `address`, its identity (issue 29).
        var resolvedFrom: String? = nil

        /// The address as the screen shows it: the identity, and the private address it was
        /// resolved from when it was.
        var shownAddress: String { address + (resolvedFrom.map { " (resolved from \($0))" } ?? "") }

        enum CodingKeys: String, CodingKey {
            case hci, address, name, rssi, services, driver, kind, weightKg, addressType, resolvedFrom, reason, hint, note
        }

        /// As synthesised, except that a hinted device says `"driver": null` outright: the
        /// contract's way of saying "a scale, and no driver for it" rather than leaving it out.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(hci, forKey: .hci)
            try container.encode(address, forKey: .address)
            try container.encodeIfPresent(name, forKey: .name)
            try container.encode(rssi, forKey: .rssi)
            try container.encode(services, forKey: .services)
            if driver == nil && hint != nil { try container.encodeNil(forKey: .driver) } else { try container.encodeIfPresent(driver, forKey: .driver) }
            try container.encodeIfPresent(kind, forKey: .kind)
            try container.encodeIfPresent(weightKg, forKey: .weightKg)
            try container.encode(addressType, forKey: .addressType)
            try container.encodeIfPresent(resolvedFrom, forKey: .resolvedFrom)
            try container.encodeIfPresent(reason, forKey: .reason)
            try container.encodeIfPresent(hint, forKey: .hint)
            try container.encodeIfPresent(note, forKey: .note)
        }
    }

    struct Problem: Codable, Equatable, Sendable {
        enum Section: String, Codable, Sendable {
            case controllers, cameras, hapticDevices, serialPorts, peripherals
        }
        var section: Section
        var message: String
    }

    var controllers: [Controller] = []
    var cameras: [Camera] = []
    var hapticDevices: [HapticDevice] = []
    var serialPorts: [SerialPort] = []
    var peripherals: [Peripheral] = []
    var problems: [Problem] = []

    mutating func problem(_ section: Problem.Section, _ message: String) {
        problems.append(Problem(section: section, message: message))
    }
}
