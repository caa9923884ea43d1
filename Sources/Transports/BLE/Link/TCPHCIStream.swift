import Foundation
import Glibc
import HAL
import LinuxIO

/// H4 over TCP: how virtual controllers and emulators (bumble, Zephyr native_sim, QEMU) expose HCI.
public final class TCPHCIStream: HCIByteStream {
    public let host: String
    public let port: UInt16
    let link: DescriptorLink

    public var description: String { link.description }

    /// Resolves `host` (IPv4 or IPv6), tries each address until one accepts, all within `timeout`,
    /// and turns Nagle off: HCI packets are small and latency-bound.
    public static func connect(host: String, port: UInt16,
                               timeout: Duration = .seconds(5)) async throws(HCILinkError) -> TCPHCIStream {
        try await BlockingOpen.run { () throws(HCILinkError) in
            let fd = try connectedSocket(host: host, port: port, timeout: timeout)
            return TCPHCIStream(fd: fd, host: host, port: port)
        }
    }

    private init(fd: Int32, host: String, port: UInt16) {
        self.host = host
        self.port = port
        let name = DeviceURI.tcp(host: host, port: port).description
        let peerGone: @Sendable (Errno) -> HCILinkError = { error in
            switch error.code {
            case ECONNRESET, EPIPE, ECONNABORTED, ENOTCONN: .closedByPeer(name)
            default: .io("\(name): \(error)")
            }
        }
        link = DescriptorLink(fd: fd, description: name, behaviour: LinkBehaviour(
            zeroReadIsEndOfFile: true,
            endOfFile: .closedByPeer(name),
            readError: peerGone,
            writeError: peerGone,
            send: { fd, bytes, count in Glibc.send(fd, bytes, count, Int32(MSG_NOSIGNAL)) }))
    }

    deinit { link.requestClose() }

    public func write(_ bytes: [UInt8]) async throws(HCILinkError) { try await link.send(bytes) }
    public func incoming() -> AsyncThrowingStream<[UInt8], any Error> { link.incoming() }
    public func close() async { await link.close() }

    static func connectedSocket(host: String, port: UInt16, timeout: Duration) throws(HCILinkError) -> Int32 {
        let deadline = ContinuousClock.now + timeout
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            let reason = rc == EAI_SYSTEM ? Errno.current.description : String(cString: gai_strerror(rc))
            throw .hostNotFound(host: host, reason: reason)
        }
        defer { freeaddrinfo(first) }

        var lastError = HCILinkError.hostNotFound(host: host, reason: "no usable address")
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate {
            candidate = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family,
                            info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue),
                            info.pointee.ai_protocol)
            if fd < 0 {
                lastError = .io("cannot create a socket for \(HCILinkError.hostPort(host, port)): \(Errno.current)")
                continue
            }
            let outcome = finishConnect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen, deadline: deadline)
            switch outcome {
            case .connected:
                var on: Int32 = 1
                _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
                return fd
            case .refused:
                lastError = .connectionRefused(host: host, port: port)
            case .timedOut:
                lastError = .connectTimedOut(host: host, port: port, seconds: timeout.linkSeconds)
            case .failed(let error):
                lastError = .io("cannot connect to \(HCILinkError.hostPort(host, port)): \(error)")
            }
            _ = Glibc.close(fd)
            if case .timedOut = outcome { break }
        }
        throw lastError
    }

    private enum ConnectOutcome { case connected, refused, timedOut, failed(Errno) }

    /// A non-blocking connect finished by poll, so the deadline holds even when SYNs vanish.
    private static func finishConnect(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t,
                                      deadline: ContinuousClock.Instant) -> ConnectOutcome {
        if Glibc.connect(fd, address, length) == 0 { return .connected }
        var error = Errno.current
        if error.code == EINPROGRESS || error == .interrupted {
            while true {
                let left = deadline - .now
                if left <= .zero { return .timedOut }
                var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                let ready = Glibc.poll(&entry, 1, Int32(min(left.linkSeconds * 1000 + 1, 60_000)))
                if ready < 0 {
                    if errno == EINTR { continue }
                    return .failed(Errno.current)
                }
                if ready == 0 { continue }
                var code: Int32 = 0
                var size = socklen_t(MemoryLayout<Int32>.size)
                if getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &size) < 0 { code = errno }
                if code == 0 { return .connected }
                error = Errno(code)
                break
            }
        }
        return error.code == ECONNREFUSED ? .refused : .failed(error)
    }
}
