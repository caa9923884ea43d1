import Foundation
import HAL
import LinuxIO
import Testing
import Transports
@testable import hwprobe

/// Stable device identity (issue 19, item 5): the URIs that name a device by what a replug keeps,
/// the ids `list` gives, where sysfs says them, and looking an id up again.
@Suite struct DeviceIdentityTests {
    // MARK: URIs

    @Test func identityURIsParseAndPrintAsTyped() throws {
        let forms = [
            "usb:045e:028e@1-2.3", "usb:045e:028e?serial=3B0A71C2", "v4l2:@1-5", "v4l2:@platform:vivid-000",
            "v4l2:@usb-0000:00:14.0-2.3", "v4l2:?serial=200901010001", "hidraw:@3-1", "hidraw:?serial=a4:53:85:1c:2b:90",
            "evdev:@1-2", "evdev:?serial=X1", "uart:@1-3?baud=1000000&rtscts=1", "uart:?serial=E6614103E7&baud=115200&rtscts=0",
            "hci:00:1A:7D:DA:71:13",
        ]
        for text in forms {
            let uri = try DeviceURI(parsing: text)
            guard case .located = uri else { Issue.record("\(text) is not an identity URI: \(uri)"); continue }
            #expect(uri.description == text)
        }
        #expect(try DeviceURI(parsing: "v4l2:@1-5").family == .camera)
        #expect(try DeviceURI(parsing: "hci:00:1A:7D:DA:71:13").family == .hci)
        #expect(try DeviceURI(parsing: "evdev:@1-2").family == .haptics)
        // The node and bus-address forms are what they were.
        #expect(try DeviceURI(parsing: "usb:045e:028e@1.7") == .usb(USBIdentity(vendor: 0x045E, product: 0x028E), bus: 1, address: 7))
        #expect(try DeviceURI(parsing: "usb:045e:028e") == .usb(USBIdentity(vendor: 0x045E, product: 0x028E), bus: nil, address: nil))
        #expect(try DeviceURI(parsing: "hci:0") == .hci(index: 0))
        let located = try DeviceURI(parsing: "usb:045e:028e@1-2.3")
        #expect(located == .located(DeviceLocation(kind: .usb, key: .usbPort("1-2.3"), usb: USBIdentity(vendor: 0x045E, product: 0x028E))))
    }

