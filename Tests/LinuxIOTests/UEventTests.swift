import Glibc
import Testing
@testable import LinuxIO

/// UEvent.parse takes the kernel's encoding and libudev's, and answers nil for anything else (no
/// summary line, a libudev header pointing outside the message, no ACTION or DEVPATH, too long).
@Suite struct UEventParseTests {
    static let kernelAdd = Array(("add@/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/0003:054C:09CC.0001/hidraw/hidraw0\0"
        + "ACTION=add\0DEVPATH=/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/0003:054C:09CC.0001/hidraw/hidraw0\0"
        + "SUBSYSTEM=hidraw\0MAJOR=243\0MINOR=0\0DEVNAME=hidraw0\0SEQNUM=5120\0").utf8)

    /// libudev's framing around `properties`: "libudev\0", magic FEEDCAFE (big-endian), then the
    /// header size, the properties' offset and length (little-endian here, as on x86), and
    /// filler up to the header size.
    static func libudev(_ properties: String, headerSize: UInt32 = 40, offset: UInt32? = nil, length: UInt32? = nil) -> [UInt8] {
        let body = Array(properties.utf8)
        func little(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        var header = Array("libudev".utf8) + [0] + [0xFE, 0xED, 0xCA, 0xFE]
        header += little(headerSize) + little(offset ?? headerSize) + little(length ?? UInt32(body.count))
        header += [UInt8](repeating: 0xEE, count: Int(headerSize) - header.count)
        return header + body
    }

    @Test func theKernelsEncoding() throws {
        let event = try #require(UEvent.parse(Self.kernelAdd))
        #expect(event.action == "add")
        #expect(event.devicePath == "/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/0003:054C:09CC.0001/hidraw/hidraw0")
        #expect(event.subsystem == "hidraw")
        #expect(event.deviceName == "hidraw0")
        #expect(event.properties["SEQNUM"] == "5120" && event.properties["MAJOR"] == "243")
        #expect(event.properties.count == 7)
    }

    @Test func theSummaryLineIsNotTakenForAProperty() throws {
        // The summary says "add" but the properties say "change": the properties win.
        let event = try #require(UEvent.parse(Array("add@/devices/x\0ACTION=change\0DEVPATH=/devices/x\0".utf8)))
        #expect(event.action == "change")
        #expect(event.subsystem == nil && event.deviceName == nil)
        #expect(UEvent.parse(Array("ACTION=add@x\0DEVPATH=/y\0".utf8)) == nil, "a first string with @ but no properties after")
    }

    @Test func aValueMayHoldEqualsSignsAndJunkFieldsAreSkipped() throws {
        let event = try #require(UEvent.parse(Array("change@/d\0ACTION=change\0junk\0DEVPATH=/d\0HID_UNIQ=a=b\0=empty\0".utf8)))
        #expect(event.properties["HID_UNIQ"] == "a=b")
        #expect(event.properties["junk"] == nil)
        #expect(event.properties[""] == "empty")
    }

    @Test func libudevsEncoding() throws {
        let bytes = Self.libudev("ACTION=remove\0DEVPATH=/devices/virtual/misc/uhid\0SUBSYSTEM=misc\0DEVNAME=uhid\0")
        let event = try #require(UEvent.parse(bytes))
        #expect(event.action == "remove" && event.devicePath == "/devices/virtual/misc/uhid")
        #expect(event.subsystem == "misc" && event.deviceName == "uhid")
        // Only the declared properties count: what follows them is not read.
        let trailing = Self.libudev("ACTION=add\0DEVPATH=/a\0", length: 22) + Array("SUBSYSTEM=tty\0".utf8)
        #expect(try #require(UEvent.parse(trailing)).subsystem == nil)
    }

    @Test func aBadLibudevHeaderIsNil() {
        let properties = "ACTION=add\0DEVPATH=/a\0"
        #expect(UEvent.parse(Self.libudev(properties)) != nil, "the well-formed one, for contrast")
        var wrongMagic = Self.libudev(properties)
        wrongMagic[11] = 0xFF
        #expect(UEvent.parse(wrongMagic) == nil)
        #expect(UEvent.parse(Self.libudev(properties, length: 1000)) == nil, "properties past the end")
        #expect(UEvent.parse(Self.libudev(properties, offset: 2000)) == nil, "offset past the end")
        #expect(UEvent.parse(Self.libudev(properties, offset: 8)) == nil, "offset inside the header")
        #expect(UEvent.parse(Self.libudev(properties, offset: 0xFFFF_FFF0, length: 0x20)) == nil, "sizes that wrap")
        #expect(UEvent.parse(Array(Self.libudev(properties).prefix(23))) == nil, "a header cut short")
        // "libudev" without its NUL is not libudev's framing, and no kernel summary either.
        #expect(UEvent.parse(Array("libudev-ish\0ACTION=add\0DEVPATH=/a\0".utf8)) == nil)
    }

    @Test func whatIsNoEventIsNil() {
        #expect(UEvent.parse([]) == nil)
        #expect(UEvent.parse([0]) == nil)
        #expect(UEvent.parse(Array("add@/devices/x".utf8)) == nil, "no NUL at all")
        #expect(UEvent.parse(Array("no summary\0ACTION=add\0DEVPATH=/x\0".utf8)) == nil)
        #expect(UEvent.parse(Array("add@/x\0DEVPATH=/x\0SUBSYSTEM=tty\0".utf8)) == nil, "no ACTION")
        #expect(UEvent.parse(Array("add@/x\0ACTION=add\0SUBSYSTEM=tty\0".utf8)) == nil, "no DEVPATH")
        #expect(UEvent.parse(Array("add@/x\0ACTION=\0DEVPATH=/x\0".utf8)) == nil, "an empty ACTION")
        var generator = UInt64(0x5EED)
        for _ in 0..<200 {
            let bytes = (0..<64).map { _ -> UInt8 in
                generator = generator &* 6364136223846793005 &+ 1442695040888963407
                return UInt8(truncatingIfNeeded: generator >> 56) | 1 // no NUL: never a summary line
            }
            #expect(UEvent.parse(bytes) == nil)
        }
    }

    @Test func theSizeLimitIsInclusive() throws {
        let start = Array("add@/x\0ACTION=add\0DEVPATH=/x\0PAD=".utf8)
        let exact = start + [UInt8](repeating: 0x61, count: UEvent.maximumSize - start.count - 1) + [0]
        #expect(exact.count == UEvent.maximumSize)
        #expect(try #require(UEvent.parse(exact)).properties["PAD"]?.count == UEvent.maximumSize - start.count - 1)
        #expect(UEvent.parse(exact + [0]) == nil, "one byte over")
    }
}

/// UEventSocket opens a real NETLINK_KOBJECT_UEVENT socket on this kernel and returns nil at its
/// deadline when nothing is pending (no device is plugged in while the tests run).
@Suite struct UEventSocketTests {
    /// As root on a kernel with netlink the socket opens; a sandbox without NETLINK_KOBJECT_UEVENT
    /// makes this fail with the errno it gave (not a crash).
    @Test func opensAndReturnsNilWhenNothingIsPending() {
        let socket: UEventSocket
        do {
            socket = try UEventSocket()
        } catch {
            Issue.record("cannot open a NETLINK_KOBJECT_UEVENT socket here: \(error) (errno \(error.code))")
            return
        }
        do {
            // No device is plugged in during the test; timeout 0 polls once and returns.
            let event = try socket.next(timeoutMilliseconds: 0)
            #expect(event == nil, "a hotplug event arrived during the test: \(String(describing: event))")
        } catch {
            Issue.record("next failed: \(error) (errno \(error.code))")
        }
    }

    @Test func aGroupNoOneSendsOnStaysQuiet() throws {
        let socket = try UEventSocket(groups: 0)
        #expect(try socket.next(timeoutMilliseconds: 0) == nil)
    }
}
