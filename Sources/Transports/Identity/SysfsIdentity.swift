import Foundation
import HAL
import LinuxIO

/// Finds a device's `DeviceIdentity` in sysfs: the USB device it hangs off (its port chain and
/// `serial`), a HID device's `uniq`, walking up from the node's own directory. Read-only and
/// without opening any device, so `list` and `watch` can ask it of everything they show.
///
/// Facts used (Linux `Documentation/ABI/stable/sysfs-bus-usb`, `sysfs-class-input`): a USB
/// device's directory is named by its port chain (`1-2.3`) and holds `busnum`, `devnum` and,
/// when the device has one, `serial`; an input device's directory holds `uniq`; a HID device's
/// `uevent` carries `HID_UNIQ`.
public struct SysfsIdentity: Sendable {
    /// The /sys tree identities are read from; tests root it in a fake tree.
    public let tree: SystemTree

    /// Reads identities from `tree`, the live /sys by default.
    public init(tree: SystemTree = .live) { self.tree = tree }

    /// The identity of a class node such as `class/video4linux/video0`, `class/hidraw/hidraw3`,
    /// `class/input/event5` or `class/tty/ttyACM0`; `.unknown` when sysfs says nothing stable
    /// (a virtual device made by uinput, a node that went away).
    public func identity(ofClassNode node: String) -> DeviceIdentity {
        guard let path = tree.canonical(node) else { return .unknown }
        var identity = DeviceIdentity()
        var parts = path.split(separator: "/").map(String.init)
        var uniq: String?
        while !parts.isEmpty {
            let directory = parts.joined(separator: "/")
            let name = parts[parts.count - 1]
            if uniq == nil, let text = tree.attribute(directory + "/uniq"), !text.isEmpty { uniq = text }
            if uniq == nil, let event = tree.attribute(directory + "/uevent"),
               let line = event.split(separator: "\n").first(where: { $0.hasPrefix("HID_UNIQ=") }) {
                let text = String(line.dropFirst("HID_UNIQ=".count))
                if !text.isEmpty { uniq = text }
            }
            if DeviceIdentity.isUSBPort(name), tree.exists(directory + "/busnum"), tree.exists(directory + "/devnum") {
                identity.usbPort = name
                identity.serial = usableSerial(tree.attribute(directory + "/serial"))
                break
            }
            parts.removeLast()
        }
        if identity.serial == nil { identity.serial = usableSerial(uniq) }
        return identity
    }

    /// The identity of the device behind a node under /dev (`/dev/video0`, `/dev/hidraw3`,
    /// `/dev/input/event5`, `/dev/ttyACM0`), through its class directory in sysfs.
    public func identity(ofNode path: String) -> DeviceIdentity {
        guard let name = path.split(separator: "/").last.map(String.init) else { return .unknown }
        let classes = [("video", "video4linux"), ("hidraw", "hidraw"), ("event", "input"), ("tty", "tty"), ("rfcomm", "tty")]
        guard let (_, directory) = classes.first(where: { name.hasPrefix($0.0) }) else { return .unknown }
        return identity(ofClassNode: "class/\(directory)/\(name)")
    }

    /// The identity of the USB device at `bus`/`address` (as libusb numbers it).
    public func identity(ofUSBBus bus: Int, address: Int) -> DeviceIdentity {
        for name in tree.list("bus/usb/devices") ?? [] where DeviceIdentity.isUSBPort(name) {
            guard tree.attribute("bus/usb/devices/\(name)/busnum").flatMap({ Int($0) }) == bus,
                  tree.attribute("bus/usb/devices/\(name)/devnum").flatMap({ Int($0) }) == address else { continue }
            return DeviceIdentity(usbPort: name, serial: usableSerial(tree.attribute("bus/usb/devices/\(name)/serial")))
        }
        return .unknown
    }

    /// A serial number that can name a device in a URI: trimmed, and left out when it is empty,
    /// could not go into a URI as it is, or is all zeros (a placeholder many devices share).
    func usableSerial(_ text: String?) -> String? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), DeviceIdentity.isURISafeSerial(text) else { return nil }
        let digits = text.filter { $0 != ":" && $0 != "-" }
        return digits.allSatisfy { $0 == "0" } ? nil : text
    }
}