    @Test func malformedIdentityURIsSayWhatIsExpected() {
        let cases: [(String, String)] = [
            ("usb:045e:028e@1-2.3?serial=A", "either @PORT or ?serial=S"),
            ("usb:045e@1-2", "usb:VID:PID@PORT"),
            ("evdev:@1.7", "evdev:@PORT with a USB port such as 1-2.3"),
            ("evdev:@", "evdev:@PORT"),
            ("hidraw:?serial=", "serial must be"),
            ("hidraw:?serial=a b", "serial must be"),
            ("v4l2:?colour=red", "v4l2:@PORT, v4l2:@BUSINFO or v4l2:?serial=S"),
            ("v4l2:@1-5?serial=A", "either @PORT or ?serial=S"),
            ("evdev:?serial=A&x=1", "unknown option x (known: serial)"),
            ("hci:00:1A:7D:DA:71", "hci:AA:BB:CC:DD:EE:FF"),
            ("uart:@1-3?baud=0", "baud must be a positive number"),
        ]
        for (text, words) in cases {
            #expect(throws: DeviceURIError.self, "\(text)") { try DeviceURI(parsing: text) }
            do { _ = try DeviceURI(parsing: text) } catch {
                #expect(error.description.contains(words), "\(text): \(error.description)")
            }
        }
        #expect(DeviceIdentity.isUSBPort("1-2.3") && DeviceIdentity.isUSBPort("10-1") && !DeviceIdentity.isUSBPort("1.7")
                && !DeviceIdentity.isUSBPort("usb1") && !DeviceIdentity.isUSBPort("1-") && !DeviceIdentity.isUSBPort("1-2:1.0"))
    }

    // MARK: sysfs

    /// A sysfs laid out as the kernel does (class links into /sys/devices), in a scratch directory.
    final class FakeSysfs {
        let root: URL
        var tree: SystemTree { SystemTree(sysRoot: root.path + "/sys", devRoot: root.path + "/dev") }

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("sysfs-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(at: root) }

        func file(_ path: String, _ text: String) throws {
            let url = root.appendingPathComponent("sys/" + path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data((text + "\n").utf8).write(to: url)
        }

        func link(_ path: String, to target: String) throws {
            let url = root.appendingPathComponent("sys/" + path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: target)
        }

        /// A USB device at `port` with an interface and whatever lives under it.
        func usbDevice(_ port: String, bus: Int, devnum: Int, serial: String?) throws -> String {
            let dir = "devices/pci0000:00/0000:00:14.0/usb\(bus)/\(port)"
            try file(dir + "/busnum", "\(bus)")
            try file(dir + "/devnum", "\(devnum)")
            if let serial { try file(dir + "/serial", serial) }
            try link("bus/usb/devices/\(port)", to: "../../../" + dir)
            return dir
        }
    }

    @Test func sysfsGivesTheUSBPortAndSerialBehindEachKindOfNode() throws {
        let sys = try FakeSysfs()
        let camera = try sys.usbDevice("1-5", bus: 1, devnum: 4, serial: "200901010001")
        try sys.file(camera + "/1-5:1.0/video4linux/video0/name", "Integrated Camera")
        try sys.link("class/video4linux/video0", to: "../../" + camera + "/1-5:1.0/video4linux/video0")
        let pad = try sys.usbDevice("1-2.3", bus: 1, devnum: 9, serial: nil)
        try sys.file(pad + "/1-2.3:1.0/input/input7/uniq", "")
        try sys.file(pad + "/1-2.3:1.0/input/input7/event5/dev", "13:69")
        try sys.link("class/input/event5", to: "../../" + pad + "/1-2.3:1.0/input/input7/event5")
        // A Bluetooth pad: no USB device above it, its HID device's uniq is its address.
        let hid = "devices/virtual/misc/uhid/0005:054C:09CC.0003"
        try sys.file(hid + "/uevent", "DRIVER=sony\nHID_ID=0005:0000054C:000009CC\nHID_NAME=Wireless Controller\nHID_UNIQ=a4:53:85:1c:2b:90")
        try sys.file(hid + "/hidraw/hidraw3/dev", "241:3")
        try sys.link("class/hidraw/hidraw3", to: "../../" + hid + "/hidraw/hidraw3")
        // A uinput pad: nothing stable.
        try sys.file("devices/virtual/input/input9/event9/dev", "13:73")
        try sys.link("class/input/event9", to: "../../devices/virtual/input/input9/event9")
        let serial = try sys.usbDevice("1-3", bus: 1, devnum: 5, serial: "E6614103E7")
        try sys.file(serial + "/1-3:1.0/tty/ttyACM0/dev", "166:0")
        try sys.link("class/tty/ttyACM0", to: "../../" + serial + "/1-3:1.0/tty/ttyACM0")
        // Serial numbers that cannot name anything.
        _ = try sys.usbDevice("2-1", bus: 2, devnum: 2, serial: "0000000000")
        _ = try sys.usbDevice("2-2", bus: 2, devnum: 3, serial: "has space")

        let probe = SysfsIdentity(tree: sys.tree)
        #expect(probe.identity(ofNode: "/dev/video0") == DeviceIdentity(usbPort: "1-5", serial: "200901010001"))
        #expect(probe.identity(ofNode: "/dev/input/event5") == DeviceIdentity(usbPort: "1-2.3"))
        #expect(probe.identity(ofNode: "/dev/hidraw3") == DeviceIdentity(serial: "a4:53:85:1c:2b:90"))
        #expect(probe.identity(ofNode: "/dev/input/event9") == .unknown)
        #expect(probe.identity(ofNode: "/dev/ttyACM0") == DeviceIdentity(usbPort: "1-3", serial: "E6614103E7"))
        #expect(probe.identity(ofNode: "/dev/video7") == .unknown)
        #expect(probe.identity(ofUSBBus: 1, address: 9) == DeviceIdentity(usbPort: "1-2.3"))
        #expect(probe.identity(ofUSBBus: 1, address: 4) == DeviceIdentity(usbPort: "1-5", serial: "200901010001"))
        #expect(probe.identity(ofUSBBus: 2, address: 2) == DeviceIdentity(usbPort: "2-1"))
        #expect(probe.identity(ofUSBBus: 2, address: 3) == DeviceIdentity(usbPort: "2-2"))
        #expect(probe.identity(ofUSBBus: 3, address: 1) == .unknown)
    }

    @Test func canonicalFollowsLinksAndRefusesLoops() throws {
        let sys = try FakeSysfs()
        try sys.file("devices/a/b/c", "x")
        try sys.link("class/x/c", to: "../../devices/a/b")
        try sys.link("loop/one", to: "two")
        try sys.link("loop/two", to: "one")
        #expect(sys.tree.canonical("class/x/c/c") == "devices/a/b/c")
        #expect(sys.tree.canonical("class/x/c/../b") == "devices/a/b")
        #expect(sys.tree.canonical("loop/one") == nil)
        #expect(sys.tree.canonical("class/missing") == nil)
        #expect(sys.tree.canonical("../../etc") == nil)
    }

    // MARK: ids and looking them up

    static var furnished: ListSources { ListCommandTests.furnished }

    @Test func everyLocalDeviceGetsTheMostLastingIdThatNamesItAlone() {
        let report = ListCommand.localDevices(registry: DriverRegistry.linked, sources: Self.furnished)
        #expect(report.controllers.map(\.id) == ["hci:00:1A:7D:DA:71:13", "hci:1"])
        #expect(report.cameras.map(\.id) == ["v4l2:?serial=200901010001"])
        #expect(report.cameras.first?.busInfo == "usb-0000:00:14.0-5")
        #expect(report.hapticDevices.map(\.id) == ["usb:045e:028e@1-2", "usb:045e:028e@2-1.4",
                                                   "hidraw:?serial=a4:53:85:1c:2b:90", "evdev:@1-2"])
        #expect(report.serialPorts.map(\.id) == ["uart:?serial=E6614103E7"])
    }

    @Test func sharedSerialsFallBackToThePortAndSharedPortsToTheNode() {
        typealias C = DeviceIdentityChoice.Candidate
        let ids = DeviceIdentityChoice.ids([
            C(group: "v4l2", prefix: "v4l2:", serial: "0001", usbPort: "1-1", busInfo: "usb-0000:00:14.0-1", fallback: "v4l2:/dev/video0"),
            C(group: "v4l2", prefix: "v4l2:", serial: "0001", usbPort: "1-2", busInfo: "usb-0000:00:14.0-2", fallback: "v4l2:/dev/video2"),
            C(group: "v4l2", prefix: "v4l2:", serial: nil, usbPort: "1-3", busInfo: "usb-0000:00:14.0-3", fallback: "v4l2:/dev/video4"),
            C(group: "v4l2", prefix: "v4l2:", serial: nil, usbPort: "1-3", busInfo: "usb-0000:00:14.0-3", fallback: "v4l2:/dev/video5"),
            C(group: "v4l2", prefix: "v4l2:", serial: nil, usbPort: nil, busInfo: "platform:vivid-000", fallback: "v4l2:/dev/video6"),
            // Another group may share a value: it competes only within its own.
            C(group: "uart", prefix: "uart:", serial: "0001", usbPort: "1-1", busInfo: nil, fallback: "uart:/dev/ttyACM0"),
        ])
        #expect(ids == ["v4l2:@1-1", "v4l2:@1-2", "v4l2:/dev/video4", "v4l2:/dev/video5", "v4l2:@platform:vivid-000", "uart:?serial=0001"])
    }

    @Test func everyIdThatListGaveFindsItsDeviceAgain() throws {
        let registry = DriverRegistry.linked
        let locator = DeviceLocator(registry: registry, sources: Self.furnished)
        let report = ListCommand.localDevices(registry: registry, sources: Self.furnished)
        var pairs: [(id: String, uri: String)] = report.cameras.map { ($0.id ?? "", $0.uri) } + report.hapticDevices.map { ($0.id ?? "", $0.uri) }
        pairs += report.serialPorts.map { ($0.id ?? "", "uart:\($0.path)?baud=1000000&rtscts=1") }
        pairs += report.controllers.map { ($0.id ?? "", $0.uri) }
        for (id, uri) in pairs {
            let parsed = try DeviceURIArgument.parse(id, option: "--device", locator: locator)
            #expect(parsed.description == uri, "\(id)")
            #expect(locator.identity(of: parsed) == id)
        }
        // The line settings come along with a serial port found by its identity.
        let port = try DeviceURIArgument.parse("uart:?serial=E6614103E7&baud=115200&rtscts=0", option: "--hci", locator: locator)
        #expect(port == .uart(path: "/dev/ttyACM0", baud: 115_200, rtscts: false))
    }

    @Test func aDeviceThatIsNotAttachedIsExitThreeAndAnAmbiguousOneIsAUsageError() throws {
        let registry = DriverRegistry.linked
        let locator = DeviceLocator(registry: registry, sources: Self.furnished)
        #expect(throws: CLIFailure.self) { try DeviceURIArgument.parse("usb:045e:028e@1-9", option: "--device", locator: locator) }
        do { _ = try DeviceURIArgument.parse("usb:045e:028e@1-9", option: "--device", locator: locator) } catch {
            #expect(error.kind == .device)
            #expect(error.message == "--device usb:045e:028e@1-9: no USB device 045e:028e at USB port 1-9 is attached (usb:045e:028e@1-9): "
                    + "`hwprobe list` shows what is, each with its id")
        }
        // The camera section's problem is part of the answer: the camera may be there, unopenable.
        do { _ = try DeviceURIArgument.parse("v4l2:?serial=NOPE", option: "--camera", locator: locator) } catch {
            #expect(error.kind == .device)
            #expect(error.message.contains("no camera with serial number NOPE is attached") && error.message.contains("permission denied"))
        }
        // The pad at 1-2 has a libusb node and an evdev node: by scheme each is one device.
        #expect(try DeviceURIArgument.parse("evdev:@1-2", option: "--device", locator: locator) == .evdev(path: "/dev/input/event5"))
        var twins = Self.furnished
        twins.usbIdentity = { _, _ in DeviceIdentity(usbPort: "1-2", serial: "SAME") }
        let ambiguous = DeviceLocator(registry: registry, sources: twins)
        do { _ = try DeviceURIArgument.parse("usb:045e:028e?serial=SAME", option: "--device", locator: ambiguous) } catch {
            #expect(error.kind == .usage)
            #expect(error.message.contains("2 devices match usb:045e:028e?serial=SAME (usb:045e:028e@1.7, usb:045e:028e@2.3)"))
        }
    }

    @Test func reportsNameTheDeviceAndItsIdentity() throws {
        let locator = DeviceLocator(registry: DriverRegistry.linked, sources: Self.furnished)
        let invocation = try ArgumentParser.parse(["haptics", "--device", "evdev:/dev/input/event5", "--cue", "success"])
        let report = ReportTargets.runReport(for: invocation, arguments: ["haptics", "--device", "evdev:/dev/input/event5", "--cue", "success"],
                                             started: Date(timeIntervalSince1970: 0), seconds: 0.5, exitCode: 0, failure: nil, locator: locator)
        #expect(report.properties == [.init(name: "device", value: "evdev:/dev/input/event5"), .init(name: "device.id", value: "evdev:@1-2")])
        let xml = JUnitReport.render(report)
        #expect(xml.contains(#"<property name="device.id" value="evdev:@1-2"/>"#))
        #expect(TAPReport.render(report).contains("# device.id: evdev:@1-2\n"))
        let check = try ArgumentParser.parse(["check", "--hci", "sim:", "C0:FF:EE:00:4F:2A"])
        let checked = ReportTargets.runReport(for: check, arguments: [], started: Date(), seconds: 1, exitCode: 0, failure: nil, locator: locator)
        #expect(checked.properties == [.init(name: "device", value: "sim:"), .init(name: "peripheral", value: "C0:FF:EE:00:4F:2A")])
    }
}
