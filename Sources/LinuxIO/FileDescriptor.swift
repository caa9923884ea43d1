import CLinuxShims
import Glibc

/// An open file descriptor: a thin typed layer over open/read/write/close/poll.
package struct FileDescriptor: Hashable, Sendable {
    package let rawValue: Int32

    package init(rawValue: Int32) { self.rawValue = rawValue }

    package enum Access: Sendable { case readOnly, writeOnly, readWrite }

    /// Opens with `open(2)` (never `openat`: umockdev emulates devices behind `open` only).
    package static func open(_ path: String, _ access: Access, nonBlocking: Bool = false) throws(Errno) -> FileDescriptor {
        var flags: Int32 = switch access {
        case .readOnly: O_RDONLY
        case .writeOnly: O_WRONLY
        case .readWrite: O_RDWR
        }
        if nonBlocking { flags |= O_NONBLOCK }
        return FileDescriptor(rawValue: try check(hal_open(path, flags)))
    }

    /// Opening options beyond the access mode, each a flag of open(2).
    package struct Options: OptionSet, Sendable {
        package let rawValue: Int32
        package init(rawValue: Int32) { self.rawValue = rawValue }
        /// O_NONBLOCK: reads and writes return EAGAIN instead of waiting (device threads poll).
        package static let nonBlocking = Options(rawValue: O_NONBLOCK)
        /// O_NOCTTY: a serial board must never become our controlling terminal.
        package static let noControllingTerminal = Options(rawValue: O_NOCTTY)
        /// O_CREAT | O_TRUNC: make the file, or empty the one already there.
        package static let createOrTruncate = Options(rawValue: O_CREAT | O_TRUNC)
        /// O_CLOEXEC: not inherited by programs we start. Every descriptor opened here is
        /// close-on-exec whether or not it is asked for; the option lets a call site say so.
        package static let closeOnExec = Options(rawValue: O_CLOEXEC)
    }

    /// Opens with `open(2)` and the given options; `permissions` apply when the file is created.
    package static func open(_ path: String, _ access: Access, options: Options,
                             permissions: UInt32 = 0o644) throws(Errno) -> FileDescriptor {
        var flags: Int32 = switch access {
        case .readOnly: O_RDONLY
        case .writeOnly: O_WRONLY
        case .readWrite: O_RDWR
        }
        flags |= options.rawValue
        let fd = options.contains(.createOrTruncate) ? Glibc.open(path, flags | O_CLOEXEC, mode_t(permissions)) : hal_open(path, flags)
        if options.contains(.createOrTruncate) {
            guard fd >= 0 else { throw Errno.current }
            return FileDescriptor(rawValue: fd)
        }
        return FileDescriptor(rawValue: try check(fd))
    }

    package func close() { _ = Glibc.close(rawValue) }

    /// Runs `body` with the descriptor and closes it afterwards, whatever happens.
    package static func withOpened<R>(_ path: String, _ access: Access, nonBlocking: Bool = false,
                                     _ body: (FileDescriptor) throws(Errno) -> R) throws(Errno) -> R {
        let fd = try open(path, access, nonBlocking: nonBlocking)
        defer { fd.close() }
        return try body(fd)
    }

    package func ioctl(_ request: UInt, _ argument: UnsafeMutableRawPointer?) throws(Errno) {
        _ = try check(hal_ioctl(rawValue, request, argument))
    }

    /// Reads what is available, retrying on EINTR; 0 bytes means end of file.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        while true {
            let n = Glibc.read(rawValue, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno != EINTR { throw Errno.current }
        }
    }

    /// One write(2) of what the descriptor takes now, retrying on EINTR; a full non-blocking
    /// descriptor throws ``Errno/wouldBlock`` so the caller can poll.
    package func write(from bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        while true {
            let n = Glibc.write(rawValue, bytes.baseAddress, bytes.count)
            if n >= 0 { return n }
            if errno != EINTR { throw Errno.current }
        }
    }

    /// One send(2) with MSG_NOSIGNAL, retrying on EINTR: on a socket whose peer has gone this
    /// fails with EPIPE instead of killing the process with SIGPIPE.
    package func send(from bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        while true {
            let n = Glibc.send(rawValue, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if n >= 0 { return n }
            if errno != EINTR { throw Errno.current }
        }
    }

    /// Sets O_NONBLOCK on an open descriptor (one that came from elsewhere, like a pipe end).
    package func setNonBlocking() throws(Errno) {
        let flags = fcntl(rawValue, F_GETFL)
        if flags < 0 || fcntl(rawValue, F_SETFL, flags | O_NONBLOCK) < 0 { throw Errno.current }
    }

    /// Whether O_NONBLOCK is set (nil if the descriptor is not open).
    package var isNonBlocking: Bool? {
        let flags = fcntl(rawValue, F_GETFL)
        return flags < 0 ? nil : flags & O_NONBLOCK != 0
    }

    /// An ioctl whose argument is a struct the kernel reads or fills in place.
    package func ioctl<Argument>(_ request: UInt, _ argument: inout Argument) throws(Errno) {
        let rc = withUnsafeMutablePointer(to: &argument) { hal_ioctl(rawValue, request, $0) }
        _ = try check(rc)
    }

    /// An ioctl whose argument is a number passed in the pointer's place (HCIDEVDOWN's device index).
    package func ioctl(_ request: UInt, value: UInt) throws(Errno) {
        _ = try check(hal_ioctl(rawValue, request, UnsafeMutableRawPointer(bitPattern: value)))
    }

    /// Writes every byte, retrying on EINTR and short writes.
    package func writeAll(_ bytes: [UInt8]) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in raw.baseAddress.map { Glibc.write(rawValue, $0 + offset, raw.count - offset) } ?? 0 }
            if n < 0 {
                if errno == EINTR { continue }
                throw Errno.current
            }
            offset += n
        }
    }

    /// For a regular file, the bytes between the read position and the end; nil for anything
    /// else (a pipe, a FIFO, a device), where only reading tells. Readers of sizes that came from
    /// outside check a declared size against this before allocating for it.
    package func bytesLeftInFile() -> Int? {
        var info = hal_file_info()
        guard hal_fstat(rawValue, &info) == 0, info.type == HAL_FILE_REGULAR else { return nil }
        let position = Glibc.lseek(rawValue, 0, SEEK_CUR)
        guard position >= 0 else { return nil }
        return max(0, Int(info.size) - Int(position))
    }

    package struct PollEvents: OptionSet, Sendable {
        package let rawValue: Int16
        package init(rawValue: Int16) { self.rawValue = rawValue }
        package static let readable = PollEvents(rawValue: Int16(POLLIN))
        package static let writable = PollEvents(rawValue: Int16(POLLOUT))
        package static let error = PollEvents(rawValue: Int16(POLLERR))
        package static let hangUp = PollEvents(rawValue: Int16(POLLHUP))
        package static let invalid = PollEvents(rawValue: Int16(POLLNVAL))
    }

    /// Waits for the descriptor; returns the events that happened, empty on timeout.
    package func poll(for events: PollEvents, timeoutMilliseconds: Int32) throws(Errno) -> PollEvents {
        var entry = pollfd(fd: rawValue, events: events.rawValue, revents: 0)
        while true {
            let rc = Glibc.poll(&entry, 1, timeoutMilliseconds)
            if rc >= 0 { return PollEvents(rawValue: entry.revents) }
            if errno != EINTR { throw Errno.current }
        }
    }
}
