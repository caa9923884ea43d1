import Foundation
import Glibc
import Testing
@testable import LinuxIO

/// A fresh directory under the system's temporary directory (mkdtemp), removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        var base = NSTemporaryDirectory()
        while base.count > 1, base.hasSuffix("/") { base.removeLast() }
        var template = Array((base + "/linuxio-tests.XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { throw Errno.current }
        // The kernel's own spelling (no // and no symbolic links), as /proc shows paths.
        guard let real = realpath(made, nil) else { throw Errno.current }
        defer { free(real) }
        path = String(cString: real)
    }

    func path(_ name: String) -> String { path + "/" + name }

    /// Every entry, hidden ones too (a stray temporary would be hidden), sorted.
    func entries(_ relative: String = "") -> [String] {
        let directory = relative.isEmpty ? path : path(relative)
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    func write(_ name: String, _ bytes: [UInt8]) throws {
        guard FileManager.default.createFile(atPath: path(name), contents: Data(bytes)) else { throw Errno.current }
    }

    func contents(_ name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path(name)).map { Array($0) }
    }

    /// The permission bits (st_mode & 07777) of what is at `name`, without following a final link.
    func mode(_ name: String) -> mode_t? {
        var info = stat()
        guard lstat(path(name), &info) == 0 else { return nil }
        return info.st_mode & 0o7777
    }

    func makeDirectory(_ relative: String) throws {
        try FileManager.default.createDirectory(atPath: path(relative), withIntermediateDirectories: true)
    }

    func symlink(_ relative: String, to target: String) throws {
        guard Glibc.symlink(target, path(relative)) == 0 else { throw Errno.current }
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// A pipe: (read end, write end).
func makePipe() throws -> (read: FileDescriptor, write: FileDescriptor) {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { throw Errno.current }
    return (FileDescriptor(rawValue: ends[0]), FileDescriptor(rawValue: ends[1]))
}

/// A connected pair of Unix stream sockets.
func makeSocketPair() throws -> (FileDescriptor, FileDescriptor) {
    var ends: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else { throw Errno.current }
    return (FileDescriptor(rawValue: ends[0]), FileDescriptor(rawValue: ends[1]))
}

/// A pseudo-terminal through /dev/ptmx: (master, slave), neither becoming our controlling terminal.
/// Glibc's module exports neither posix_openpt nor openpty, so this is what they do on Linux:
/// unlock the master (TIOCSPTLCK 0), ask its number (TIOCGPTN), open /dev/pts/N.
func openPseudoTerminal() throws -> (master: FileDescriptor, slave: FileDescriptor) {
    // _IOW('T', 0x31, int) and _IOR('T', 0x30, unsigned int): function-like macros Swift cannot import.
    let setLock: UInt = 0x4004_5431
    let getNumber: UInt = 0x8004_5430
    let masterRaw = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
    guard masterRaw >= 0 else { throw Errno.current }
    let master = FileDescriptor(rawValue: masterRaw)
    do {
        var unlock: Int32 = 0
        try master.ioctl(setLock, &unlock)
        var number: UInt32 = 0
        try master.ioctl(getNumber, &number)
        let slave = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard slave >= 0 else { throw Errno.current }
        return (master, FileDescriptor(rawValue: slave))
    } catch {
        master.close()
        throw error
    }
}

/// A descriptor number that is certainly closed: a high number (the kernel hands out the lowest
/// free one, so nothing else in the process takes it meanwhile), duplicated onto and closed.
func closedDescriptor() throws -> FileDescriptor {
    let (read, write) = try makePipe()
    defer { read.close(); write.close() }
    let high: Int32 = 900
    guard dup2(read.rawValue, high) == high else { throw Errno.current }
    let fd = FileDescriptor(rawValue: high)
    fd.close()
    return fd
}

/// Whether `fd` is an open descriptor of this process.
func isOpen(_ fd: FileDescriptor) -> Bool { fcntl(fd.rawValue, F_GETFD) != -1 }

/// Reads until `count` bytes came or end of file.
func readExactly(_ fd: FileDescriptor, _ count: Int) throws(Errno) -> [UInt8] {
    let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 1)
    defer { chunk.deallocate() }
    var result: [UInt8] = []
    while result.count < count {
        let n = try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: chunk[0..<min(chunk.count, count - result.count)]))
        if n == 0 { break }
        result += chunk[0..<n]
    }
    return result
}

/// The calling thread's kernel id (gettid(2), which Glibc's module does not export), from /proc/thread-self.
func currentThreadID() -> Int32? {
    guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"),
          let last = link.split(separator: "/").last else { return nil }
    return Int32(last)
}

/// The calling thread's name as the kernel keeps it (/proc/thread-self/comm).
func currentThreadName() -> String? {
    (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)).map { String($0.dropLast()) }
}
