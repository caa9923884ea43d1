import Foundation
import Testing
@testable import Transports

@Suite struct BTSnoopTests {
    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("hwprobe-\(UUID().uuidString).btsnoop").path
    }

    static let reset: [UInt8] = [0x01, 0x03, 0x0C, 0x00]
    static let resetComplete: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
    static let aclOut: [UInt8] = [0x02, 0x40, 0x00, 0x05, 0x00, 0x01, 0x00, 0x04, 0x00, 0x0A]
    static let aclIn: [UInt8] = [0x02, 0x40, 0x20, 0x03, 0x00, 0x0B, 0x01, 0x02]

    @Test func recordsReadBackWithFlagsLengthsTimestampsAndPayloads() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try BTSnoopWriter(path: path)
        let start = Date(timeIntervalSince1970: 1_700_000_000.123456)
        writer.record(Self.reset, sentByHost: true, at: start)
        writer.record(Self.resetComplete, sentByHost: false, at: start.addingTimeInterval(0.001))
        writer.record(Self.aclOut, sentByHost: true, at: start.addingTimeInterval(1))
        writer.record(Self.aclIn, sentByHost: false, at: start.addingTimeInterval(2.5))
        writer.close()
        writer.record(Self.reset, sentByHost: true) // ignored after close
        #expect(writer.failure == nil)

        let bytes = try #require(FileManager.default.contents(atPath: path))
        #expect(Array(bytes.prefix(16)) == Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x03, 0xEA])

        let capture = try BTSnoopReader.read(path: path)
        #expect(capture.version == 1 && capture.datalink == 1002)
        #expect(capture.records.map(\.packet) == [Self.reset, Self.resetComplete, Self.aclOut, Self.aclIn])
        #expect(capture.records.map(\.flags) == [0b10, 0b11, 0b00, 0b01])
        #expect(capture.records.map(\.sentByHost) == [true, false, true, false])
        #expect(capture.records.map(\.isCommandOrEvent) == [true, true, false, false])
        #expect(capture.records.map(\.originalLength) == [4, 7, 10, 8])
        #expect(capture.records.map(\.includedLength) == [4, 7, 10, 8])
        #expect(capture.records.allSatisfy { $0.cumulativeDrops == 0 })
        let unixMicroseconds: Int64 = 1_700_000_000_123_456
        #expect(capture.records.map(\.timestamp) == [0, 1_000, 1_000_000, 2_500_000].map { unixMicroseconds + $0 + 0x00DC_DDB3_0F2F_8000 })
        #expect(abs(capture.records[3].date.timeIntervalSince(start.addingTimeInterval(2.5))) < 1e-5)
        #expect(bytes.count == 16 + 4 * 24 + 4 + 7 + 10 + 8)
    }

    @Test func theUnixEpochIsTheBTSnoopOffset() {
        #expect(BTSnoopFormat.timestamp(Date(timeIntervalSince1970: 0)) == 0x00DC_DDB3_0F2F_8000)
    }

    @Test func eachRecordIsOnDiskBeforeCloseSoACrashLeavesAReadableFile() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try BTSnoopWriter(path: path)
        defer { writer.close() }
        writer.record(Self.reset, sentByHost: true)
        writer.record(Self.resetComplete, sentByHost: false)
        #expect(try BTSnoopReader.read(path: path).records.count == 2)
    }

    @Test func aFileThatCannotBeCreatedFailsAtOnce() {
        let path = "/nonexistent-dir-\(UUID().uuidString)/capture.btsnoop"
        #expect {
            _ = try BTSnoopWriter(path: path)
        } throws: { error in
            guard case .cannotCreate(let failed, let reason) = error as? BTSnoopError else { return false }
            return failed == path && reason == "No such file or directory"
                && "\(error)".hasPrefix("cannot create btsnoop file \(path)")
        }
    }

    /// A capture may carry personal data (addresses, names, weights): it is written like the
    /// plaintext of a backup (issue 15). An existing file is never truncated, a symbolic link is
    /// never followed, and the new file is 0600 whatever the umask.
    @Test func anExistingFileIsNeverTruncated() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data("an earlier capture".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: BTSnoopError.self) { _ = try BTSnoopWriter(path: path) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "an earlier capture")
    }

    @Test func aSymbolicLinkIsNeverFollowed() throws {
        let victim = Self.temporaryPath()
        let link = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: victim); try? FileManager.default.removeItem(atPath: link) }
        try Data("someone else's file".utf8).write(to: URL(fileURLWithPath: victim))
        #expect(symlink(victim, link) == 0)
        #expect(throws: BTSnoopError.self) { _ = try BTSnoopWriter(path: link) }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "someone else's file")
        // Dangling: nothing may be created where it points either.
        let nowhere = Self.temporaryPath()
        let dangling = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: dangling) }
        #expect(symlink(nowhere, dangling) == 0)
        #expect(throws: BTSnoopError.self) { _ = try BTSnoopWriter(path: dangling) }
        #expect(!FileManager.default.fileExists(atPath: nowhere))
    }

    @Test func theCaptureIsPrivate() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let old = umask(0)
        defer { umask(old) }
        let writer = try BTSnoopWriter(path: path)
        writer.record(Self.reset, sentByHost: true)
        writer.close()
        var info = stat()
        #expect(lstat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(try BTSnoopReader.read(path: path).records.count == 1)
    }

    @Test func damagedFilesAreRejectedWithClearErrors() throws {
        var good = BTSnoopFormat.magic
        good.snoopAppend(UInt32(1))
        good.snoopAppend(UInt32(1002))
        var record: [UInt8] = []
        record.snoopAppend(UInt32(4))
        record.snoopAppend(UInt32(4))
        record.snoopAppend(UInt32(2))
        record.snoopAppend(UInt32(0))
        record.snoopAppend(BTSnoopFormat.timestamp(Date()))
        record += Self.reset
        #expect(try BTSnoopReader.parse(good + record).records.count == 1)

        #expect(throws: BTSnoopError.notBTSnoop("10 bytes is shorter than the 16-byte header")) {
            try BTSnoopReader.parse(Array(good.prefix(10)))
        }
        #expect(throws: BTSnoopError.notBTSnoop("it does not start with \"btsnoop\\0\"")) {
            try BTSnoopReader.parse(Array("pcapfile".utf8) + good.dropFirst(8))
        }
        var version2 = good
        version2[11] = 2
        #expect(throws: BTSnoopError.unsupportedVersion(2)) { try BTSnoopReader.parse(version2) }
        #expect(throws: BTSnoopError.truncatedRecord(index: 1, offset: 16 + 28)) {
            try BTSnoopReader.parse(good + record + record.dropLast(1))
        }
        #expect(throws: BTSnoopError.truncatedRecord(index: 0, offset: 16)) {
            try BTSnoopReader.parse(good + record.prefix(20))
        }
        var tooLong = record
        tooLong[7] = 5 // included 5 > original 4
        #expect(throws: BTSnoopError.inconsistentLengths(index: 0, original: 4, included: 5)) {
            try BTSnoopReader.parse(good + tooLong + [0])
        }
        #expect(throws: BTSnoopError.self) { try BTSnoopReader.read(path: "/nonexistent-\(UUID().uuidString)") }
    }

    /// A file is sized before it is read: a huge one is refused without loading it (the old
    /// reader read this sparse 300 MiB file whole, 57 s here, then called it a truncated record),
    /// and a FIFO or a device is refused for what it is (the old one said "unreadable").
    @Test func aCaptureFileIsSizedBeforeItIsRead() throws {
        let huge = Self.temporaryPath()
        defer { unlink(huge) }
        let fd = open(huge, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        try #require(fd >= 0)
        var header = BTSnoopFormat.magic
        header.snoopAppend(UInt32(1))
        header.snoopAppend(UInt32(1002))
        _ = header.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        try #require(ftruncate(fd, off_t(300 << 20)) == 0)
        close(fd)
        #expect(throws: BTSnoopError.cannotRead(path: huge, reason: "\(300 << 20) bytes is more than the 256 MiB a capture may have")) {
            try BTSnoopReader.read(path: huge)
        }

        let fifo = Self.temporaryPath()
        defer { unlink(fifo) }
        try #require(mkfifo(fifo, 0o600) == 0)
        for path in [fifo, "/dev/zero"] {
            #expect(throws: BTSnoopError.cannotRead(path: path, reason: "not a regular file: give the path of a btsnoop capture")) {
                try BTSnoopReader.read(path: path)
            }
        }
    }

    /// Wireshark's own reader is the real judge of the format; it is optional on this machine.
    @Test func tsharkReadsTheFileIfInstalled() throws {
        let which = Process()
        which.executableURL = URL(fileURLWithPath: "/bin/sh")
        which.arguments = ["-c", "command -v tshark"]
        let found = Pipe()
        which.standardOutput = found
        try which.run()
        which.waitUntilExit()
        let tshark = String(decoding: found.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard which.terminationStatus == 0, !tshark.isEmpty else {
            print("note: tshark is not installed; skipped checking that Wireshark reads the btsnoop file")
            return
        }
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try BTSnoopWriter(path: path)
        writer.record(Self.reset, sentByHost: true)
        writer.record(Self.resetComplete, sentByHost: false)
        writer.record(Self.aclOut, sentByHost: true)
        writer.close()

        let run = Process()
        run.executableURL = URL(fileURLWithPath: tshark)
        run.arguments = ["-r", path, "-T", "fields", "-e", "frame.number"]
        let output = Pipe()
        run.standardOutput = output
        run.standardError = FileHandle.nullDevice
        try run.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        run.waitUntilExit()
        #expect(run.terminationStatus == 0)
        #expect(text.split(separator: "\n") == ["1", "2", "3"])
    }
}
