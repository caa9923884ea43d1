import HAL

/// What can go wrong driving one USB device through libusb. Drivers turn these into their own
/// family's errors, adding what only they know (which kernel driver, which URI to use instead).
public enum USBPipeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No device with these IDs (at this bus and address) is attached.
    case notFound(String)
    /// The device went away (unplugged, reset, or powered off) while it was open.
    case disappeared(String)
    /// The device node is not ours to open: a udev rule (or root) is needed.
    case permissionDenied(String)
    /// A kernel driver is bound to the interface, so it cannot be claimed without detaching it.
    case kernelDriverAttached(device: String, interface: Int)
    /// Another program has claimed the interface.
    case busy(String)
    /// The interface lacks what the driver needs (an interrupt OUT endpoint).
    case unsuitable(String)
    /// The device did not take a transfer within the timeout.
    case timedOut(String)
    /// A transfer or libusb call failed for another reason; the text carries libusb's words.
    case io(String)
    /// libusb itself could not start (no usbfs, no kernel support).
    case unavailable(String)

    /// The words a person reads in messages and logs.
    public var description: String {
        switch self {
        case .notFound(let what): "no USB device \(what) is attached: check the cable, or run `hwprobe list` for what is"
        case .disappeared(let device): "USB device \(device) disappeared"
        case .permissionDenied(let device): "no permission to open USB device \(device): install the udev rule from the README or run with sudo"
        case .kernelDriverAttached(let device, let interface):
            "a kernel driver holds interface \(interface) of USB device \(device): detach it, or use the device through that driver"
        case .busy(let why): why
        case .unsuitable(let why): why
        case .timedOut(let why): why
        case .io(let why): "USB I/O failed: \(why)"
        case .unavailable(let why): "USB is not accessible: \(why)"
        }
    }
}
