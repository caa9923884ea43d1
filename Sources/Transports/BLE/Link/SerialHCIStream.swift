import HAL
import LinuxIO

/// H4 over a serial port, e.g. a Zephyr `hci_uart` board on /dev/ttyACM0.
public final class SerialHCIStream: HCIByteStream {
    /// The serial device path, e.g. /dev/ttyACM0.
    public let path: String
    /// The line rate the port was opened at; it must match the board's firmware.
    public let baud: Int
    /// Whether RTS/CTS hardware flow control is on.
    public let rtscts: Bool
    let link: DescriptorLink

    /// Names the device for messages, in URI form.
    public var description: String { link.description }

    /// Opens `path` raw 8N1 at `baud`, with hardware flow control when `rtscts` (H4 has no
    /// resynchronisation, so a lost byte at 1 Mbaud breaks the link: boards expect RTS/CTS).
    public static func open(path: String, baud: Int = 1_000_000,
                            rtscts: Bool = true) async throws(HCILinkError) -> SerialHCIStream {
        guard SerialPort.speed(for: baud) != nil else { throw .unsupportedBaudRate(baud) }
        return try await BlockingWork.run("hci-open-uart") { () throws(HCILinkError) in
            let fd = try configuredPort(path: path, baud: baud, rtscts: rtscts)
            return SerialHCIStream(fd: fd, path: path, baud: baud, rtscts: rtscts)
        }
    }

    private init(fd: FileDescriptor, path: String, baud: Int, rtscts: Bool) {
        self.path = path
        self.baud = baud
        self.rtscts = rtscts
        let device = "serial port \(path)"
        let name = DeviceURI.uart(path: path, baud: baud, rtscts: rtscts).description
        let gone: @Sendable (Errno) -> HCILinkError = { error in
            switch error {
            case .ioError, .noDevice, .noSuchDeviceOrAddress, .shutDown: .deviceVanished(device)
            default: .io("\(device): \(error)")
            }
        }
        link = DescriptorLink(fd: fd, description: name, behaviour: LinkBehaviour(
            zeroReadIsEndOfFile: false, endOfFile: .deviceVanished(device), readError: gone, writeError: gone))
    }

    deinit { link.requestClose() }

    /// Sends all of `bytes`, in order with other writes.
    public func write(_ bytes: [UInt8]) async throws(HCILinkError) { try await link.send(bytes) }
    /// The bytes read, chunk by chunk; one consumer only.
    public func incoming() -> AsyncThrowingStream<[UInt8], any Error> { link.incoming() }
    /// Stops reading and closes the port; idempotent.
    public func close() async { await link.close() }

    /// Opens `path` and sets it up for H4 (see `SerialPort`), in the contract's words when it
    /// cannot; the port is closed again on any failure. Tests pass their own `terminal` to play
    /// a driver that refuses or ignores a rate (a pty takes any).
    static func configuredPort(path: String, baud: Int, rtscts: Bool,
                               terminal: SerialPort.Attributes = .system) throws(HCILinkError) -> FileDescriptor {
        let fd: FileDescriptor
        do { fd = try SerialPort.open(path) } catch {
            switch error {
            case .noEntry, .noSuchDeviceOrAddress, .noDevice: throw .noSuchDevice(path)
            case .accessDenied, .notPermitted: throw .permissionDenied(path)
            case .busy: throw .io("\(path) is in use by another program")
            case .notADirectory, .isADirectory: throw .notATTY(path)
            default: throw .io("cannot open \(path): \(error)")
            }
        }
        do { try SerialPort.configure(fd, baud: baud, rtscts: rtscts, attributes: terminal) } catch {
            fd.close()
            switch error {
            case .notATerminal: throw .notATTY(path)
            case .cannotRead(let errno): throw .io("cannot read the settings of \(path): \(errno)")
            case .unsupportedRate: throw .unsupportedBaudRate(baud)
            case .rateRefused: throw .baudRateRefused(path: path, baud: baud)
            case .cannotApply(let errno): throw .io("cannot configure \(path): \(errno)")
            }
        }
        return fd
    }
}

extension SerialHCIStream: HCIReceivingStream {
    /// Runs `receiver` on the link's reading thread (see HCIChunkReceiver).
    package func deliver(to receiver: any HCIChunkReceiver) { link.deliver(to: receiver) }
}
