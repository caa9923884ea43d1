import Capture
import HAL
import Testing
import Transports
@testable import hwprobe

@Suite struct ListCommandTests {
    static let sections: Set<String> = ["controllers", "cameras", "hapticDevices", "serialPorts", "peripherals", "problems"]

    func run(_ arguments: [String], sources: ListSources) async throws -> (Int32, [String: JSONShape], String) {
        let captured = CapturedConsole()
        let code = await HWProbe(console: captured.console, listSources: sources).run(arguments)
        return (code, try JSONShape.parse(captured.stdout), captured.stderr)
    }

    /// A machine like this one: no Bluetooth, V4L2 or USB in the kernel.
    static let bareKernel = ListSources(
        controllers: { () throws(HCIAccessError) in throw .noKernelSupport },
        cameras: { () throws(CameraError) in throw .noKernelSupport("kernel has no V4L2 support (no /sys/class/video4linux)") },
        usb: { (_) throws(USBAccessError) in throw .noKernelSupport },
        evdev: { () throws(InputAccessError) in ([], []) }, hidraw: { ([], []) }, serialPorts: { ["/dev/ttyS0"] })

    @Test func aBareKernelGetsOneProblemPerMissingFeatureAndExitZero() async throws {
        let (code, json, _) = try await run(["list", "--json"], sources: Self.bareKernel)
        #expect(code == 0)
        #expect(json.keySet == Self.sections)
        let problems = try #require(json["problems"]?.array)
        #expect(problems.map { $0["section"]?.string } == ["controllers", "cameras", "hapticDevices"])
        #expect(problems.allSatisfy { $0.keys == ["section", "message"] })
        #expect(problems[0]["message"]?.string?.contains("no Bluetooth support") == true)
        #expect(json["serialPorts"]?.array?.first?["path"]?.string == "/dev/ttyS0")
    }

    static let furnished = ListSources(
        controllers: { () throws(HCIAccessError) in
            [HCIControllerInfo(index: 0, name: "hci0", address: BLEAddress(string: "00:1A:7D:DA:71:13"), isUp: false),
             HCIControllerInfo(index: 1, name: "hci1", address: nil, isUp: true)]
        },
        cameras: { () throws(CameraError) in
            .init(cameras: [CameraInfo(uri: "v4l2:/dev/video0", card: "Integrated Camera", driver: "uvcvideo", formats: [
                PixelFormatInfo(fourcc: "YUYV", sizes: [.discrete(width: 640, height: 480), .discrete(width: 1280, height: 720)]),
                PixelFormatInfo(fourcc: "GREY", sizes: [.range(minWidth: 16, minHeight: 16, maxWidth: 1920, maxHeight: 1080)]),
            ], identity: DeviceIdentity(busInfo: "usb-0000:00:14.0-5"))], problems: ["cannot open /dev/video2: permission denied"])
        },
        usb: { (interesting) throws(USBAccessError) in
            #expect(interesting.contains(USBIdentity(vendor: 0x045E, product: 0x028E)))
            return [USBDeviceInfo(identity: USBIdentity(vendor: 0x045E, product: 0x028E), bus: 1, address: 7, product: "Controller"),
                    USBDeviceInfo(identity: USBIdentity(vendor: 0x045E, product: 0x028E), bus: 2, address: 3, product: nil),
                    USBDeviceInfo(identity: USBIdentity(vendor: 0x1D6B, product: 0x0002), bus: 1, address: 1, product: nil)]
        },
        evdev: { () throws(InputAccessError) in
            ([EvdevDeviceInfo(path: "/dev/input/event5", name: "Microsoft X-Box 360 pad", identity: USBIdentity(vendor: 0x045E, product: 0x028E), capabilities: [.rumble]),
              EvdevDeviceInfo(path: "/dev/input/event0", name: "Power Button", identity: USBIdentity(vendor: 0, product: 1), capabilities: [])], [])
        },
        hidraw: { ([HidrawDeviceInfo(path: "/dev/hidraw3", name: "Sony Wireless Controller", identity: USBIdentity(vendor: 0x054C, product: 0x09CC))], []) },
        serialPorts: { ["/dev/ttyACM0"] },
        nodeIdentity: { path in
            switch path {
            case "/dev/video0": DeviceIdentity(usbPort: "1-5", serial: "200901010001")
            case "/dev/input/event5": DeviceIdentity(usbPort: "1-2")
            case "/dev/hidraw3": DeviceIdentity(serial: "a4:53:85:1c:2b:90")   // a Bluetooth pad's uniq
            case "/dev/ttyACM0": DeviceIdentity(usbPort: "1-3", serial: "E6614103E7")
            default: .unknown
            }
        },
        usbIdentity: { bus, address in
            switch (bus, address) {
            case (1, 7): DeviceIdentity(usbPort: "1-2")
            case (2, 3): DeviceIdentity(usbPort: "2-1.4")
            default: .unknown
            }
        })

