import Foundation
import Glibc
import TestKit
import Testing
@testable import LinuxIO

/// PrivateFile in a real temporary directory, both with an unnamed O_TMPFILE file and with the
/// named 0600 fallback: a committed file is at its path with exactly the bytes written and mode
/// 0600; abandoning, or closing without a commit, leaves no file and no stray temporary; what is
/// already at the path is refused (or replaced) as `existing` says.
@Suite struct PrivateFileTests {
    @Test(arguments: [true, false])
    func aCommittedFileHasTheBytesAndMode0600(unnamedFiles: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("secret.json")
        let file = try PrivateFile(creating: path, existing: .refuse, publication: .whenCommitted, unnamedFiles: unnamedFiles)
        try file.write(Array("{\"a\":".utf8))
        try file.write(Array("1}".utf8))
        try file.write([])
        #expect(!FileManager.default.fileExists(atPath: path), "not there before commit")
        #expect(!file.isPublished)
        try file.commit()
        #expect(file.isPublished)
        #expect(directory.contents("secret.json") == Array("{\"a\":1}".utf8))
        #expect(directory.mode("secret.json") == 0o600)
        #expect(directory.entries() == ["secret.json"], "no temporary left beside it")
    }

    @Test(arguments: [true, false])
    func anAbandonedFileLeavesNothing(unnamedFiles: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try PrivateFile(creating: directory.path("capture"), existing: .refuse, publication: .whenCommitted,
                                   unnamedFiles: unnamedFiles)
        try file.write([1, 2, 3])
        if unnamedFiles {
            #expect(directory.entries().isEmpty, "an unnamed file has no name to leave behind")
        } else {
            let entries = directory.entries()
            #expect(entries.count == 1 && entries.allSatisfy { $0.hasPrefix(".capture.") && $0.hasSuffix(".hwprobe-tmp") }, "\(entries)")
            #expect(try directory.mode(#require(entries.first)) == 0o600, "even the temporary is private")
        }
        file.abandon()
        file.abandon()
        #expect(directory.entries().isEmpty)
        #expect(throws: PrivateFileError.abandoned(path: directory.path("capture"))) { try file.commit() }
        #expect(directory.entries().isEmpty, "a commit after abandon publishes nothing")
        #expect(!file.isPublished)
    }

    @Test(arguments: [true, false])
    func closingWithoutCommitLeavesNothing(unnamedFiles: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try PrivateFile(creating: directory.path("out"), existing: .refuse, publication: .whenCommitted,
                                   unnamedFiles: unnamedFiles)
        try file.write([7])
        file.close()
        file.close()
        #expect(directory.entries().isEmpty)
        #expect(throws: PrivateFileError.self) { try file.commit() }
        #expect(directory.entries().isEmpty)
    }

