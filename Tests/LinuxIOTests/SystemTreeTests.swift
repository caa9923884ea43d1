import Foundation
import Glibc
import Testing
@testable import LinuxIO

/// SystemTree over a fake /sys and /dev laid out in a temporary directory the way the kernel lays
/// them out (class links into devices/, `subsystem` links back): listings in natural order,
/// attributes without their newline, link names, canonical paths through every link (and refusal
/// of links that leave the tree or loop), and node paths under the fake /dev.
@Suite struct SystemTreeTests {
    static let hid = "devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/0003:054C:09CC.0001"

    /// sys/ and dev/ under a temporary directory, with hidraw0, hidraw2 and hidraw10.
    static func makeTree() throws -> (TemporaryDirectory, SystemTree) {
        let root = try TemporaryDirectory()
        try root.makeDirectory("sys/class/hidraw")
        try root.makeDirectory("sys/class/hid")
        try root.makeDirectory("dev/input")
        for index in [10, 0, 2] {
            let device = "sys/\(hid)/hidraw/hidraw\(index)"
            try root.makeDirectory(device)
            try root.write(device + "/dev", Array("243:\(index)\n".utf8))
            try root.symlink(device + "/subsystem", to: "../../../../../../../../../class/hidraw")
            try root.symlink("sys/class/hidraw/hidraw\(index)", to: "../../\(hid)/hidraw/hidraw\(index)")
            try root.write("dev/hidraw\(index)", [])
        }
        try root.write("sys/\(hid)/uevent", Array("DRIVER=sony\nHID_NAME=Wireless Controller\n".utf8))
        try root.write("sys/\(hid)/padded", Array("  0x054c \n\n".utf8))
        try root.write("dev/input/event5", [])
        try root.write("dev/input/event10", [])
        return (root, SystemTree(sysRoot: root.path("sys"), devRoot: root.path("dev")))
    }

    @Test func listingsAreInNaturalOrder() throws {
        let (root, tree) = try Self.makeTree()
        defer { root.remove() }
        #expect(tree.list("class/hidraw") == ["hidraw0", "hidraw2", "hidraw10"])
        #expect(tree.list("class/hid") == [], "an empty directory is an empty list")
        #expect(tree.list("class/video4linux") == nil, "a missing one is nil")
        #expect(tree.listDev() == ["hidraw0", "hidraw2", "hidraw10", "input"])
        #expect(tree.listDev("input") == ["event5", "event10"])
        #expect(tree.listDev("snd") == [], "a missing /dev folder is empty")
    }

    @Test func attributesLoseTheirNewline() throws {
        let (root, tree) = try Self.makeTree()
        defer { root.remove() }
        #expect(tree.attribute("class/hidraw/hidraw2/dev") == "243:2", "read through the class link")
        #expect(tree.attribute("\(Self.hid)/uevent") == "DRIVER=sony\nHID_NAME=Wireless Controller", "inner newlines stay")
        #expect(tree.attribute("\(Self.hid)/padded") == "0x054c", "white space at both ends goes")
        #expect(tree.attribute("\(Self.hid)/absent") == nil)
        try root.write("sys/binary", [0xFF, 0xFE, 0x00])
        #expect(tree.attribute("binary") == nil, "not UTF-8 is no text")
    }

    @Test func aLinkTargetIsItsLastComponent() throws {
        let (root, tree) = try Self.makeTree()
        defer { root.remove() }
        #expect(tree.linkTarget("class/hidraw/hidraw0/subsystem") == "hidraw")
        #expect(tree.linkTarget("class/hidraw/hidraw10") == "hidraw10")
        #expect(tree.linkTarget("\(Self.hid)/uevent") == nil, "a file is no link")
        #expect(tree.linkTarget("class/hidraw/absent") == nil)
    }

    @Test func canonicalFollowsEveryLink() throws {
        let (root, tree) = try Self.makeTree()
        defer { root.remove() }
        #expect(tree.canonical("class/hidraw/hidraw2") == "\(Self.hid)/hidraw/hidraw2")
        #expect(tree.canonical("class/hidraw/hidraw2/../..") == Self.hid, "up from where the link led, not from class/")
        #expect(tree.canonical("class/hidraw/hidraw10/subsystem") == "class/hidraw")
        #expect(tree.canonical("class/hidraw/hidraw10/subsystem/hidraw0/dev") == "\(Self.hid)/hidraw/hidraw0/dev")
        #expect(tree.canonical("./class//hidraw/") == "class/hidraw")
        #expect(tree.canonical("") == "")
        #expect(tree.canonical("class/hidraw/hidraw3") == nil, "missing")
        #expect(tree.canonical("..") == nil, "above the root")
    }

    @Test func absoluteLinksStayInTheTreeOrAreRefused() throws {
        let (root, tree) = try Self.makeTree()
        defer { root.remove() }
        try root.symlink("sys/class/hid/inside", to: root.path("sys/\(Self.hid)"))
        try root.symlink("sys/class/hid/kernel", to: "/sys/\(Self.hid)")
        try root.symlink("sys/class/hid/outside", to: "/etc")
        try root.symlink("sys/class/hid/up", to: "../../../..")
        try root.symlink("sys/class/hid/ping", to: "pong")
        try root.symlink("sys/class/hid/pong", to: "ping")
        #expect(tree.canonical("class/hid/inside/hidraw") == "\(Self.hid)/hidraw")
        #expect(tree.canonical("class/hid/kernel") == Self.hid, "a link to /sys/… means this tree's sys")
        #expect(tree.canonical("class/hid/outside") == nil)
        #expect(tree.canonical("class/hid/up") == nil, "relative, but above the root")
        #expect(tree.canonical("class/hid/ping") == nil, "a loop ends after 40 links")
    }

    @Test func existsAndDevPath() throws {
        let (root, tree) = try Self.makeTree()
        defer { root.remove() }
        #expect(tree.exists("class/hidraw/hidraw0"))
        #expect(tree.exists("\(Self.hid)/uevent"))
        #expect(!tree.exists("class/hidraw/hidraw1"))
        #expect(tree.devPath("hidraw2") == root.path("dev/hidraw2"))
        #expect(FileManager.default.fileExists(atPath: tree.devPath("input/event5")))
        #expect(SystemTree.live.sysRoot == "/sys" && SystemTree.live.devRoot == "/dev")
        #expect(SystemTree().devPath("null") == "/dev/null")
    }

    @Test func naturalOrderComparesNumbersAsNumbers() {
        #expect(naturalOrder("hidraw2", "hidraw10"))
        #expect(!naturalOrder("hidraw10", "hidraw2"))
        #expect(!naturalOrder("hidraw2", "hidraw2"), "strict: equal is not before")
        #expect(naturalOrder("event9", "hidraw0"), "the letters first")
        #expect(["video10", "video1", "video2", "video0"].sorted(by: naturalOrder) == ["video0", "video1", "video2", "video10"])
    }
}
