import Foundation
import Testing
@testable import LinuxIO

/// LinuxIO's private file at its edges (issue 15), on both of its paths (an unnamed O_TMPFILE
/// file, and the 0600 O_EXCL temporary used where a file system has none): a racer creating the
/// name before commit, replacing only regular files, the check creating nothing, a full disk and
/// a read-only file system. (Moved here from TransportsTests once LinuxIO had tests of its own.)
@Suite struct PrivateFileEdgeTests {
    struct Scratch {
        let directory: String
        init() throws {
            directory = "/dev/shm/hwprobe-private-\(getpid())-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        func path(_ name: String) -> String { directory + "/" + name }
        var entries: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted() }
        func remove() { try? FileManager.default.removeItem(atPath: directory) }
        func inode(_ name: String) -> UInt64? {
            var info = stat()
            return lstat(path(name), &info) == 0 ? UInt64(info.st_ino) : nil
        }
        func text(_ name: String) -> String? { try? String(contentsOfFile: path(name), encoding: .utf8) }
        func mode(_ name: String) -> mode_t? {
            var info = stat()
            return lstat(path(name), &info) == 0 ? info.st_mode & 0o7777 : nil
        }
    }

    static let bothPaths = [true, false]

    @Test(arguments: bothPaths)
    func aCommittedFileAppearsWholeWithMode0600(unnamed: Bool) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let old = umask(0)
        defer { umask(old) }
        let file = try PrivateFile(creating: scratch.path("v.json"), existing: .refuse, publication: .whenCommitted, unnamedFiles: unnamed)
        try file.write(Array("{\"a\":".utf8))
        #expect(scratch.entries.filter { $0 == "v.json" }.isEmpty, "nothing at the path before commit")
        try file.write(Array("1}".utf8))
        try file.commit()
        #expect(scratch.entries == ["v.json"])
        #expect(scratch.text("v.json") == "{\"a\":1}")
        #expect(scratch.mode("v.json") == 0o600)
    }

    @Test(arguments: bothPaths)
    func anAbandonedFileLeavesNothing(unnamed: Bool) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let file = try PrivateFile(creating: scratch.path("v.json"), existing: .refuse, publication: .whenCommitted, unnamedFiles: unnamed)
        try file.write(Array("secret".utf8))
        file.abandon()
        #expect(scratch.entries.isEmpty, "the named temporary went at once: \(scratch.entries)")
        #expect(throws: PrivateFileError.abandoned(path: scratch.path("v.json"))) { try file.commit() }
        #expect(scratch.entries.isEmpty)
    }

    @Test(arguments: bothPaths)
    func anEntryThatAppearsBeforeCommitIsNeverReplacedWithoutForce(unnamed: Bool) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let file = try PrivateFile(creating: scratch.path("v.json"), existing: .refuse, publication: .whenCommitted, unnamedFiles: unnamed)
        try file.write(Array("new".utf8))
        try Data("theirs".utf8).write(to: URL(fileURLWithPath: scratch.path("v.json")))
        #expect(throws: PrivateFileError.exists(path: scratch.path("v.json"))) { try file.commit() }
        #expect(scratch.text("v.json") == "theirs")
        #expect(scratch.entries == ["v.json"], "no temporary left: \(scratch.entries)")
    }

    @Test(arguments: bothPaths)
    func forceReplacesARegularFileAtomically(unnamed: Bool) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try Data("old vault".utf8).write(to: URL(fileURLWithPath: scratch.path("v.json")))
        let before = scratch.inode("v.json")
        let file = try PrivateFile(creating: scratch.path("v.json"), existing: .replaceRegularFile, publication: .whenCommitted,
                                   unnamedFiles: unnamed)
        try file.write(Array("new vault".utf8))
        #expect(scratch.text("v.json") == "old vault", "replaced only on success")
        try file.commit()
        #expect(scratch.text("v.json") == "new vault")
        #expect(scratch.inode("v.json") != before)
        #expect(scratch.mode("v.json") == 0o600)
        #expect(scratch.entries == ["v.json"])
    }

    /// What stands at the path when the file is published decides, not what stood there when it
    /// was checked: a FIFO, a symlink or a directory swapped in meanwhile stays where it is.
    @Test(arguments: bothPaths)
    func forceNeverReplacesWhatIsNotARegularFile(unnamed: Bool) throws {
        for (kind, make): (PrivateFile.Kind, (String) -> Int32) in [
            (.fifo, { mkfifo($0, 0o600) }), (.symbolicLink, { symlink("/etc/passwd", $0) }), (.directory, { mkdir($0, 0o700) }),
        ] {
            let scratch = try Scratch()
            defer { scratch.remove() }
            try Data("old".utf8).write(to: URL(fileURLWithPath: scratch.path("v.json")))
            let file = try PrivateFile(creating: scratch.path("v.json"), existing: .replaceRegularFile, publication: .whenCommitted,
                                       unnamedFiles: unnamed)
            try file.write(Array("new".utf8))
            #expect(unlink(scratch.path("v.json")) == 0)
            #expect(make(scratch.path("v.json")) == 0)
            let placed = scratch.inode("v.json")
            #expect(throws: PrivateFileError.notARegularFile(path: scratch.path("v.json"), kind: kind)) { try file.commit() }
            #expect(scratch.inode("v.json") == placed, "\(kind) put back where it was")
            #expect(scratch.entries == ["v.json"], "nothing else left: \(scratch.entries)")
        }
    }

    @Test func publishedAtOnceIsThereFromTheStart() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let file = try PrivateFile(creating: scratch.path("c.btsnoop"), existing: .refuse, publication: .atOnce)
        #expect(file.isPublished)
        try file.write(Array("btsnoop".utf8))
        #expect(scratch.text("c.btsnoop") == "btsnoop")
        file.close()
        #expect(scratch.mode("c.btsnoop") == 0o600)
        #expect(throws: PrivateFileError.exists(path: scratch.path("c.btsnoop"))) {
            _ = try PrivateFile(creating: scratch.path("c.btsnoop"), existing: .refuse, publication: .atOnce)
        }
    }

    @Test func theCheckCreatesNothingAndNamesWhatIsWrong() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try PrivateFile.check(scratch.path("new"), existing: .refuse)
        #expect(scratch.entries.isEmpty)
        #expect(mkfifo(scratch.path("fifo"), 0o600) == 0)
        #expect(throws: PrivateFileError.notARegularFile(path: scratch.path("fifo"), kind: .fifo)) {
            try PrivateFile.check(scratch.path("fifo"), existing: .replaceRegularFile)
        }
        #expect(throws: PrivateFileError.missingDirectory(path: scratch.path("no/v"), directory: scratch.path("no"))) {
            try PrivateFile.check(scratch.path("no/v"), existing: .refuse)
        }
        #expect(throws: PrivateFileError.emptyPath) { try PrivateFile.check("", existing: .refuse) }
        #expect(throws: PrivateFileError.self) { try PrivateFile.check("/proc/x", existing: .refuse) }
        #expect(PrivateFile.directoryPath(of: "v.json") == ".")
        #expect(PrivateFile.directoryPath(of: "/v.json") == "/")
        #expect(PrivateFile.directoryPath(of: "a/b/v.json") == "a/b")
    }

    /// A small tmpfs, filled: the write fails as "no space", and the space and the name are
    /// given back (as root, which may mount; skipped otherwise).
    @Test(arguments: bothPaths)
    func aFullDiskIsNoSpaceAndLeavesNothing(unnamed: Bool) throws {
        guard getuid() == 0 else { return }
        let scratch = try Scratch()
        defer {
            _ = Self.run("/bin/umount", [scratch.directory])
            scratch.remove()
        }
        guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", scratch.directory]) == 0 else { return }
        let file = try PrivateFile(creating: scratch.path("v.json"), existing: .refuse, publication: .whenCommitted, unnamedFiles: unnamed)
        let big = [UInt8](repeating: 0x41, count: 256 * 1024)
        #expect(throws: PrivateFileError.noSpace(path: scratch.path("v.json"), directory: scratch.directory)) {
            try file.write(big)
            try file.commit()
        }
        file.close()
        #expect(scratch.entries.isEmpty, "\(scratch.entries)")
        var usage = statvfs()
        #expect(statvfs(scratch.directory, &usage) == 0)
        #expect(usage.f_bfree == usage.f_blocks, "the space was given back")
    }

    @Test func aReadOnlyFileSystemIsSaidSo() throws {
        guard getuid() == 0 else { return }
        let scratch = try Scratch()
        defer {
            _ = Self.run("/bin/umount", [scratch.directory])
            scratch.remove()
        }
        guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k,ro", "tmpfs", scratch.directory]) == 0 else { return }
        #expect(throws: PrivateFileError.readOnly(path: scratch.path("v.json"), directory: scratch.directory)) {
            try PrivateFile.check(scratch.path("v.json"), existing: .refuse)
        }
    }

    static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
