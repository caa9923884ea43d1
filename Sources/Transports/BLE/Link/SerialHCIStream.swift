import CLinuxShims
import Glibc
import HAL
import LinuxIO

/// H4 over a serial port, e.g. a Zephyr `hci_uart` board on /dev/ttyACM0.
public final class SerialHCIStream: HCIByteStream {
    public let path: String
    public let baud: Int
    public let rtscts: Bool
    let link: DescriptorLink

    public var description: String { link.description }

    /// Opens `path` raw 8N1 at `baud`, with hardware flow control when `rtscts` (H4 has no
    /// resynchronisation, so a lost byte at 1 Mbaud breaks the link: boards expect RTS/CTS).
    public static func open(path: String, baud: Int = 1_000_000,
                            rtscts: Bool = true) async throws(HCILinkError) -> SerialHCIStream {
        guard let speed = SerialBaudRate.speed(for: baud) else { throw .unsupportedBaudRate(baud) }
        return try await BlockingOpen.run { () throws(HCILinkError) in
            let fd = try configuredPort(path: path, speed: speed, baud: baud, rtscts: rtscts)
            return SerialHCIStream(fd: fd, path: path, baud: baud, rtscts: rtscts)
        }
    }

    private init(fd: Int32, path: String, baud: Int, rtscts: Bool) {
        self.path = path
        self.baud = baud
        self.rtscts = rtscts
        let device = "serial port \(path)"
        let name = DeviceURI.uart(path: path, baud: baud, rtscts: rtscts).description
        let gone: @Sendable (Errno) -> HCILinkError = { error in
            switch error.code {
            case EIO, ENODEV, ENXIO, ESHUTDOWN: .deviceVanished(device)
            default: .io("\(device): \(error)")
            }
        }
        link = DescriptorLink(fd: fd, description: name, behaviour: LinkBehaviour(
            zeroReadIsEndOfFile: false, endOfFile: .deviceVanished(device), readError: gone, writeError: gone))
    }

    deinit { link.requestClose() }

    public func write(_ bytes: [UInt8]) async throws(HCILinkError) { try await link.send(bytes) }
    public func incoming() -> AsyncThrowingStream<[UInt8], any Error> { link.incoming() }
    public func close() async { await link.close() }

    /// TIOCEXCL from <asm-generic/ioctls.h> (0x540C): a second open by another program fails with
    /// EBUSY instead of both reading half the bytes. Swift cannot import it from glibc's headers here.
    static let exclusiveModeRequest: UInt = 0x540C

    /// The two termios calls whose answers depend on the port's driver. A pty (what the tests
    /// have) takes any rate, so tests pass their own to play a driver that refuses one.
    struct TerminalAttributes: Sendable {
        /// tcgetattr: 0, or -1 with errno set.
        var get: @Sendable (Int32, inout termios) -> Int32
        /// tcsetattr(TCSANOW): 0, or -1 with errno set.
        var set: @Sendable (Int32, inout termios) -> Int32

        static let system = TerminalAttributes(get: { tcgetattr($0, &$1) }, set: { tcsetattr($0, TCSANOW, &$1) })
    }

    static func configuredPort(path: String, speed: speed_t, baud: Int, rtscts: Bool,
                               terminal: TerminalAttributes = .system) throws(HCILinkError) -> Int32 {
        // O_NOCTTY: a board must never become our controlling terminal; O_NONBLOCK: don't wait for
        // carrier detect before CLOCAL is set, and let the reading thread rely on poll.
        let opened = hal_open(path, O_RDWR | O_NOCTTY | O_NONBLOCK)
        guard opened >= 0 else {
            switch -opened {
            case ENOENT, ENXIO, ENODEV: throw .noSuchDevice(path)
            case EACCES, EPERM: throw .permissionDenied(path)
            case EBUSY: throw .io("\(path) is in use by another program")
            case ENOTDIR, EISDIR: throw .notATTY(path)
            default: throw .io("cannot open \(path): \(Errno(-opened))")
            }
        }
        let fd = opened
        do {
            try configure(fd, path: path, speed: speed, baud: baud, rtscts: rtscts, terminal: terminal)
        } catch {
            _ = Glibc.close(fd)
            throw error
        }
        return fd
    }

    private static func configure(_ fd: Int32, path: String, speed: speed_t, baud: Int, rtscts: Bool,
                                  terminal: TerminalAttributes) throws(HCILinkError) {
        var options = termios()
        guard terminal.get(fd, &options) == 0 else {
            if errno == ENOTTY || errno == EINVAL { throw .notATTY(path) }
            throw .io("cannot read the settings of \(path): \(Errno.current)")
        }
        _ = hal_ioctl(fd, exclusiveModeRequest, nil) // best effort: root bypasses it anyway
        cfmakeraw(&options)
        options.c_cflag &= ~tcflag_t(CSIZE | PARENB | CSTOPB)
        options.c_cflag &= ~tcflag_t(CRTSCTS)
        options.c_cflag |= tcflag_t(CS8 | CLOCAL | CREAD)
        if rtscts { options.c_cflag |= tcflag_t(CRTSCTS) }
        options.c_iflag &= ~tcflag_t(IXON | IXOFF | IXANY) // software flow control would eat 0x11/0x13
        withUnsafeMutableBytes(of: &options.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        // cfset*speed only check that `speed` is a B* constant, which SerialBaudRate already did.
        guard cfsetispeed(&options, speed) == 0, cfsetospeed(&options, speed) == 0 else { throw .unsupportedBaudRate(baud) }
        // From here on a refusal is the driver's: the rate has a constant, the hardware won't do it.
        guard terminal.set(fd, &options) == 0 else {
            if errno == EINVAL { throw .baudRateRefused(path: path, baud: baud) }
            throw .io("cannot configure \(path): \(Errno.current)")
        }
        // tcsetattr succeeds if *any* change took; read back to catch a driver that ignored the rate.
        var applied = termios()
        if terminal.get(fd, &applied) == 0, cfgetospeed(&applied) != speed { throw .baudRateRefused(path: path, baud: baud) }
        _ = tcflush(fd, TCIOFLUSH) // stale bytes from before we opened would desynchronise H4
    }
}
