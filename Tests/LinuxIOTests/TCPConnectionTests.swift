import Glibc
import Testing
@testable import LinuxIO

/// A listening TCP socket on a loopback address with a port the kernel chose.
struct LoopbackListener {
    let descriptor: FileDescriptor
    let port: UInt16

    /// Binds `address` ("127.0.0.1" or "::1") port 0 and listens with `backlog`.
    init(_ address: String, backlog: Int32 = 4) throws {
        let v6 = address.contains(":")
        let fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Errno.current }
        descriptor = FileDescriptor(rawValue: fd)
        var storage = sockaddr_storage()
        var length: socklen_t
        if v6 {
            var address6 = sockaddr_in6()
            address6.sin6_family = sa_family_t(AF_INET6)
            guard inet_pton(AF_INET6, address, &address6.sin6_addr) == 1 else { descriptor.close(); throw Errno.invalid }
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: address6, as: sockaddr_in6.self) }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            var address4 = sockaddr_in()
            address4.sin_family = sa_family_t(AF_INET)
            guard inet_pton(AF_INET, address, &address4.sin_addr) == 1 else { descriptor.close(); throw Errno.invalid }
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: address4, as: sockaddr_in.self) }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        }
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, backlog) == 0 else {
            let error = Errno.current
            descriptor.close()
            throw error
        }
        length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { descriptor.close(); throw Errno.current }
        // sin_port and sin6_port sit at the same offset, in network order.
        let raw = withUnsafeBytes(of: storage) { $0.load(fromByteOffset: 2, as: UInt16.self) }
        port = UInt16(bigEndian: raw)
    }

    /// accept(2), blocking: the connection a client made.
    func accept() throws -> FileDescriptor {
        let fd = Glibc.accept(descriptor.rawValue, nil, nil)
        guard fd >= 0 else { throw Errno.current }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return FileDescriptor(rawValue: fd)
    }

    func close() { descriptor.close() }
}

/// A port on 127.0.0.1 nothing listens on: one the kernel just gave a listener, now closed.
func closedLoopbackPort() throws -> UInt16 {
    let listener = try LoopbackListener("127.0.0.1")
    listener.close()
    return listener.port
}

/// The local and peer addresses of a socket, as raw bytes, to match the two ends of a connection.
func socketAddress(_ fd: FileDescriptor, peer: Bool) -> [UInt8]? {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let rc = withUnsafeMutablePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            peer ? getpeername(fd.rawValue, $0, &length) : getsockname(fd.rawValue, $0, &length)
        }
    }
    guard rc == 0 else { return nil }
    return withUnsafeBytes(of: storage) { Array($0.prefix(Int(length))) }
}

let ipv6LoopbackAvailable: Bool = {
    guard let listener = try? LoopbackListener("::1") else { return false }
    listener.close()
    return true
}()

/// TCPConnection.connect against real loopback sockets: it connects to a listener (which then
/// accepts that very connection) with a descriptor that is non-blocking, close-on-exec and has
/// Nagle off; a port nothing listens on is `.refused`, a name that cannot resolve is
/// `.hostNotFound` with the resolver's words, and a deadline that has passed while the SYN goes
/// unanswered (the listener's queue is full) is `.timedOut`.
@Suite struct TCPConnectionTests {
    func expectConnects(to address: String) throws {
        let listener = try LoopbackListener(address)
        defer { listener.close() }
        let client = try TCPConnection.connect(host: address, port: listener.port, deadline: .now + .seconds(10))
        defer { client.close() }
        #expect(client.isNonBlocking == true)
        #expect(fcntl(client.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        #expect(client.tcpNoDelay == true)
        #expect(client.socketError() == nil)
        let accepted = try listener.accept()
        defer { accepted.close() }
        #expect(socketAddress(accepted, peer: true) == socketAddress(client, peer: false), "the listener got this connection")
        #expect(accepted.tcpNoDelay == false, "Nagle is off on the client's end only")
        let bytes: [UInt8] = [0x01, 0x03, 0x0C, 0x00]
        #expect(try bytes.withUnsafeBytes { try client.send(from: $0) } == bytes.count)
        #expect(try readExactly(accepted, bytes.count) == bytes)
    }

    @Test func connectsToAListenerOnIPv4Loopback() throws {
        try expectConnects(to: "127.0.0.1")
    }

    @Test(.enabled(if: ipv6LoopbackAvailable, "no ::1 on this machine"))
    func connectsToAListenerOnIPv6Loopback() throws {
        try expectConnects(to: "::1")
    }

    @Test func aPortNothingListensOnIsRefused() throws {
        let port = try closedLoopbackPort()
        #expect(throws: TCPConnection.Failure.refused) {
            _ = try TCPConnection.connect(host: "127.0.0.1", port: port, deadline: .now + .seconds(10))
        }
    }

    @Test func aNameThatDoesNotResolveIsHostNotFound() throws {
        do {
            let fd = try TCPConnection.connect(host: "no-such-host.invalid", port: 80, deadline: .now + .seconds(10))
            fd.close()
            Issue.record("connected to no-such-host.invalid")
        } catch {
            guard case .hostNotFound(let reason) = error else {
                Issue.record("expected hostNotFound, got \(error)")
                return
            }
            #expect(!reason.isEmpty)
        }
    }

    /// With backlog 0 the listener's accept queue is full after one connection, and Linux then
    /// drops further SYNs, so the second connect stays in progress whatever the machine's speed:
    /// a deadline already past ends it at the first check, a near one once it passes.
    @Test func aDeadlineThatPassesUnansweredIsTimedOut() throws {
        let listener = try LoopbackListener("127.0.0.1", backlog: 0)
        defer { listener.close() }
        let first = try TCPConnection.connect(host: "127.0.0.1", port: listener.port, deadline: .now + .seconds(10))
        defer { first.close() }
        // The first connection sits in the accept queue once the listener is readable.
        try #require(try listener.descriptor.poll(for: .readable, timeoutMilliseconds: 10_000).contains(.readable))
        #expect(throws: TCPConnection.Failure.timedOut) {
            _ = try TCPConnection.connect(host: "127.0.0.1", port: listener.port, deadline: .now - .seconds(1))
        }
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(50)
        #expect(throws: TCPConnection.Failure.timedOut) {
            _ = try TCPConnection.connect(host: "127.0.0.1", port: listener.port, deadline: deadline)
        }
        #expect(ContinuousClock.now >= deadline, "not given up before the deadline")
    }

    @Test func aConnectedSocketHasNoErrorAndAPipeNoNagleSetting() throws {
        let (read, write) = try makePipe()
        defer { read.close(); write.close() }
        #expect(read.tcpNoDelay == nil)
        let (one, other) = try makeSocketPair()
        defer { one.close(); other.close() }
        #expect(one.socketError() == nil)
        #expect(one.tcpNoDelay == nil, "a Unix socket has no TCP options")
        #expect(read.socketError() == Errno(ENOTSOCK), "getsockopt's own failure is the error")
    }
}