    @Test(arguments: [true, false])
    func refuseNeverTouchesAnExistingFile(unnamedFiles: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("report")
        try directory.write("report", [0xAA])
        #expect(throws: PrivateFileError.exists(path: path)) { try PrivateFile.check(path, existing: .refuse) }
        #expect(throws: PrivateFileError.exists(path: path)) {
            _ = try PrivateFile(creating: path, existing: .refuse, publication: .whenCommitted, unnamedFiles: unnamedFiles)
        }
        // One that appears after the file was opened is refused at commit, and ours is discarded.
        try FileManager.default.removeItem(atPath: path)
        let file = try PrivateFile(creating: path, existing: .refuse, publication: .whenCommitted, unnamedFiles: unnamedFiles)
        try file.write([0xBB])
        try directory.write("report", [0xCC])
        #expect(throws: PrivateFileError.exists(path: path)) { try file.commit() }
        file.close()
        #expect(directory.contents("report") == [0xCC])
        #expect(directory.entries() == ["report"])
    }

    @Test(arguments: [true, false])
    func replaceRegularFileReplacesIt(unnamedFiles: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("vault")
        try directory.write("vault", Array("old content, longer".utf8))
        chmod(path, 0o644)
        try PrivateFile.check(path, existing: .replaceRegularFile)
        let file = try PrivateFile(creating: path, existing: .replaceRegularFile, publication: .whenCommitted, unnamedFiles: unnamedFiles)
        try file.write(Array("new".utf8))
        #expect(directory.contents("vault") == Array("old content, longer".utf8), "the old one stays until commit")
        try file.commit()
        #expect(directory.contents("vault") == Array("new".utf8))
        #expect(directory.mode("vault") == 0o600)
        #expect(directory.entries() == ["vault"])
    }

    @Test func whatIsNotARegularFileIsRefusedWhateverTheFlags() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.makeDirectory("folder")
        try directory.write("target", [1])
        try directory.symlink("link", to: directory.path("target"))
        #expect(mkfifo(directory.path("fifo"), 0o600) == 0)
        let cases: [(String, PrivateFile.Kind)] = [("folder", .directory), ("link", .symbolicLink), ("fifo", .fifo)]
        for (name, kind) in cases {
            for existing in [PrivateFile.Existing.refuse, .replaceRegularFile] {
                let expected = PrivateFileError.notARegularFile(path: directory.path(name), kind: kind)
                #expect(throws: expected) { try PrivateFile.check(directory.path(name), existing: existing) }
                #expect(throws: expected) { _ = try PrivateFile(creating: directory.path(name), existing: existing, publication: .whenCommitted) }
            }
        }
        #expect(directory.contents("target") == [1], "nothing written through the link")
        #expect(throws: PrivateFileError.notARegularFile(path: "/dev/null", kind: .characterDevice)) {
            try PrivateFile.check("/dev/null", existing: .replaceRegularFile)
        }
    }

    @Test func pathsThatCannotBeAFileAreNamed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("plain", [])
        #expect(throws: PrivateFileError.emptyPath) { try PrivateFile.check("", existing: .refuse) }
        #expect(throws: PrivateFileError.missingDirectory(path: directory.path("nowhere/x"), directory: directory.path("nowhere"))) {
            try PrivateFile.check(directory.path("nowhere/x"), existing: .refuse)
        }
        #expect(throws: PrivateFileError.notADirectory(path: directory.path("plain/x"), directory: directory.path("plain"))) {
            _ = try PrivateFile(creating: directory.path("plain/x"), existing: .refuse, publication: .whenCommitted)
        }
        #expect(throws: PrivateFileError.notARegularFile(path: directory.path(".."), kind: .directory)) {
            try PrivateFile.check(directory.path(".."), existing: .replaceRegularFile)
        }
        try PrivateFile.check(directory.path("fresh"), existing: .refuse)
        #expect(directory.entries() == ["plain"], "checking creates nothing")
    }

    /// Issue 27, item 18: a kill between naming the temporary and moving it into place leaves
    /// `.NAME.PID.N.hwprobe-tmp` holding the whole new content; the next write of NAME removes
    /// it when its process is gone, and leaves alone what a live process or someone else owns.
    @Test func aKilledRunsTemporaryIsRemovedByTheNextWrite() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let gone = ".vault.json.2147483646.77.hwprobe-tmp"  // beyond pid_max: no such process
        let alive = ".vault.json.\(getppid()).78.hwprobe-tmp"
        let shared = ".vault.json.2147483645.79.hwprobe-tmp"  // readable by others: not what we write
        let other = ".notes.json.2147483646.80.hwprobe-tmp"
        for (name, mode) in [(gone, 0o600), (alive, 0o600), (shared, 0o644), (other, 0o600)] {
            #expect(FileManager.default.createFile(atPath: directory.path(name), contents: Data("plaintext".utf8),
                                                   attributes: [.posixPermissions: mode]))
        }
        let file = try PrivateFile(creating: directory.path("vault.json"), existing: .replaceRegularFile, publication: .whenCommitted)
        try file.write(Array("new".utf8))
        try file.commit()
        #expect(directory.entries().sorted() == [alive, shared, other, "vault.json"].sorted())
        #expect(PrivateFile.temporaryOwner(gone, for: "vault.json") == 2147483646)
        #expect(PrivateFile.temporaryOwner(".vault.json.12.x.hwprobe-tmp", for: "vault.json") == nil)
        #expect(PrivateFile.temporaryOwner(".vault.json.hwprobe-tmp", for: "vault.json") == nil)
    }

    @Test func directoryPathOfAPath() {
        #expect(PrivateFile.directoryPath(of: "name") == ".")
        #expect(PrivateFile.directoryPath(of: "/name") == "/")
        #expect(PrivateFile.directoryPath(of: "a/b/name") == "a/b")
    }

    @Test(arguments: [true, false])
    func publishedAtOnceIsThereFromTheStart(unnamedFiles: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try PrivateFile(creating: directory.path("snoop.log"), existing: .refuse, publication: .atOnce, unnamedFiles: unnamedFiles)
        #expect(file.isPublished)
        #expect(directory.entries() == ["snoop.log"])
        #expect(directory.mode("snoop.log") == 0o600)
        try file.write([1, 2])
        file.abandon()
        #expect(directory.entries() == ["snoop.log"], "abandon does nothing once published")
        try file.write([3])
        file.close()
        #expect(directory.contents("snoop.log") == [1, 2, 3])
    }
}

