import HAL
import LinuxIO

/// An input event node and what it can do.
public struct EvdevDeviceInfo: Hashable, Sendable {
    /// The node's path, e.g. /dev/input/event5.
    public var path: String
    /// The name the driver gives the device, for people.
    public var name: String
    /// The vendor and product IDs the kernel reports, for matching a driver.
    public var identity: USBIdentity
    /// What the node can do; `.rumble` when it has FF_RUMBLE.
    public var capabilities: Set<MatchRule.EvdevCapability>
    /// The device URI that opens this node.
    public var uri: String { "evdev:\(path)" }

    /// Builds the description of one evdev node, as the probe reads it.
    public init(path: String, name: String, identity: USBIdentity, capabilities: Set<MatchRule.EvdevCapability>) {
        self.path = path
        self.name = name
        self.identity = identity
        self.capabilities = capabilities
    }
}

/// A hidraw node and the USB/Bluetooth IDs of the device behind it.
public struct HidrawDeviceInfo: Hashable, Sendable {
    /// The node's path, e.g. /dev/hidraw3.
    public var path: String
    /// The name the kernel gives the device; a made-up one when it will not say.
    public var name: String
    /// The vendor and product IDs behind the node, for matching a driver.
    public var identity: USBIdentity
    /// The device URI that opens this node.
    public var uri: String { "hidraw:\(path)" }

    /// Builds the description of one hidraw node, as the probe reads it.
    public init(path: String, name: String, identity: USBIdentity) {
        self.path = path
        self.name = name
        self.identity = identity
    }
}

/// Why input devices could not be listed at all, worded for the person at the bench.
public enum InputAccessError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The input nodes could not be listed at all; the text says why, e.g. no evdev in the kernel.
    case noNodes(String)

    /// The words a person reads in messages and logs.
    public var description: String {
        switch self {
        case .noNodes(let why): why
        }
    }
}

/// Finds evdev nodes with force feedback and hidraw nodes; nodes that cannot be opened are
/// reported one by one rather than failing the whole list.
public struct InputProbe: Sendable {
    /// The /sys and /dev tree the probe lists; tests root it in a fake tree.
    public let tree: SystemTree

    /// Lists nodes in `tree`, the live system by default.
    public init(tree: SystemTree = .live) { self.tree = tree }

    /// Every evdev node with its name, IDs and rumble capability; nodes that cannot be opened are listed as problems.
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

    /// Every hidraw node with its name and IDs; nodes that cannot be opened are listed as problems.
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

