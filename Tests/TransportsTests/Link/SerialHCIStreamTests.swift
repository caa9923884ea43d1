import Foundation
import Glibc
import HAL
import LinuxIO
import Testing
@testable import Transports

/// A pty stands in for the board: its master end is the controller, its slave the `uart:` path.
@Suite(.timeLimit(.minutes(1))) struct SerialHCIStreamTests {
    /// Every byte value, so any cooked-mode processing left on (CR/LF mapping, XON/XOFF, ^C) shows up.
    static let everyByte = (0...255).map(UInt8.init)

    /// Issue 26: after traffic, a quiet `uart:` link must leave its reading thread blocked.
    @Test func aQuietLinkAfterTrafficCostsNoCPU() async throws {
        let (master, slavePath) = try LinkPeer.pty()
        defer { close(master) }
        let stream = try await SerialHCIStream.open(path: slavePath)
        let share = try await QuietLink.readerShare(of: stream.link, farEnd: master)
        #expect(share < QuietLink.bound, "the reading thread used \(share) of a core while the link was quiet")
        await stream.close()
    }

    @Test func bytesFlowBothWaysUnchangedAt1MbaudWithRTSCTS() async throws {
        let (master, slavePath) = try LinkPeer.pty()
        defer { close(master) }
        let stream = try await HCIStreams.open(try DeviceURI(parsing: "uart:\(slavePath)?baud=1000000&rtscts=1"))
        let serial = try #require(stream as? SerialHCIStream)
        #expect(stream.description == "uart:\(slavePath)?baud=1000000&rtscts=1")

        try await stream.write(Self.everyByte)
        #expect(try LinkPeer.read(master, count: 256) == Self.everyByte)
        try LinkPeer.write(master, Self.everyByte.reversed())
        #expect(try await LinkIncoming.collect(stream.incoming(), count: 256) == Self.everyByte.reversed())

        var settings = termios()
        #expect(tcgetattr(try #require(serial.link.rawDescriptor), &settings) == 0)
        #expect(cfgetospeed(&settings) == speed_t(B1000000))
        #expect(settings.c_cflag & tcflag_t(CSIZE) == tcflag_t(CS8))
        #expect(settings.c_cflag & tcflag_t(PARENB | CSTOPB) == 0)
        #expect(settings.c_cflag & tcflag_t(CLOCAL | CREAD) == tcflag_t(CLOCAL | CREAD))
        #expect(settings.c_cflag & tcflag_t(CRTSCTS) != 0)
        #expect(settings.c_lflag & tcflag_t(ICANON | ECHO | ISIG) == 0)
        withUnsafeBytes(of: settings.c_cc) { cc in
            #expect(cc[Int(VMIN)] == 0 && cc[Int(VTIME)] == 0)
        }
        await stream.close()
    }

    @Test func withoutRTSCTSFlowControlIsOff() async throws {
        let (master, slavePath) = try LinkPeer.pty()
        defer { close(master) }
        let stream = try await SerialHCIStream.open(path: slavePath, baud: 115_200, rtscts: false)
        var settings = termios()
        #expect(tcgetattr(try #require(stream.link.rawDescriptor), &settings) == 0)
        #expect(cfgetispeed(&settings) == speed_t(B115200))
        #expect(settings.c_cflag & tcflag_t(CRTSCTS) == 0)
        await stream.close()
    }

    @Test func closingTheMasterEndsTheStreamWithDisappeared() async throws {
        let (master, slavePath) = try LinkPeer.pty()
        let stream = try await SerialHCIStream.open(path: slavePath)
        try LinkPeer.write(master, [0x04, 0x0E, 0x04])
        close(master)

        let (_, error) = await LinkIncoming.drain(stream.incoming())
        #expect(error as? HCILinkError == .deviceVanished("serial port \(slavePath)"))
        #expect("\(error.map { "\($0)" } ?? "")" == "serial port \(slavePath) disappeared (unplugged or powered off?)")
        await #expect(throws: HCILinkError.deviceVanished("serial port \(slavePath)")) { try await stream.write([0x01]) }
        await stream.close()
    }

    @Test func closeWhileAReadIsBlockedReturnsPromptly() async throws {
        let (master, slavePath) = try LinkPeer.pty()
        defer { close(master) }
        let stream = try await SerialHCIStream.open(path: slavePath)
        let reader = Task { await LinkIncoming.drain(stream.incoming()) }
        let took = await ContinuousClock().measure { await stream.close() }
        let (bytes, error) = await reader.value
        #expect(took < .seconds(1))
        #expect(bytes.isEmpty && error == nil)
    }

    @Test func aFileThatIsNoTerminalIsRefused() async {
        await #expect(throws: HCILinkError.notATTY("/dev/null")) {
            _ = try await SerialHCIStream.open(path: "/dev/null")
        }
        #expect(HCILinkError.notATTY("/dev/null").description == "/dev/null is not a serial port (not a tty)")
    }

    @Test func unsupportedBaudRateIsRefusedBeforeOpening() async {
        await #expect(throws: HCILinkError.unsupportedBaudRate(123_456)) {
            _ = try await SerialHCIStream.open(path: "/dev/does-not-matter", baud: 123_456)
        }
        let message = HCILinkError.unsupportedBaudRate(123_456).description
        #expect(message.hasPrefix("baud rate 123456 has no termios setting on Linux: use one of "))
        for rate in [115_200, 230_400, 460_800, 921_600, 1_000_000, 2_000_000, 3_000_000] {
            #expect(SerialPort.speed(for: rate) != nil, "\(rate)")
            #expect(message.contains(String(rate)))
        }
    }

    /// Descriptors this process has open, to see that a refused port is closed again.
    static func openDescriptorCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    @Test func aRateTheDriverRefusesWithEINVALIsTheDriversRefusal() throws {
        let (master, slavePath) = try LinkPeer.pty()
        defer { close(master) }
        // An on-board UART's driver: every rate has a constant, but it answers EINVAL to this one.
        let refusing = SerialPort.Attributes(get: { tcgetattr($0, &$1) }, set: { _, _ in
            errno = EINVAL
            return -1
        })
        let before = Self.openDescriptorCount()
        #expect(throws: HCILinkError.baudRateRefused(path: slavePath, baud: 1_000_000)) {
            _ = try SerialHCIStream.configuredPort(path: slavePath, baud: 1_000_000, rtscts: true, terminal: refusing)
        }
        #expect(Self.openDescriptorCount() == before, "the refused port was left open")
    }

    @Test func aDriverThatQuietlyKeepsAnotherRateIsARefusalToo() throws {
        let (master, slavePath) = try LinkPeer.pty()
        defer { close(master) }
        // tcsetattr succeeds (something changed), but the speed read back is still 115200.
        let ignoring = SerialPort.Attributes(get: { fd, settings in
            let result = tcgetattr(fd, &settings)
            _ = cfsetospeed(&settings, speed_t(B115200))
            return result
        }, set: { tcsetattr($0, TCSANOW, &$1) })
        #expect(throws: HCILinkError.baudRateRefused(path: slavePath, baud: 1_000_000)) {
            _ = try SerialHCIStream.configuredPort(path: slavePath, baud: 1_000_000, rtscts: true, terminal: ignoring)
        }
        // The same driver at the rate it keeps is fine.
        let fd = try SerialHCIStream.configuredPort(path: slavePath, baud: 115_200, rtscts: true, terminal: ignoring)
        fd.close()
    }

    @Test func otherSetupErrorsAreNotCalledARateProblem() throws {
        let (master, slavePath) = try LinkPeer.pty()
        defer { close(master) }
        let failing = SerialPort.Attributes(get: { tcgetattr($0, &$1) }, set: { _, _ in
            errno = EIO
            return -1
        })
        #expect(throws: HCILinkError.io("cannot configure \(slavePath): \(Errno(EIO))")) {
            _ = try SerialHCIStream.configuredPort(path: slavePath, baud: 1_000_000, rtscts: true, terminal: failing)
        }
    }

    @Test func aRefusedRateSaysWhatToDo() {
        let onBoard = HCILinkError.baudRateRefused(path: "/dev/ttyS0", baud: 1_000_000).description
        #expect(onBoard == "the driver of /dev/ttyS0 refused 1000000 baud (an on-board 16550 UART tops out at 115200): "
                + "use ?baud=115200 (and set the board to it), or a USB serial adapter")
        // Not the old contradiction: "not supported (use one of …, 1000000, …)".
        #expect(!onBoard.contains("not supported") && !onBoard.contains("use one of"))
        let adapter = HCILinkError.baudRateRefused(path: "/dev/ttyUSB0", baud: 4_000_000).description
        #expect(adapter == "the driver of /dev/ttyUSB0 refused 4000000 baud: pick a rate the adapter supports with ?baud=N "
                + "(the board must use the same rate)")
        #expect(!HCILinkError.baudRateRefused(path: "/dev/ttyS1", baud: 57_600).description.contains("16550"))
    }

    @Test func missingPortAndPermissionMessages() async {
        await #expect(throws: HCILinkError.noSuchDevice("/dev/ttyACM-nonexistent")) {
            _ = try await SerialHCIStream.open(path: "/dev/ttyACM-nonexistent")
        }
        #expect(HCILinkError.permissionDenied("/dev/ttyACM0").description
            == "no permission to open /dev/ttyACM0: add yourself to the dialout group (then log in again)")
    }
}
