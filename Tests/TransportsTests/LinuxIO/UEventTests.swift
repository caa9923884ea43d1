import Testing
@testable import LinuxIO

/// Hotplug messages in both encodings that reach a NETLINK_KOBJECT_UEVENT socket.
@Suite struct UEventTests {
    /// What umockdev sent for `uevent(video9, "add")` (captured from a testbed): libudev's header,
    /// then the properties.
    static let libudev: [UInt8] = Array("libudev".utf8) + [0, 0xFE, 0xED, 0xCA, 0xFE, 40, 0, 0, 0, 40, 0, 0, 0, 81, 0, 0, 0,
                                                            0xE9, 0xCF, 0x39, 0x31] + [UInt8](repeating: 0, count: 12)
        + Array("ACTION=add\0DEVPATH=/devices/video9\0SUBSYSTEM=video4linux\0SEQNUM=1\0DEVNAME=video9\0".utf8)

    @Test func udevsEncoding() throws {
        #expect(Self.libudev.count == 121)
        let event = try #require(UEvent.parse(Self.libudev))
        #expect(event.action == "add" && event.devicePath == "/devices/video9")
        #expect(event.subsystem == "video4linux" && event.deviceName == "video9")
        #expect(event.properties["SEQNUM"] == "1")
    }

    @Test func theKernelsEncoding() throws {
        let bytes = Array("remove@/devices/pci0000:00/usb1/1-1/1-1:1.0/tty/ttyACM0\0ACTION=remove\0DEVPATH=/devices/pci0000:00/usb1/1-1/1-1:1.0/tty/ttyACM0\0SUBSYSTEM=tty\0MAJOR=166\0MINOR=0\0DEVNAME=ttyACM0\0SEQNUM=4242\0".utf8)
        let event = try #require(UEvent.parse(bytes))
        #expect(event.action == "remove" && event.subsystem == "tty" && event.deviceName == "ttyACM0")
        #expect(event.properties["MAJOR"] == "166")
    }

    @Test func whatIsNotAnEventIsNil() {
        #expect(UEvent.parse([]) == nil)
        #expect(UEvent.parse(Array("no summary line\0ACTION=add\0".utf8)) == nil)
        #expect(UEvent.parse(Array("add@/x\0SUBSYSTEM=tty\0".utf8)) == nil, "no ACTION or DEVPATH")
        // A libudev header whose properties run past the message, or a wrong magic.
        var long = Self.libudev
        long[20] = 200
        #expect(UEvent.parse(long) == nil)
        var magic = Self.libudev
        magic[8] = 0
        #expect(UEvent.parse(magic) == nil)
        #expect(UEvent.parse(Array(Self.libudev.prefix(20))) == nil)
        #expect(UEvent.parse([UInt8](repeating: 0x41, count: UEvent.maximumSize + 1)) == nil)
    }

    /// The socket itself: any user may open one (the kernel lets non-root listen to uevents).
    @Test func theSocketOpensAndWaitsWithADeadline() throws {
        let socket = try UEventSocket()
        // Nothing is plugged in during the test: the wait ends at its deadline with nil.
        _ = try socket.next(timeoutMilliseconds: 10)
    }
}