/// StreamingPrivateFile: bytes appended in any chunking are committed whole and in order; at most
/// `bufferBytes` are held before they go to the (unnamed) file; `limit` refuses the append that
/// would pass it and keeps what came before; abandon and close without commit leave nothing.
@Suite struct StreamingPrivateFileTests {
    /// The size of the unnamed O_TMPFILE file in `directory` that this process holds open, found
    /// through /proc/self/fd (it shows as `directory/#inode (deleted)`).
    static func unnamedFileSize(in directory: TemporaryDirectory) throws -> Int {
        var sizes: [Int] = []
        for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + entry),
                  target.hasPrefix(directory.path + "/#") else { continue }
            var info = stat()
            guard stat("/proc/self/fd/" + entry, &info) == 0 else { continue }
            sizes.append(Int(info.st_size))
        }
        return try #require(sizes.count == 1 ? sizes.first : nil, "one unnamed file open in \(directory.path): \(sizes)")
    }

    @Test func chunksAreCommittedWholeAndInOrder() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try StreamingPrivateFile(creating: directory.path("frames"), bufferBytes: 4096)
        var expected: [UInt8] = []
        var generator = SplitMix64(seed: 7)
        // Small chunks that fill the buffer, and chunks larger than it that bypass it.
        for size in [1, 100, 4000, 5000, 3, 4096, 9000, 0, 17] {
            let chunk = (0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            try file.append(chunk)
            expected += chunk
            #expect(file.count == expected.count)
        }
        #expect(directory.entries().isEmpty, "nothing named before commit")
        try file.commit()
        #expect(directory.contents("frames") == expected)
        #expect(directory.mode("frames") == 0o600)
        #expect(directory.entries() == ["frames"])
    }

    @Test func atMostTheBufferIsHeldBeforeItGoesToTheFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try StreamingPrivateFile(creating: directory.path("cassette"), bufferBytes: 4096)
        defer { file.close() }
        try file.append([UInt8](repeating: 1, count: 4000))
        #expect(try Self.unnamedFileSize(in: directory) == 0, "4000 bytes fit the 4096-byte buffer")
        try file.append([UInt8](repeating: 2, count: 96))
        #expect(try Self.unnamedFileSize(in: directory) == 0, "exactly full is still held")
        try file.append([3])
        #expect(try Self.unnamedFileSize(in: directory) == 4096, "one more flushes the buffer first")
        try file.append([UInt8](repeating: 4, count: 5000))
        #expect(try Self.unnamedFileSize(in: directory) == 4096 + 1 + 5000, "a chunk larger than the buffer goes straight through")
    }

    @Test func aBufferSmallerThanAPageIsRaisedToOne() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try StreamingPrivateFile(creating: directory.path("small"), bufferBytes: 10)
        defer { file.close() }
        try file.append([UInt8](repeating: 1, count: 4096))
        #expect(try Self.unnamedFileSize(in: directory) == 0, "bufferBytes is at least 4096")
    }

    @Test func theLimitRefusesTheAppendThatWouldPassIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try StreamingPrivateFile(creating: directory.path("capped"), bufferBytes: 4096, limit: 10)
        #expect(file.limit == 10)
        try file.append([1, 2, 3, 4, 5, 6])
        #expect(throws: StreamingPrivateFileError.full(limit: 10)) { try file.append([7, 8, 9, 10, 11]) }
        #expect(file.count == 6, "the refused chunk is not kept, not even in part")
        try file.append([7, 8, 9, 10])
        #expect(throws: StreamingPrivateFileError.full(limit: 10)) { try file.append([11]) }
        try file.append([])
        try file.commit()
        #expect(directory.contents("capped") == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "still good up to the limit")
    }

    @Test func abandonAndCloseWithoutCommitLeaveNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let abandoned = try StreamingPrivateFile(creating: directory.path("a"), bufferBytes: 4096)
        try abandoned.append([UInt8](repeating: 9, count: 10_000))
        abandoned.abandon()
        #expect(throws: PrivateFileError.abandoned(path: directory.path("a"))) { try abandoned.commit() }
        abandoned.close()
        let closed = try StreamingPrivateFile(creating: directory.path("b"))
        try closed.append([1, 2, 3])
        closed.close()
        #expect(throws: PrivateFileError.self) { try closed.commit() }
        #expect(directory.entries().isEmpty)
    }

    @Test func anExistingPathIsRefusedUnlessReplacingWasAsked() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("there", [5])
        #expect(throws: PrivateFileError.exists(path: directory.path("there"))) {
            _ = try StreamingPrivateFile(creating: directory.path("there"))
        }
        let file = try StreamingPrivateFile(creating: directory.path("there"), existing: .replaceRegularFile)
        try file.append([6, 7])
        try file.commit()
        #expect(directory.contents("there") == [6, 7])
    }
}
