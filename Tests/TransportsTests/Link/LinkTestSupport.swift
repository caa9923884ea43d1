import Foundation
import Glibc
import LinuxIO
import Testing
@testable import Transports

/// Plain BSD sockets and ptys playing the far end of a link, with poll-based waits that have
/// deadlines instead of sleeps.
enum LinkPeer {
    static let deadline: Duration = .seconds(5)

    struct SystemCallFailed: Error, CustomStringConvertible {
        var description: String
        init(_ what: String) { description = "\(what): \(String(cString: strerror(errno)))" }
    }

    /// A TCP listener on 127.0.0.1 (or ::1) with a kernel-chosen port.
    static func listener(ipv6: Bool = false) throws -> (fd: Int32, port: UInt16) {
        let fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemCallFailed("socket") }
        var port: UInt16 = 0
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_addr = in6addr_loopback
            try bindAndListen(fd, &address)
            port = UInt16(bigEndian: address.sin6_port)
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(INADDR_LOOPBACK).bigEndian
            try bindAndListen(fd, &address)
            port = UInt16(bigEndian: address.sin_port)
        }
        return (fd, port)
    }

    /// Binds, listens (unless `listen` is false) and reads the chosen address back into `address`.
    static func bindAndListen<A>(_ fd: Int32, _ address: inout A, listen: Bool = true) throws {
        var length = socklen_t(MemoryLayout<A>.size)
        let ok = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && (!listen || Glibc.listen(fd, 4) == 0) && getsockname(fd, raw, &length) == 0
            }
        }
        guard ok else { throw SystemCallFailed("bind/listen") }
    }

    /// A port on 127.0.0.1 nobody listens on: bound (so the kernel picked a free one), then released.
    static func closedPort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(INADDR_LOOPBACK).bigEndian
        try bindAndListen(fd, &address, listen: false)
        close(fd)
        return UInt16(bigEndian: address.sin_port)
    }

    /// Waits for `events` on `fd` until the deadline; false when it passed.
    static func wait(_ fd: Int32, for events: Int32, until end: ContinuousClock.Instant) -> Bool {
        while true {
            let left = end - .now
            if left <= .zero { return false }
            var entry = pollfd(fd: fd, events: Int16(events), revents: 0)
            let ready = poll(&entry, 1, Int32(left.inSeconds * 1000) + 1)
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return false }
        }
    }

    static func accept(_ listener: Int32) throws -> Int32 {
        guard wait(listener, for: Int32(POLLIN), until: .now + deadline) else { throw SystemCallFailed("accept timed out") }
        let fd = Glibc.accept(listener, nil, nil)
        guard fd >= 0 else { throw SystemCallFailed("accept") }
        return fd
    }

    /// Reads exactly `count` bytes (or throws at the deadline / end of file).
    static func read(_ fd: Int32, count: Int) throws -> [UInt8] {
        let end = ContinuousClock.now + deadline
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < count {
            guard wait(fd, for: Int32(POLLIN), until: end) else { throw SystemCallFailed("peer read timed out after \(bytes.count) bytes") }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, min($0.count, count - bytes.count)) }
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            guard n > 0 else { throw SystemCallFailed("peer read ended after \(bytes.count) bytes") }
            bytes += buffer[..<n]
        }
        return bytes
    }

    /// True once `fd` reports end of file (read returns 0) before the deadline.
    static func seesEndOfFile(_ fd: Int32) -> Bool {
        let end = ContinuousClock.now + deadline
        var byte: UInt8 = 0
        while wait(fd, for: Int32(POLLIN), until: end) {
            let n = Glibc.read(fd, &byte, 1)
            if n == 0 { return true }
            if n < 0 && errno != EINTR && errno != EAGAIN { return false }
        }
        return false
    }

    static func write(_ fd: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            guard n > 0 else { throw SystemCallFailed("peer write") }
            offset += n
        }
    }

    /// A pseudo-terminal: `master` plays the board, `slavePath` is what the stream opens as `uart:`.
    /// What posix_openpt/unlockpt/ptsname do on Linux, spelled with the ioctls because Glibc's Swift
    /// module leaves the XSI pty functions out. grantpt is a no-op with devpts.
    static func pty() throws -> (master: Int32, slavePath: String) {
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0 else { throw SystemCallFailed("open /dev/ptmx") }
        let fd = FileDescriptor(rawValue: master)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        do {
            try fd.ioctl(0x4004_5431, &unlock) // TIOCSPTLCK = _IOW('T', 0x31, int)
            try fd.ioctl(0x8004_5430, &number) // TIOCGPTN = _IOR('T', 0x30, unsigned int)
        } catch {
            close(master)
            throw error
        }
        return (master, "/dev/pts/\(number)")
    }
}

/// Reading an `incoming()` stream from a test.
enum LinkIncoming {
    /// Gathers chunks until at least `count` bytes arrived.
    static func collect(_ stream: AsyncThrowingStream<[UInt8], any Error>, count: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in stream {
            bytes += chunk
            if bytes.count >= count { break }
        }
        return bytes
    }

    /// Reads to the end; returns what arrived and the error the stream finished with (nil: finished cleanly).
    static func drain(_ stream: AsyncThrowingStream<[UInt8], any Error>) async -> (bytes: [UInt8], error: (any Error)?) {
        var bytes: [UInt8] = []
        do {
            for try await chunk in stream { bytes += chunk }
            return (bytes, nil)
        } catch {
            return (bytes, error)
        }
    }
}

/// What a link's reading thread costs while the link is quiet (issue 26: a non-blocking link read
/// in a tight loop after the first pause in traffic, burning a core until it closed).
enum QuietLink {
    /// Sends `traffic` from the far end, waits until the link has handed it all over (so the
    /// reading thread has just read bytes, the moment the spin began), then holds the link quiet
    /// for `window` and returns the reading thread's CPU over it as a share of the window. A
    /// thread that blocks in poll uses next to none; one that spins uses all it is given (at
    /// least a half on two busy cores), so the bound tests make is not a timing threshold.
    static func readerShare(of link: DescriptorLink, farEnd: Int32, traffic: [UInt8] = Array(repeating: 0x04, count: 300),
                            window: Duration = .seconds(2)) async throws -> Double {
        var chunks = link.incoming().makeAsyncIterator()
        try LinkPeer.write(farEnd, traffic)
        var received = 0
        while received < traffic.count {
            guard let chunk = try await chunks.next() else { throw LinkPeer.SystemCallFailed("the link ended early") }
            received += chunk.count
        }
        let thread = try #require(link.readingThreadID)
        let before = try #require(ThreadCPUTime.nanoseconds(ofThread: thread))
        let clock = ContinuousClock()
        let start = clock.now
        // The measuring window itself: nothing is synchronised by this wait.
        try await Task.sleep(for: window)
        let elapsed = clock.now - start
        let after = try #require(ThreadCPUTime.nanoseconds(ofThread: thread))
        return Double(after - before) / 1e9 / elapsed.inSeconds
    }

    /// Far below a spinning thread's share, far above what a blocked one accumulates.
    static let bound = 0.05
}