    @Test func everySectionHasTheContractsKeys() async throws {
        let (code, json, _) = try await run(["list", "--json"], sources: Self.furnished)
        #expect(code == 0)
        #expect(json.keySet == Self.sections)
        let controllers = try #require(json["controllers"]?.array)
        #expect(controllers.map(\.keys) == [["uri", "name", "address", "id"], ["uri", "name", "id"]])
        #expect(controllers.first?["address"]?.string == "00:1A:7D:DA:71:13")
        let camera = try #require(json["cameras"]?.array?.first)
        #expect(camera.keys == ["uri", "card", "driver", "formats", "id", "busInfo", "usbPort", "serial"])
        #expect(camera["driver"]?.string == "uvcvideo")
        let formats = try #require(camera["formats"]?.array)
        #expect(formats.map { $0["fourcc"]?.string } == ["YUYV", "GREY"])
        #expect(formats[0]["sizes"]?.array?.compactMap(\.string) == ["640x480", "1280x720"])
        #expect(formats[1]["sizes"]?.array?.compactMap(\.string) == ["16x16-1920x1080"])
        let pads = try #require(json["hapticDevices"]?.array)
        #expect(pads.map { $0["uri"]?.string } == ["usb:045e:028e@1.7", "usb:045e:028e@2.3", "hidraw:/dev/hidraw3", "evdev:/dev/input/event5"])
        #expect(pads.map { $0["driver"]?.string } == ["xbox360-usb", "xbox360-usb", "dualshock4-hidraw", "evdev-rumble"])
        #expect(pads.map(\.keys) == [["uri", "name", "driver", "id", "usbPort"], ["uri", "name", "driver", "id", "usbPort"],
                                      ["uri", "name", "driver", "id", "serial"], ["uri", "name", "driver", "id", "usbPort"]])
        #expect(pads[1]["name"]?.string == "Xbox 360 wired pad (libusb)")
        #expect(json["problems"]?.array?.first?["section"]?.string == "cameras")
    }

    @Test func aSinglePadIsNamedWithoutItsBusAddress() async throws {
        var sources = Self.furnished
        sources.usb = { (_) throws(USBAccessError) in
            [USBDeviceInfo(identity: USBIdentity(vendor: 0x045E, product: 0x028E), bus: 1, address: 7, product: "Controller")]
        }
        let (_, json, _) = try await run(["list", "--json"], sources: sources)
        #expect(json["hapticDevices"]?.array?.first?["uri"]?.string == "usb:045e:028e")
    }

    @Test func simulatedBenchPeripheralsAreClaimedByTheirDrivers() async throws {
        let (code, json, _) = try await run(["list", "--hci", "sim:", "--scan-seconds", "0.5", "--json"], sources: .empty)
        #expect(code == 0)
        let peripherals = try #require(json["peripherals"]?.array)
        #expect(peripherals.count == 2)
        let mirror = try #require(peripherals.first { $0["kind"]?.string == "mirror" })
        #expect(mirror.keys == ["hci", "address", "addressType", "name", "rssi", "services", "driver", "kind", "reason"])
        #expect(mirror["hci"]?.string == "sim:")
        #expect(mirror["address"]?.string == "C0:FF:EE:00:4F:2A")
        #expect(mirror["addressType"]?.string == "random")
        #expect(mirror["driver"]?.string == "mirror-v1")
        #expect(mirror["reason"]?.string == "mirror-v1 by manufacturer FFFF data 4D 52")
        #expect(mirror["rssi"]?.number == -48)
        #expect(mirror["services"]?.array?.compactMap(\.string) == ["7B9E0001-3C2A-4F1B-9E6D-5A4C3B2A1F00"])
        let scale = try #require(peripherals.first { $0["kind"]?.string == "scale" })
        #expect(scale["driver"]?.string == "standard-scale")
        #expect(scale["addressType"]?.string == "public")
        #expect(scale["reason"]?.string == "standard-scale by service 181D")
        #expect(scale["services"]?.array?.compactMap(\.string) == ["181D"])
    }

    @Test func unreachableControllersBecomeProblemsNotFailures() async throws {
        let (code, json, _) = try await run(["list", "--hci", "hci:0", "--hci", "v4l2:/dev/video0", "--json"], sources: .empty)
        #expect(code == 0)
        let messages = json["problems"]?.array?.filter { $0["section"]?.string == "peripherals" }.compactMap { $0["message"]?.string } ?? []
        #expect(messages.count == 2)
        #expect(messages.last?.contains("is not an HCI controller") == true)
    }

    @Test func theTableSaysTheSameThingsForPeople() {
        let report = ListReport(
            controllers: [.init(uri: "hci:0", name: "hci0", address: "00:1A:7D:DA:71:13")],
            cameras: [.init(uri: "v4l2:/dev/video0", card: "Integrated Camera", driver: "uvcvideo",
                            formats: [.init(fourcc: "YUYV", sizes: ["640x480", "1280x720"])])],
            hapticDevices: [.init(uri: "usb:045e:028e", name: "Controller", driver: "xbox360-usb")],
            serialPorts: [.init(path: "/dev/ttyACM0")],
            peripherals: [.init(hci: "sim:", address: "C0:FF:EE:00:4F:2A", name: "Mirror 4F2A", rssi: -48, services: ["181D"],
                                driver: "mi-scale", kind: "scale", weightKg: 72.3, addressType: "random",
                                reason: "mi-scale by service data 181B (over standard-scale by service 181D)"),
                          .init(hci: "sim:", address: "B0:B0:B0:00:00:01", name: nil, rssi: -70, services: ["180F"],
                                driver: nil, kind: nil, weightKg: nil, addressType: "public", reason: nil)],
            problems: [.init(section: .cameras, message: "cannot open /dev/video2")])
        let text = ListTable.render(report)
        for needle in ["Bluetooth controllers", "hci:0  hci0  00:1A:7D:DA:71:13", "Integrated Camera", "YUYV", "640x480 1280x720",
                       "usb:045e:028e  Controller  xbox360-usb", "/dev/ttyACM0", "Mirror 4F2A", "72.30 kg",
                       "C0:FF:EE:00:4F:2A  random  Mirror 4F2A",
                       "scale: mi-scale by service data 181B (over standard-scale by service 181D)",
                       "B0:B0:B0:00:00:01  public  (no name)", "unclaimed",
                       "cameras: cannot open /dev/video2"] {
            #expect(text.contains(needle), "\(needle)")
        }
    }

    @Test func theRealMachineListsAsOneJSONObject() async throws {
        // This runs the live probes: whatever this machine lacks must show up as problems, never a failure.
        let (code, json, err) = try await run(["list", "--json"], sources: ListSources())
        #expect(code == 0)
        #expect(json.keySet == Self.sections)
        #expect(err.isEmpty)
    }
}

@Suite struct BootstrapTests {
    @Test func everyPluginIsRegisteredOnce() {
        let ids = linkedDrivers.map(\.descriptor.id)
        #expect(ids == ["mirror-v1", "mi-scale", "qn-broadcast", "qn-scale", "icomon-mgb", "onebyone-eufy", "yunmai", "beurer-sanitas",
                        "standard-scale", "xbox360-usb", "dualshock4-hidraw", "evdev-rumble"])
    }
}
