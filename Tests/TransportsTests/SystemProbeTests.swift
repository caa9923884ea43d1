import Foundation
import HAL
import LinuxIO
import Testing
@testable import Transports

/// A throw-away /sys + /dev tree laid out like the kernel's.
struct FakeTree {
    let root: URL
    var tree: SystemTree { SystemTree(sysRoot: root.path + "/sys", devRoot: root.path + "/dev") }

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("hwprobe-tree-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("dev"), withIntermediateDirectories: true)
    }

    func dir(_ path: String) throws {
        try FileManager.default.createDirectory(at: root.appendingPathComponent(path), withIntermediateDirectories: true)
    }

    func file(_ path: String, _ text: String) throws {
        try dir((path as NSString).deletingLastPathComponent)
        try Data(text.utf8).write(to: root.appendingPathComponent(path))
    }

    func link(_ path: String, to target: String) throws {
        try dir((path as NSString).deletingLastPathComponent)
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent(path).path, withDestinationPath: target)
    }

    func remove() { try? FileManager.default.removeItem(at: root) }
}

@Suite struct SerialPortProbeTests {
    @Test func listsRealPortsAndSkipsConsolesAndPhantom8250s() throws {
        let fake = try FakeTree()
        defer { fake.remove() }
        try fake.dir("sys/devices/usb1/1-1:1.0")
        try fake.link("sys/class/tty/ttyACM0/device", to: "../../../devices/usb1/1-1:1.0")
        try fake.link("sys/class/tty/ttyUSB10/device", to: "../../../devices/usb1/1-1:1.0")
        try fake.link("sys/class/tty/ttyUSB2/device", to: "../../../devices/usb1/1-1:1.0")
        try fake.link("sys/class/tty/ttyS0/device", to: "../../../devices/usb1/1-1:1.0")
        try fake.file("sys/class/tty/ttyS0/type", "4\n")
        try fake.link("sys/class/tty/ttyS1/device", to: "../../../devices/usb1/1-1:1.0")
        try fake.file("sys/class/tty/ttyS1/type", "0\n")
        try fake.dir("sys/class/tty/tty3")           // a virtual console: no device link
        try fake.dir("sys/class/tty/ttyACM9")        // gone: no device link either
        let ports = SerialPortProbe(tree: fake.tree).ports()
        #expect(ports == ["ttyACM0", "ttyS0", "ttyUSB2", "ttyUSB10"].map { fake.root.path + "/dev/" + $0 })
    }

    @Test func noTTYClassMeansNoPorts() throws {
        let fake = try FakeTree()
        defer { fake.remove() }
        #expect(SerialPortProbe(tree: fake.tree).ports().isEmpty)
    }
}

@Suite struct KernelAccessTests {
    @Test func errnoValuesBecomeTheContractsMessages() {
        #expect(HCIAccessError.from(.familyNotSupported) == .noKernelSupport)
        #expect(HCIAccessError.from(.notPermitted) == .notPermitted)
        #expect(HCIAccessError.from(.busy, controller: 0) == .busy("hci0"))
        #expect(HCIAccessError.from(.noDevice, controller: 3) == .noSuchController(3))
        #expect(HCIAccessError.notPermitted.description == "needs CAP_NET_ADMIN (run with sudo or setcap cap_net_admin+ep on hwprobe)")
        #expect(HCIAccessError.busy("hci0").description == "hci0 is busy: another program holds it through the HCI user channel (or it is still being set up): close that program and retry, or use another controller")
        #expect(HCIAccessError.noKernelSupport.description.hasPrefix("kernel has no Bluetooth support"))
    }

    /// On a kernel without AF_BLUETOOTH (this machine's) the probe must say so; with Bluetooth it must list.
    @Test func controllerProbeAnswersOnThisKernel() {
        do {
            let controllers = try HCIControllerProbe.controllers()
            #expect(controllers.allSatisfy { $0.name.hasPrefix("hci") })
        } catch {
            #expect([.noKernelSupport, .notPermitted].contains(error), "\(error)")
        }
    }

    @Test func usbProbeWithoutUSBBusSaysNoKernelSupport() throws {
        let fake = try FakeTree()
        defer { fake.remove() }
        #expect(throws: USBAccessError.noKernelSupport) { try USBProbe.devices(tree: fake.tree) }
    }

    @Test func inputProbeReportsUnopenableNodesOneByOne() throws {
        let fake = try FakeTree()
        defer { fake.remove() }
        try fake.dir("sys/class/input")
        try fake.file("dev/input/event0", "") // a regular file: the evdev ioctls fail on it
        let result = try InputProbe(tree: fake.tree).evdevDevices()
        #expect(result.devices.isEmpty)
        #expect(result.problems.count == 1)
        #expect(result.problems.first?.contains("event0") == true)
    }

    @Test func inputProbeWithoutInputClassSaysSo() throws {
        let fake = try FakeTree()
        defer { fake.remove() }
        #expect(throws: InputAccessError.self) { try InputProbe(tree: fake.tree).evdevDevices() }
    }
}
