import Glibc

/// A TCP connection opened the way a latency-bound byte link wants it: every address of the host
/// tried in turn, non-blocking connects finished by poll so one deadline holds even when SYNs
/// vanish, and Nagle off (HCI packets are small, and each waits for an answer).
package enum TCPConnection {
    /// Why no connection was made, in terms a transport can turn into its own words.
    package enum Failure: Error, Hashable, Sendable {
        /// getaddrinfo found no address; `reason` is its own text (or the errno's).
        case hostNotFound(reason: String)
        /// The last address tried refused: nothing listens on the port.
        case refused
        /// The deadline passed before any address answered.
        case timedOut
        /// No socket could be made for an address (descriptors exhausted, family missing).
        case noSocket(Errno)
        /// connect(2) failed otherwise.
        case failed(Errno)
    }

    /// Resolves `host` (IPv4 or IPv6, `port` numeric) and connects to the first address that
    /// accepts before `deadline`. The descriptor is non-blocking and close-on-exec. Blocks the
    /// calling thread: call it from a thread of its own, never from a task.
    package static func connect(host: String, port: UInt16, deadline: ContinuousClock.Instant) throws(Failure) -> FileDescriptor {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            let reason = rc == EAI_SYSTEM ? Errno.current.description : String(cString: gai_strerror(rc))
            throw .hostNotFound(reason: reason)
        }
        defer { freeaddrinfo(first) }

        var lastFailure = Failure.hostNotFound(reason: "no usable address")
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate {
            candidate = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family,
                            info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue),
                            info.pointee.ai_protocol)
            if fd < 0 {
                lastFailure = .noSocket(Errno.current)
                continue
            }
            let descriptor = FileDescriptor(rawValue: fd)
            let outcome = finishConnect(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen, deadline: deadline)
            guard let outcome else {
                var on: Int32 = 1
                _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
                return descriptor
            }
            descriptor.close()
            lastFailure = outcome
            if outcome == .timedOut { break }
        }
        throw lastFailure
    }

    /// Finishes a non-blocking connect by polling for writability until `deadline`; nil once connected.
    private static func finishConnect(_ fd: FileDescriptor, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t,
                                      deadline: ContinuousClock.Instant) -> Failure? {
        if Glibc.connect(fd.rawValue, address, length) == 0 { return nil }
        var error = Errno.current
        if error.code == EINPROGRESS || error == .interrupted {
            while true {
                let left = deadline - .now
                if left <= .zero { return .timedOut }
                let milliseconds = left.pollMilliseconds(ceiling: 60_000)
                let ready: FileDescriptor.PollEvents
                do { ready = try fd.poll(for: .writable, timeoutMilliseconds: milliseconds) } catch { return .failed(error) }
                if ready.isEmpty { continue }
                guard let pending = fd.socketError() else { return nil }
                error = pending
                break
            }
        }
        return error == .connectionRefused ? .refused : .failed(error)
    }
}

extension FileDescriptor {
    /// A socket's pending error (SO_ERROR), nil when there is none: how a non-blocking connect reports its end.
    package func socketError() -> Errno? {
        var code: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(rawValue, SOL_SOCKET, SO_ERROR, &code, &size) < 0 { code = errno }
        return code == 0 ? nil : Errno(code)
    }

    /// Whether TCP_NODELAY is on (nil when this is not a TCP socket): tests check the links set it.
    package var tcpNoDelay: Bool? {
        var value: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(rawValue, Int32(IPPROTO_TCP), TCP_NODELAY, &value, &size) == 0 else { return nil }
        return value != 0
    }
}
