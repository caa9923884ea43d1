import Dispatch
import Glibc
import Synchronization
import Testing
@testable import LinuxIO

/// FileDescriptor over real pipes, sockets and files: bytes written arrive whole and in order,
/// end of file reads as 0, a closed or missing descriptor is the right Errno, poll reports what
/// the kernel says, and bytesLeftInFile knows a regular file from a pipe.
@Suite struct FileDescriptorTests {
    @Test func whatIsWrittenIsReadBack() throws {
        let (read, write) = try makePipe()
        defer { read.close(); write.close() }
        let sent: [UInt8] = [0x00, 0x01, 0xFE, 0xFF, 0x0A, 0x0D] + Array("hello".utf8)
        try write.writeAll(sent)
        #expect(try readExactly(read, sent.count) == sent)
    }

    @Test func writingNothingWritesNothing() throws {
        let (read, write) = try makePipe()
        defer { read.close(); write.close() }
        try write.writeAll([])
        #expect(try read.poll(for: .readable, timeoutMilliseconds: 0).isEmpty)
    }

    @Test func endOfFileReadsAsZero() throws {
        let (read, write) = try makePipe()
        defer { read.close() }
        try write.writeAll([1, 2, 3])
        write.close()
        var buffer = [UInt8](repeating: 0, count: 16)
        let first = try buffer.withUnsafeMutableBytes { try read.read(into: $0) }
        #expect(first == 3 && Array(buffer[0..<3]) == [1, 2, 3])
        let second = try buffer.withUnsafeMutableBytes { try read.read(into: $0) }
        #expect(second == 0, "the write end is closed and the pipe empty: end of file")
    }

    /// 1 MiB is far more than a socket buffer holds, so writeAll must block and carry on (or
    /// resume after short writes) while a reader on another thread drains the other end.
    @Test func aMebibyteThroughASocketArrivesWholeAndInOrder() throws {
        let (reader, writer) = try makeSocketPair()
        defer { reader.close() }
        let count = 1 << 20
        let sent = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
        let received = Mutex<Result<[UInt8], Errno>?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            // Reads to end of file, so a byte too many would show as well as one too few.
            let result = Result { () throws(Errno) -> [UInt8] in try readExactly(reader, count + 1) }
            received.withLock { $0 = result }
            done.signal()
        }
        try writer.writeAll(sent)
        writer.close()
        done.wait()
        let got = try #require(received.withLock { $0 }).get()
        #expect(got.count == count)
        #expect(got == sent, "every byte, in order")
    }

    @Test func aClosedDescriptorIsBadFileNumber() throws {
        let fd = try closedDescriptor()
        var buffer = [UInt8](repeating: 0, count: 4)
        #expect(throws: Errno(EBADF)) { _ = try buffer.withUnsafeMutableBytes { try fd.read(into: $0) } }
        #expect(throws: Errno(EBADF)) { try fd.writeAll([1]) }
        var size = winsize()
        #expect(throws: Errno(EBADF)) { try fd.ioctl(UInt(TIOCGWINSZ), &size) }
        #expect(fd.bytesLeftInFile() == nil)
        // poll(2) does not fail for a closed descriptor: it reports POLLNVAL.
        #expect(try fd.poll(for: .readable, timeoutMilliseconds: 0) == .invalid)
    }

    @Test func openingAMissingPathIsNoEntry() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        #expect(throws: Errno.noEntry) { _ = try FileDescriptor.open(directory.path("absent"), .readOnly) }
        #expect(throws: Errno.noEntry) { try FileDescriptor.withOpened(directory.path("absent"), .readWrite) { _ in } }
    }

    @Test func openGivesTheAccessAskedFor() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("file", [9, 8, 7])
        let readOnly = try FileDescriptor.open(directory.path("file"), .readOnly)
        defer { readOnly.close() }
        #expect(throws: Errno(EBADF), "a read-only descriptor refuses writes") { try readOnly.writeAll([1]) }
        #expect(try readExactly(readOnly, 3) == [9, 8, 7])
        let writeOnly = try FileDescriptor.open(directory.path("file"), .writeOnly, nonBlocking: true)
        defer { writeOnly.close() }
        #expect(fcntl(writeOnly.rawValue, F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(writeOnly.rawValue, F_GETFL) & O_ACCMODE == O_WRONLY)
        try writeOnly.writeAll([1, 2])
        #expect(directory.contents("file") == [1, 2, 7])
    }

    @Test func withOpenedClosesTheDescriptorAfterwards() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("file", Array("abc".utf8))
        let (fd, bytes) = try FileDescriptor.withOpened(directory.path("file"), .readOnly) { fd throws(Errno) in
            (fd, try readExactly(fd, 3))
        }
        #expect(bytes == Array("abc".utf8))
        #expect(!isOpen(fd))
        // And when the body throws.
        let thrown = Mutex<FileDescriptor?>(nil)
        #expect(throws: Errno.busy) {
            try FileDescriptor.withOpened(directory.path("file"), .readOnly) { fd throws(Errno) in
                thrown.withLock { $0 = fd }
                throw Errno.busy
            }
        }
        #expect(try !isOpen(#require(thrown.withLock { $0 })))
    }

    @Test func pollSaysWhatIsWaiting() throws {
        let (read, write) = try makePipe()
        defer { read.close() }
        #expect(try read.poll(for: .readable, timeoutMilliseconds: 0).isEmpty, "nothing written yet: timeout, empty set")
        #expect(try write.poll(for: .writable, timeoutMilliseconds: 0) == .writable)
        try write.writeAll([42])
        #expect(try read.poll(for: .readable, timeoutMilliseconds: 0) == .readable)
        #expect(try read.poll(for: .readable, timeoutMilliseconds: -1) == .readable, "no wait when data is there")
        _ = try readExactly(read, 1)
        write.close()
        let afterClose = try read.poll(for: .readable, timeoutMilliseconds: 0)
        #expect(afterClose.contains(.hangUp), "the write end closed: \(afterClose.rawValue)")
        #expect(!afterClose.contains(.readable), "and nothing left to read")
    }

    @Test func bytesLeftInFileCountsFromTheReadPosition() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("file", [UInt8](repeating: 0x55, count: 100))
        try FileDescriptor.withOpened(directory.path("file"), .readOnly) { fd throws(Errno) in
            #expect(fd.bytesLeftInFile() == 100)
            #expect(try readExactly(fd, 30).count == 30)
            #expect(fd.bytesLeftInFile() == 70)
            _ = lseek(fd.rawValue, 500, SEEK_SET)
            #expect(fd.bytesLeftInFile() == 0, "past the end is none left, not a negative count")
        }
        try directory.write("empty", [])
        #expect(try FileDescriptor.withOpened(directory.path("empty"), .readOnly) { $0.bytesLeftInFile() } == 0)
        let (read, write) = try makePipe()
        defer { read.close(); write.close() }
        try write.writeAll([1, 2, 3])
        #expect(read.bytesLeftInFile() == nil, "a pipe has no size")
        #expect(try FileDescriptor.withOpened(directory.path, .readOnly) { $0.bytesLeftInFile() } == nil, "nor a directory")
    }
}
