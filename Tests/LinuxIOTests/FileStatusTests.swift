import Glibc
import Testing
@testable import LinuxIO

/// FileStatus.exists says whether a path names anything: a file and a directory do, a missing
/// path and a dangling symbolic link do not (a link to something does); and CurrentThread.sleep
/// returns, at once for zero and not before the time asked for otherwise.
@Suite struct FileStatusTests {
    @Test func existsForFilesDirectoriesAndLinksThatLead() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("file", [1])
        try directory.makeDirectory("sub")
        try directory.symlink("link", to: directory.path("file"))
        try directory.symlink("dangling", to: directory.path("absent"))
        #expect(FileStatus.exists(directory.path("file")))
        #expect(FileStatus.exists(directory.path("sub")))
        #expect(FileStatus.exists(directory.path))
        #expect(FileStatus.exists(directory.path("link")), "a link to a file: followed")
        #expect(!FileStatus.exists(directory.path("absent")))
        #expect(!FileStatus.exists(directory.path("dangling")), "a dangling link names nothing")
        #expect(!FileStatus.exists(directory.path("file/below")), "a path through a file")
        #expect(!FileStatus.exists(""))
    }

    @Test func existsEvenWithoutPermissionToRead() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("locked", [1])
        #expect(chmod(directory.path("locked"), 0) == 0)
        #expect(FileStatus.exists(directory.path("locked")), "F_OK asks about existence only")
    }

    @Test func sleepingForNothingReturns() {
        CurrentThread.sleep(for: .zero)
        CurrentThread.sleep(for: .seconds(-1))
    }

    @Test func sleepingLastsAtLeastTheTimeAsked() {
        let clock = ContinuousClock()
        let start = clock.now
        CurrentThread.sleep(for: .milliseconds(1))
        #expect(clock.now - start >= .milliseconds(1))
        let second = clock.now
        CurrentThread.sleep(for: .microseconds(1500))
        #expect(clock.now - second >= .microseconds(1500), "the fraction of a second is kept")
    }
}
