import Foundation
import Glibc
import Testing
@testable import LinuxIO

/// FileRemoval.remove removes a file, treats one already gone as done, and reports every other
/// failure as the Errno unlink(2) gave (these hold as root too: they are not permission checks).
@Suite struct FileRemovalTests {
    @Test func removesAFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("half.cassette", [1, 2, 3])
        try directory.write("other", [4])
        try FileRemoval.remove(directory.path("half.cassette"))
        #expect(directory.entries() == ["other"])
    }

    @Test func aMissingFileIsNotAnError() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try FileRemoval.remove(directory.path("never-was"))
        try FileRemoval.remove(directory.path("no-such-directory/never-was"))
    }

    @Test func removesASymbolicLinkNotWhatItNames() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("target", [1])
        try directory.symlink("link", to: directory.path("target"))
        try FileRemoval.remove(directory.path("link"))
        #expect(directory.entries() == ["target"])
    }

    @Test func otherFailuresAreThrown() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.makeDirectory("folder")
        try directory.write("plain", [])
        #expect(throws: Errno(EISDIR), "unlink(2) never removes a directory") { try FileRemoval.remove(directory.path("folder")) }
        #expect(throws: Errno(ENOTDIR)) { try FileRemoval.remove(directory.path("plain/inside")) }
        #expect(directory.entries() == ["folder", "plain"])
    }
}
