import HAL
import LinuxIO

/// An input event node and what it can do.
public struct EvdevDeviceInfo: Hashable, Sendable {
    public var path: String
    public var name: String
    public var identity: USBIdentity
    public var capabilities: Set<MatchRule.EvdevCapability>
    public var uri: String { "evdev:\(path)" }

    public init(path: String, name: String, identity: USBIdentity, capabilities: Set<MatchRule.EvdevCapability>) {
        self.path = path
        self.name = name
        self.identity = identity
        self.capabilities = capabilities
    }
}

/// A hidraw node and the USB/Bluetooth IDs of the device behind it.
public struct HidrawDeviceInfo: Hashable, Sendable {
    public var path: String
    public var name: String
    public var identity: USBIdentity
    public var uri: String { "hidraw:\(path)" }

    public init(path: String, name: String, identity: USBIdentity) {
        self.path = path
        self.name = name
        self.identity = identity
    }
}

public enum InputAccessError: Error, Hashable, Sendable, CustomStringConvertible {
    case noNodes(String)

    public var description: String {
        switch self {
        case .noNodes(let why): why
        }
    }
}

/// Finds evdev nodes with force feedback and hidraw nodes; nodes that cannot be opened are
/// reported one by one rather than failing the whole list.
public struct InputProbe: Sendable {
    public let tree: SystemTree

    public init(tree: SystemTree = .live) { self.tree = tree }

    public func evdevDevices() throws(InputAccessError) -> (devices: [EvdevDeviceInfo], problems: [String]) {
        let names = tree.listDev("input").filter { $0.hasPrefix("event") }
        if names.isEmpty && tree.list("class/input") == nil {
            throw .noNodes("kernel has no input (evdev) support: no /sys/class/input")
        }
        var devices: [EvdevDeviceInfo] = []
        var problems: [String] = []
        for name in names {
            let path = tree.devPath("input/\(name)")
            do { devices.append(try evdevDevice(at: path)) } catch { problems.append(problem(opening: path, error)) }
        }
        return (devices, problems)
    }

    /// One evdev node's name, IDs and force-feedback capability.
    public func evdevDevice(at path: String) throws(Errno) -> EvdevDeviceInfo {
        try FileDescriptor.withOpened(path, .readOnly, nonBlocking: true) { fd throws(Errno) -> EvdevDeviceInfo in
            let name = try fd.evdevName()
            let id = try fd.evdevIdentity()
            let rumble = try fd.evdevHasRumble()
            return EvdevDeviceInfo(path: path, name: name,
                                   identity: USBIdentity(vendor: id.vendor, product: id.product),
                                   capabilities: rumble ? [.rumble] : [])
        }
    }

    /// One hidraw node's name and USB IDs (HIDIOCGRAWINFO).
    public func hidrawDevice(at path: String) throws(Errno) -> HidrawDeviceInfo {
        try FileDescriptor.withOpened(path, .readOnly, nonBlocking: true) { fd throws(Errno) -> HidrawDeviceInfo in
            let id = try fd.hidrawIdentity()
            let identity = USBIdentity(vendor: id.vendor, product: id.product)
            // The name is for people only: a node that will not say it is still usable.
            return HidrawDeviceInfo(path: path, name: fd.hidrawName() ?? "HID device \(identity)", identity: identity)
        }
    }

    public func hidrawDevices() -> (devices: [HidrawDeviceInfo], problems: [String]) {
        var devices: [HidrawDeviceInfo] = []
        var problems: [String] = []
        for name in tree.listDev().filter({ $0.hasPrefix("hidraw") }) {
            let path = tree.devPath(name)
            do { devices.append(try hidrawDevice(at: path)) } catch { problems.append(problem(opening: path, error)) }
        }
        return (devices, problems)
    }
}

private func problem(opening path: String, _ error: Errno) -> String {
    error.meansPermission
        ? "cannot open \(path): permission denied (install the udev rule from the README, or run with sudo)"
        : "cannot query \(path): \(error)"
}

