/// What can go wrong with a hidraw node, in words that say what to do.
public enum HidrawError: Error, Hashable, Sendable, CustomStringConvertible {
    case notFound(String)
    case disappeared(String)
    case permissionDenied(String)
    /// The node answers, but not like a HID device (HIDIOCGRAWINFO failed): a wrong path.
    case notHidraw(String)
    case timedOut(String)
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
