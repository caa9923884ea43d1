import LinuxIO
/// Why an HCI transport could not be opened or stopped working, worded as what to do about it.
public enum HCILinkError: Error, Hashable, Sendable, CustomStringConvertible {
    /// TCP: the port is closed (ECONNREFUSED), usually because the virtual controller isn't running.
    case connectionRefused(host: String, port: UInt16)
    /// TCP: the name did not resolve; `reason` is getaddrinfo's own words.
    case hostNotFound(host: String, reason: String)
    /// TCP: no answer (SYN lost or filtered) before the deadline.
    case connectTimedOut(host: String, port: UInt16, seconds: Double)
    /// The other end ended the conversation (EOF, ECONNRESET, EPIPE). Carries the stream's URI.
    case closedByPeer(String)
    /// The device itself went away: a USB serial adapter unplugged, a controller removed.
    /// Carries a human name such as `serial port /dev/ttyACM0`.
    case deviceVanished(String)
    /// Serial: nothing at that path.
    case noSuchDevice(String)
    /// Serial: open(2) said EACCES/EPERM.
    case permissionDenied(String)
    /// Serial: the path exists but is no terminal, so it cannot carry H4 at a baud rate.
    case notATTY(String)
    /// Serial: termios has no constant for this rate, so no serial port on Linux can be set to it
    /// through the API we use. Refused before the port is opened.
    case unsupportedBaudRate(Int)
    /// Serial: a rate termios can name, but the port's driver would not take it (tcsetattr said
    /// EINVAL, or the speed read back differs): the hardware's limit, not ours.
    case baudRateRefused(path: String, baud: Int)
    /// A write made no progress for this long: the peer stopped reading (or CTS is never asserted).
    case writeStalled(String, seconds: Double)
    /// Used after ``HCIByteStream/close()``.
    case closed(String)
    /// A device URI that names no HCI transport (e.g. a camera).
    case notAnHCITransport(String)
    /// The kernel's user channel refused (no Bluetooth, no CAP_NET_ADMIN, busy, no such controller).
    case access(HCIAccessError)
    /// Anything else, already worded for a person.
    case io(String)

    /// The words a person reads in messages and logs, saying what to check.
    public var description: String {
        switch self {
        case .connectionRefused(let host, let port):
            "nothing listens on \(Self.hostPort(host, port)): start the virtual controller first"
        case .hostNotFound(let host, let reason):
            "cannot find host '\(host)' (\(reason)): check the tcp:HOST:PORT address"
        case .connectTimedOut(let host, let port, let seconds):
            "no answer from \(Self.hostPort(host, port)) within \(Self.seconds(seconds)): is the host reachable?"
        case .closedByPeer(let device):
            "\(device) closed the connection"
        case .deviceVanished(let device):
            "\(device) disappeared (unplugged or powered off?)"
        case .noSuchDevice(let path):
            "no serial port \(path): is the board plugged in? (see hwprobe list)"
        case .permissionDenied(let path):
            "no permission to open \(path): add yourself to the dialout group (then log in again)"
        case .notATTY(let path):
            "\(path) is not a serial port (not a tty)"
        case .unsupportedBaudRate(let baud):
            "baud rate \(baud) has no termios setting on Linux: use one of \(SerialPort.supportedRates.map(String.init).joined(separator: ", "))"
        case .baudRateRefused(let path, let baud):
            Self.refusal(path: path, baud: baud)
        case .writeStalled(let device, let seconds):
            "\(device) accepted no data for \(Self.seconds(seconds)): the controller is not reading (for a UART, check the RTS/CTS wiring or try rtscts=0)"
        case .closed(let device):
            "\(device) is already closed"
        case .notAnHCITransport(let uri):
            "\(uri) is not a Bluetooth controller: use hci:N, uart:PATH?baud=N&rtscts=1 or tcp:HOST:PORT"
        case .access(let error):
            error.description
        case .io(let why):
            why
        }
    }

    /// What to do when a driver refuses a rate. An on-board UART (`/dev/ttyS*`, a 16550 or one
    /// like it) stops at 115200 unless its clock was changed, so that is the advice there; other
    /// adapters vary, so only the way to pick a lower rate is given.
    static func refusal(path: String, baud: Int) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        if name.hasPrefix("ttyS"), name.dropFirst(4).allSatisfy(\.isNumber), baud > 115_200 {
            return "the driver of \(path) refused \(baud) baud (an on-board 16550 UART tops out at 115200): "
                + "use ?baud=115200 (and set the board to it), or a USB serial adapter"
        }
        return "the driver of \(path) refused \(baud) baud: pick a rate the adapter supports with ?baud=N "
            + "(the board must use the same rate)"
    }

    /// IPv6 literals get brackets so the port is unambiguous.
    static func hostPort(_ host: String, _ port: UInt16) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private static func seconds(_ s: Double) -> String {
        s == s.rounded() ? "\(Int(s)) s" : "\(s) s"
    }
}
