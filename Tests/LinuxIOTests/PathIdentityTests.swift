import Foundation
import Glibc
import Testing
@testable import LinuxIO

/// Two paths a command will write are one place when they name one file, however spelled (issue 27).
@Suite struct PathIdentityTests {
    @Test func spellingsOfOneNewFileClash() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        #expect(mkdir(scratch.path("sub"), 0o700) == 0)
        #expect(symlink(scratch.path("sub"), scratch.path("alias")) == 0)
        let new = scratch.path("sub/out.json")
        for other in [new, scratch.path("sub/./out.json"), scratch.path("sub/../sub/out.json"), scratch.path("alias/out.json"),
                      scratch.path("sub//out.json")] {
            #expect(PathIdentity.firstClash(among: [new, other])?.second == 1, "\(other)")
        }
        #expect(PathIdentity.firstClash(among: [new, scratch.path("sub/out.json.y4m"), scratch.path("out.json")]) == nil)
        #expect(!FileManager.default.fileExists(atPath: new), "nothing is created")
    }

    @Test func linksToOneExistingFileClash() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        try scratch.write("report.xml", Array("old".utf8))
        #expect(link(scratch.path("report.xml"), scratch.path("hard.xml")) == 0)
        #expect(symlink(scratch.path("report.xml"), scratch.path("soft.xml")) == 0)
        #expect(PathIdentity.firstClash(among: [scratch.path("report.xml"), scratch.path("hard.xml")]) != nil)
        #expect(PathIdentity.firstClash(among: [scratch.path("soft.xml"), scratch.path("report.xml")]) != nil)
        let cwd = FileManager.default.currentDirectoryPath
        #expect(chdir(scratch.path) == 0)
        defer { _ = chdir(cwd) }
        #expect(PathIdentity.firstClash(among: ["x", "y", "./x"])! == (0, 2))
    }

    @Test func pathsWithoutADirectoryCompareBySpelling() {
        #expect(PathIdentity.firstClash(among: ["/nonexistent/a", "/nonexistent/b"]) == nil)
        #expect(PathIdentity.firstClash(among: ["/nonexistent/a", "/nonexistent/a"]) != nil)
    }
}
