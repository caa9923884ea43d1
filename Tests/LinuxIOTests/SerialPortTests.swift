import Glibc
import Testing
@testable import LinuxIO

/// The c_cc entry at `index` (VMIN, VTIME …) of `settings`.
func controlCharacter(_ settings: termios, _ index: Int32) -> UInt8 {
    withUnsafeBytes(of: settings.c_cc) { $0[Int(index)] }
}

/// SerialPort on a pseudo-terminal, which takes any termios setting as a real port would: open
/// gives a non-blocking read-write descriptor, configure leaves it raw 8N1 with RTS/CTS as asked,
/// no software flow control, reads that never wait and the rate asked for; and each way a driver
/// can refuse (no such rate, EINVAL, another errno, not a terminal, a rate silently kept) is its
/// own Failure, played by Attributes that answer as such a driver would.
@Suite struct SerialPortTests {
    /// A pty slave opened by path through SerialPort.open, with the pty's ends (closed by `close`).
    struct Port {
        let master: FileDescriptor
        let slave: FileDescriptor
        let port: FileDescriptor

        init() throws {
            (master, slave) = try openPseudoTerminal()
            let path = String(cString: try #require(ttyname(slave.rawValue)))
            port = try SerialPort.open(path)
        }

        func settings() throws -> termios {
            var settings = termios()
            guard tcgetattr(port.rawValue, &settings) == 0 else { throw Errno.current }
            return settings
        }

        func close() { port.close(); slave.close(); master.close() }
    }

    @Test func openGivesANonBlockingReadWriteTerminal() throws {
        let pty = try Port()
        defer { pty.close() }
        #expect(pty.port.isTerminal)
        #expect(pty.port.isNonBlocking == true)
        #expect(fcntl(pty.port.rawValue, F_GETFL) & O_ACCMODE == O_RDWR)
        #expect(tcgetsid(pty.port.rawValue) == -1, "not our controlling terminal")
        #expect(throws: Errno.noEntry) { _ = try SerialPort.open("/dev/pts/no-such-port") }
    }

    @Test func configureMakesItRaw8N1WithRTSCTS() throws {
        let pty = try Port()
        defer { pty.close() }
        try SerialPort.configure(pty.port, baud: 115_200, rtscts: true)
        let s = try pty.settings()
        #expect(s.c_cflag & tcflag_t(CSIZE) == tcflag_t(CS8))
        #expect(s.c_cflag & tcflag_t(PARENB | CSTOPB) == 0)
        #expect(s.c_cflag & tcflag_t(CLOCAL | CREAD) == tcflag_t(CLOCAL | CREAD))
        #expect(s.c_cflag & tcflag_t(CRTSCTS) != 0)
        #expect(s.c_lflag & tcflag_t(ICANON | ECHO | ISIG | IEXTEN) == 0)
        #expect(s.c_iflag & tcflag_t(IXON | IXOFF | IXANY | ICRNL | ISTRIP) == 0)
        #expect(s.c_oflag & tcflag_t(OPOST) == 0)
        #expect(controlCharacter(s, VMIN) == 0)
        #expect(controlCharacter(s, VTIME) == 0)
        var copy = s
        #expect(cfgetospeed(&copy) == speed_t(B115200))
        #expect(cfgetispeed(&copy) == speed_t(B115200))
    }

    @Test func withoutRTSCTSFlowControlIsCleared() throws {
        let pty = try Port()
        defer { pty.close() }
        try SerialPort.configure(pty.port, baud: 115_200, rtscts: true)
        #expect(try pty.settings().c_cflag & tcflag_t(CRTSCTS) != 0)
        try SerialPort.configure(pty.port, baud: 1_000_000, rtscts: false)
        var s = try pty.settings()
        #expect(s.c_cflag & tcflag_t(CRTSCTS) == 0)
        #expect(cfgetospeed(&s) == speed_t(B1000000))
    }

    /// Raw means every byte arrives as it was sent: 0x11 and 0x13 (XON/XOFF) and CR included.
    @Test func bytesPassUntouched() throws {
        let pty = try Port()
        defer { pty.close() }
        try SerialPort.configure(pty.port, baud: 115_200, rtscts: false)
        let bytes: [UInt8] = [0x04, 0x11, 0x13, 0x0D, 0x0A, 0x03, 0x7F, 0xFF]
        try pty.master.writeAll(bytes)
        #expect(try pty.port.poll(for: .readable, timeoutMilliseconds: -1).contains(.readable))
        #expect(try readExactly(pty.port, bytes.count) == bytes)
    }

