/// What can go wrong with a hidraw node, in words that say what to do.
public enum HidrawError: Error, Hashable, Sendable, CustomStringConvertible {
    /// There is no node at that path.
    case notFound(String)
    /// The device went away while it was open, e.g. unplugged or out of Bluetooth range.
    case disappeared(String)
    /// The node is not ours to open; the udev rule from the README is needed.
    case permissionDenied(String)
    /// The node answers, but not like a HID device (HIDIOCGRAWINFO failed): a wrong path.
    case notHidraw(String)
    /// The device did not take or answer a report in time; the text says which.
    case timedOut(String)
    /// A read, write or ioctl failed for another reason; the text carries the OS error.
    case io(String)

    /// The words a person reads in messages and logs, saying what to do about it.
    public var description: String {
        switch self {
        case .notFound(let path): "\(path) does not exist: run `hwprobe list` for the hidraw nodes there are"
        case .disappeared(let path): "hidraw device \(path) disappeared"
        case .permissionDenied(let path): "cannot open \(path): permission denied (install the udev rule from the README, or run with sudo)"
        case .notHidraw(let why): why
        case .timedOut(let why): why
        case .io(let why): "hidraw I/O failed: \(why)"
        }
    }
}
