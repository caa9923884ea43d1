import HAL
import LinuxIO

/// H4 over TCP: how virtual controllers and emulators (bumble, Zephyr native_sim, QEMU) expose HCI.
public final class TCPHCIStream: HCIByteStream {
    /// The host name or address connected to.
    public let host: String
    /// The TCP port connected to.
    public let port: UInt16
    let link: DescriptorLink

    /// Names the device for messages, in URI form.
    public var description: String { link.description }

    /// Resolves `host` (IPv4 or IPv6), tries each address until one accepts, all within `timeout`,
    /// and turns Nagle off: HCI packets are small and latency-bound.
    public static func connect(host: String, port: UInt16,
                               timeout: Duration = .seconds(5)) async throws(HCILinkError) -> TCPHCIStream {
        try await BlockingWork.run("hci-connect-tcp") { () throws(HCILinkError) in
            let fd = try connectedSocket(host: host, port: port, timeout: timeout)
            return TCPHCIStream(fd: fd, host: host, port: port)
        }
    }

    private init(fd: FileDescriptor, host: String, port: UInt16) {
        self.host = host
        self.port = port
        let name = DeviceURI.tcp(host: host, port: port).description
        let peerGone: @Sendable (Errno) -> HCILinkError = { error in
            switch error {
            case .connectionReset, .brokenPipe, .connectionAborted, .notConnected: .closedByPeer(name)
            default: .io("\(name): \(error)")
            }
        }
        link = DescriptorLink(fd: fd, description: name, behaviour: LinkBehaviour(
            zeroReadIsEndOfFile: true,
            endOfFile: .closedByPeer(name),
            readError: peerGone,
            writeError: peerGone,
            send: { fd, bytes throws(Errno) in try fd.send(from: bytes) }))
    }

    deinit { link.requestClose() }

    /// Sends all of `bytes`, in order with other writes.
    public func write(_ bytes: [UInt8]) async throws(HCILinkError) { try await link.send(bytes) }
    /// The bytes read, chunk by chunk as TCP delivered them; one consumer only.
    public func incoming() -> AsyncThrowingStream<[UInt8], any Error> { link.incoming() }
    /// Stops reading and closes the socket; idempotent.
    public func close() async { await link.close() }

    /// Connects within `timeout` (see `TCPConnection`), in the contract's words when it cannot.
    static func connectedSocket(host: String, port: UInt16, timeout: Duration) throws(HCILinkError) -> FileDescriptor {
        do { return try TCPConnection.connect(host: host, port: port, deadline: .now + timeout) } catch {
            switch error {
            case .hostNotFound(let reason): throw .hostNotFound(host: host, reason: reason)
            case .refused: throw .connectionRefused(host: host, port: port)
            case .timedOut: throw .connectTimedOut(host: host, port: port, seconds: timeout.inSeconds)
            case .noSocket(let errno): throw .io("cannot create a socket for \(HCILinkError.hostPort(host, port)): \(errno)")
            case .failed(let errno): throw .io("cannot connect to \(HCILinkError.hostPort(host, port)): \(errno)")
            }
        }
    }
}

extension TCPHCIStream: HCIReceivingStream {
    /// Runs `receiver` on the link's reading thread (see HCIChunkReceiver).
    package func deliver(to receiver: any HCIChunkReceiver) { link.deliver(to: receiver) }
}