    @Test func aRateTermiosCannotNameIsUnsupported() throws {
        let pty = try Port()
        defer { pty.close() }
        let before = try pty.settings()
        #expect(throws: SerialPort.Failure.unsupportedRate) { try SerialPort.configure(pty.port, baud: 123_456, rtscts: false) }
        let after = try pty.settings()
        #expect(after.c_lflag == before.c_lflag && after.c_cflag == before.c_cflag, "refused before touching the port")
    }

    @Test func aPipeIsNotATerminal() throws {
        let (read, write) = try makePipe()
        defer { read.close(); write.close() }
        #expect(throws: SerialPort.Failure.notATerminal) { try SerialPort.configure(read, baud: 115_200, rtscts: false) }
    }

    static func failing(_ code: Int32) -> @Sendable (Int32, inout termios) -> Int32 {
        { _, _ in errno = code; return -1 }
    }

    @Test func aDriverRefusingTheRateWithEINVALIsRateRefused() throws {
        let pty = try Port()
        defer { pty.close() }
        let attributes = SerialPort.Attributes(get: SerialPort.Attributes.system.get, set: Self.failing(EINVAL))
        #expect(throws: SerialPort.Failure.rateRefused) {
            try SerialPort.configure(pty.port, baud: 115_200, rtscts: true, attributes: attributes)
        }
    }

    @Test func anotherSetFailureIsCannotApplyWithItsErrno() throws {
        let pty = try Port()
        defer { pty.close() }
        let attributes = SerialPort.Attributes(get: SerialPort.Attributes.system.get, set: Self.failing(EIO))
        #expect(throws: SerialPort.Failure.cannotApply(.ioError)) {
            try SerialPort.configure(pty.port, baud: 115_200, rtscts: true, attributes: attributes)
        }
    }

    @Test func aGetFailureIsNotATerminalOrCannotRead() throws {
        let pty = try Port()
        defer { pty.close() }
        let noTTY = SerialPort.Attributes(get: Self.failing(ENOTTY), set: SerialPort.Attributes.system.set)
        #expect(throws: SerialPort.Failure.notATerminal) {
            try SerialPort.configure(pty.port, baud: 115_200, rtscts: false, attributes: noTTY)
        }
        let invalid = SerialPort.Attributes(get: Self.failing(EINVAL), set: SerialPort.Attributes.system.set)
        #expect(throws: SerialPort.Failure.notATerminal) {
            try SerialPort.configure(pty.port, baud: 115_200, rtscts: false, attributes: invalid)
        }
        let io = SerialPort.Attributes(get: Self.failing(EIO), set: SerialPort.Attributes.system.set)
        #expect(throws: SerialPort.Failure.cannotRead(.ioError)) {
            try SerialPort.configure(pty.port, baud: 115_200, rtscts: false, attributes: io)
        }
    }

    /// tcsetattr succeeds when any part of the change took; a driver that kept its old rate is
    /// caught by reading back. Here every read says 9600, whatever was set.
    @Test func aDriverThatKeepsAnotherRateIsRateRefused() throws {
        let pty = try Port()
        defer { pty.close() }
        let keeps9600 = SerialPort.Attributes(get: { fd, settings in
            let rc = tcgetattr(fd, &settings)
            _ = cfsetospeed(&settings, speed_t(B9600))
            _ = cfsetispeed(&settings, speed_t(B9600))
            return rc
        }, set: SerialPort.Attributes.system.set)
        #expect(throws: SerialPort.Failure.rateRefused) {
            try SerialPort.configure(pty.port, baud: 115_200, rtscts: false, attributes: keeps9600)
        }
        // The same driver at the rate it keeps is fine.
        try SerialPort.configure(pty.port, baud: 9600, rtscts: false, attributes: keeps9600)
    }

    @Test func theRateTable() {
        let rates = SerialPort.supportedRates
        #expect(rates == rates.sorted() && Set(rates).count == rates.count, "ascending, no repeats")
        #expect(rates.contains(1_000_000))
        #expect(rates.contains(115_200) && rates.contains(3_000_000))
        #expect(SerialPort.speed(for: 123_456) == nil)
        #expect(SerialPort.speed(for: 0) == nil)
        #expect(SerialPort.speed(for: 115_200) == speed_t(B115200))
        #expect(SerialPort.speed(for: 1_000_000) == speed_t(B1000000))
        #expect(SerialPort.speed(for: 4_000_000) == speed_t(B4000000))
        for rate in rates { #expect(SerialPort.speed(for: rate) != nil, "\(rate)") }
    }
}
