import CLibUSB
import HAL
import LinuxIO

/// A USB device as libusb enumerates it.
public struct USBDeviceInfo: Hashable, Sendable {
    /// The vendor and product IDs, for matching a driver.
    public var identity: USBIdentity
    /// The USB bus number, as libusb reports it.
    public var bus: Int
    /// The device's address on its bus; changes when it is replugged.
    public var address: Int
    /// The product string when the device could be opened to read it.
    public var product: String?

    /// Builds the description of one device, as the probe enumerates it.
    public init(identity: USBIdentity, bus: Int, address: Int, product: String?) {
        self.identity = identity
        self.bus = bus
        self.address = address
        self.product = product
    }

    /// `usb:045e:028e@1.7`: names this very device among identical ones.
    public var uri: String { "usb:\(identity)@\(bus).\(address)" }
}

/// Why USB devices could not be listed at all, worded for the person at the bench.
public enum USBAccessError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kernel has no USB (no /sys/bus/usb), so no USB pad can be seen.
    case noKernelSupport
    /// libusb could not start or list devices; the text gives its error and a hint.
    case unavailable(String)

    /// The words a person reads in messages and logs.
    public var description: String {
        switch self {
        case .noKernelSupport: "kernel has no USB support (no /sys/bus/usb): no USB pads can be seen"
        case .unavailable(let why): "USB is not accessible: \(why)"
        }
    }
}

/// Enumerates USB devices with libusb. Only devices in `interesting` are opened for their
/// product string, so listing never disturbs unrelated hardware.
public enum USBProbe {
    /// Every attached USB device; only those in `interesting` are opened, to read their product string.
    public static func devices(opening interesting: Set<USBIdentity> = [], tree: SystemTree = .live) throws(USBAccessError) -> [USBDeviceInfo] {
        guard tree.exists("bus/usb") else { throw .noKernelSupport }
        var context: OpaquePointer?
        let rc = libusb_init(&context)
        guard rc == 0, let context else { throw .unavailable(libusbMessage(rc) + hint(rc)) }
        defer { libusb_exit(context) }
        var list: UnsafeMutablePointer<OpaquePointer?>?
        let count = libusb_get_device_list(context, &list)
        guard count >= 0, let list else { throw .unavailable(libusbMessage(Int32(count))) }
        defer { libusb_free_device_list(list, 1) }
        var found: [USBDeviceInfo] = []
        for i in 0..<count {
            guard let device = list[i] else { continue }
            var descriptor = libusb_device_descriptor()
            guard libusb_get_device_descriptor(device, &descriptor) == 0 else { continue }
            let identity = USBIdentity(vendor: descriptor.idVendor, product: descriptor.idProduct)
            var info = USBDeviceInfo(identity: identity, bus: Int(libusb_get_bus_number(device)),
                                     address: Int(libusb_get_device_address(device)), product: nil)
            if interesting.contains(identity), descriptor.iProduct != 0 {
                info.product = productString(device, index: descriptor.iProduct)
            }
            found.append(info)
        }
        return found
    }

    /// The product string in the device's first language, read and decoded here (libusb's ASCII
    /// variant would turn every other character into '?').
    static func productString(_ device: OpaquePointer, index: UInt8) -> String? {
        var handle: OpaquePointer?
        guard libusb_open(device, &handle) == 0, let handle else { return nil }
        defer { libusb_close(handle) }
        func descriptor(_ index: UInt8, language: UInt16) -> [UInt8]? {
            var buffer = [UInt8](repeating: 0, count: 255)
            let n = libusb_get_string_descriptor(handle, index, language, &buffer, Int32(buffer.count))
            return n > 0 ? Array(buffer.prefix(Int(n))) : nil
        }
        guard let table = descriptor(0, language: 0),
              let language = (try? USBStringDescriptor.languages(table))?.first,
              let product = descriptor(index, language: language) else { return nil }
        return try? USBStringDescriptor.text(product)
    }

    /// libusb's own words for an error code, or the bare number when it has none.
    static func libusbMessage(_ code: Int32) -> String {
        guard let name = libusb_strerror(code) else { return "libusb error \(code)" }
        return String(cString: name)
    }

    /// A hint to add when libusb fails with I/O or other errors (usually no usbfs); empty otherwise.
    static func hint(_ code: Int32) -> String {
        code == LIBUSB_ERROR_OTHER.rawValue || code == LIBUSB_ERROR_IO.rawValue
            ? " (no /dev/bus/usb: this machine has no USB host controller, or usbfs is not mounted)" : ""
    }
}
