import CLinuxShims
import Glibc

/// A serial port set up for a byte protocol with no resynchronisation (H4): raw 8N1, no software
/// flow control (it would eat 0x11 and 0x13), optional RTS/CTS, reads that never wait (VMIN 0,
/// VTIME 0, so a reading thread relies on poll), and a rate the driver is checked to have taken.
package enum SerialPort {
    /// Baud rates termios can name. Linux's B* constants are codes, not numbers, so every rate
    /// needs an entry here; a rate without one is refused up front instead of silently becoming 38400.
    static let table: [(rate: Int, speed: speed_t)] = [
        (9600, speed_t(B9600)), (19200, speed_t(B19200)), (38400, speed_t(B38400)), (57600, speed_t(B57600)),
        (115_200, speed_t(B115200)), (230_400, speed_t(B230400)), (460_800, speed_t(B460800)),
        (500_000, speed_t(B500000)), (576_000, speed_t(B576000)), (921_600, speed_t(B921600)),
        (1_000_000, speed_t(B1000000)), (1_152_000, speed_t(B1152000)), (1_500_000, speed_t(B1500000)),
        (2_000_000, speed_t(B2000000)), (2_500_000, speed_t(B2500000)), (3_000_000, speed_t(B3000000)),
        (3_500_000, speed_t(B3500000)), (4_000_000, speed_t(B4000000)),
    ]

    /// Every rate ``configure(_:baud:rtscts:attributes:)`` accepts, lowest first.
    package static var supportedRates: [Int] { table.map(\.rate) }

    /// The termios speed code for `rate`, nil when termios has none.
    package static func speed(for rate: Int) -> speed_t? {
        table.first { $0.rate == rate }?.speed
    }

    /// TIOCEXCL from <asm-generic/ioctls.h> (0x540C): a second open by another program fails with
    /// EBUSY instead of both reading half the bytes. Swift cannot import it from glibc's headers here.
    static let exclusiveModeRequest: UInt = 0x540C

    /// The two termios calls whose answers depend on the port's driver. A pty (what the tests
    /// have) takes any rate, so tests pass their own to play a driver that refuses one.
    package struct Attributes: Sendable {
        /// tcgetattr: 0, or -1 with errno set.
        package var get: @Sendable (Int32, inout termios) -> Int32
        /// tcsetattr(TCSANOW): 0, or -1 with errno set.
        package var set: @Sendable (Int32, inout termios) -> Int32

        package init(get: @escaping @Sendable (Int32, inout termios) -> Int32,
                     set: @escaping @Sendable (Int32, inout termios) -> Int32) {
            self.get = get
            self.set = set
        }

        /// The kernel's own answers.
        package static let system = Attributes(get: { tcgetattr($0, &$1) }, set: { tcsetattr($0, TCSANOW, &$1) })
    }

    /// Why a port could not be set up.
    package enum Failure: Error, Hashable, Sendable {
        /// tcgetattr said ENOTTY or EINVAL: the path is not a serial port.
        case notATerminal
        /// tcgetattr failed otherwise.
        case cannotRead(Errno)
        /// termios has no code for the rate.
        case unsupportedRate
        /// The driver refused the rate (EINVAL), or took the call and kept another rate.
        case rateRefused
        /// tcsetattr failed otherwise.
        case cannotApply(Errno)
    }

    /// Opens `path` read-write, non-blocking (no waiting for carrier detect before CLOCAL is set)
    /// and never as our controlling terminal.
    package static func open(_ path: String) throws(Errno) -> FileDescriptor {
        try FileDescriptor.open(path, .readWrite, options: [.nonBlocking, .noControllingTerminal])
    }

    /// Makes `port` raw 8N1 at `baud`, with RTS/CTS when `rtscts`, takes it exclusively (best
    /// effort: root bypasses it), reads the rate back, and drops stale bytes from before we opened,
    /// which would desynchronise H4.
    package static func configure(_ port: FileDescriptor, baud: Int, rtscts: Bool,
                                  attributes: Attributes = .system) throws(Failure) {
        guard let speed = speed(for: baud) else { throw .unsupportedRate }
        let fd = port.rawValue
        var options = termios()
        guard attributes.get(fd, &options) == 0 else {
            if errno == ENOTTY || errno == EINVAL { throw .notATerminal }
            throw .cannotRead(.current)
        }
        _ = hal_ioctl(fd, exclusiveModeRequest, nil)
        cfmakeraw(&options)
        options.c_cflag &= ~tcflag_t(CSIZE | PARENB | CSTOPB)
        options.c_cflag &= ~tcflag_t(CRTSCTS)
        options.c_cflag |= tcflag_t(CS8 | CLOCAL | CREAD)
        if rtscts { options.c_cflag |= tcflag_t(CRTSCTS) }
        options.c_iflag &= ~tcflag_t(IXON | IXOFF | IXANY)
        withUnsafeMutableBytes(of: &options.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        // cfset*speed only check that `speed` is a B* constant, which the table already did.
        guard cfsetispeed(&options, speed) == 0, cfsetospeed(&options, speed) == 0 else { throw .unsupportedRate }
        // From here on a refusal is the driver's: the rate has a constant, the hardware won't do it.
        guard attributes.set(fd, &options) == 0 else {
            if errno == EINVAL { throw .rateRefused }
            throw .cannotApply(.current)
        }
        // tcsetattr succeeds if *any* change took; read back to catch a driver that ignored the rate.
        var applied = termios()
        if attributes.get(fd, &applied) == 0, cfgetospeed(&applied) != speed { throw .rateRefused }
        _ = tcflush(fd, TCIOFLUSH)
    }
}
