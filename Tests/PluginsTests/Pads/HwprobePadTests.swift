import Foundation
import HAL
import Testing

/// The `hwprobe` binary itself against the umockdev pads: `list` shows each pad with the driver
/// that claims it, and `haptics` plays a cue through the real libusb and hidraw paths. The exact
/// bytes of every cue are proven by the pad-probe tests beside this file; here the capture or
/// script holds only the one cue played, so a wrong report still fails the command.
let hwprobeBinary = UmockdevPad.probe.deletingLastPathComponent().appendingPathComponent("hwprobe")
let hwprobeUnderUmockdev = UmockdevPad.available && FileManager.default.isExecutableFile(atPath: hwprobeBinary.path)

@Suite(.serialized, .enabled(if: hwprobeUnderUmockdev, "needs umockdev and a built hwprobe"))
struct HwprobePadTests {
    static let hwprobe = hwprobeBinary

    /// The JSON object `list --json` printed (stderr lines may follow it in the same log).
    func pads(in output: String) throws -> [[String: String]] {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0 == "{" })
        let end = try #require(lines[start...].firstIndex { $0 == "}" })
        let text = lines[start...end].joined(separator: "\n")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let pads = try #require(json["hapticDevices"] as? [[String: Any]])
        return pads.map { $0.compactMapValues { $0 as? String } }
    }

    @Test(.timeLimit(.minutes(1)))
    func xbox360IsListedAndPlaysACue() throws {
        let scratch = try UmockdevPad.Scratch()
        let listed = try UmockdevPad.run("/usr/bin/umockdev-run", ["-d", UmockdevPad.xboxDevice.path, "--",
                                                                  Self.hwprobe.path, "list", "--json"], in: scratch.url)
        let pads = try pads(in: listed.output)
        #expect(pads.contains { $0["uri"] == "usb:045e:028e" && $0["driver"] == "xbox360-usb" }, "\(listed.output)")

        let pcap = try scratch.write(Data(Xbox360UmockdevTests.capture([.warning]).bytes), to: "warning.pcap")
        let played = try UmockdevPad.run("/usr/bin/umockdev-run", [
            "-d", UmockdevPad.xboxDevice.path, "-p", "\(UmockdevPad.xboxSysfsPath)=\(pcap.path)", "--",
            Self.hwprobe.path, "haptics", "--device", "usb:045e:028e", "--cue", "warning",
        ], in: scratch.url)
        #expect(!played.timedOut && played.status == 0, "\(played.output)")

        // A capture for another cue: the first report does not match, the transfer times out.
        let wrong = try scratch.write(Data(Xbox360UmockdevTests.capture([.success]).bytes), to: "success.pcap")
        let refused = try UmockdevPad.run("/usr/bin/umockdev-run", [
            "-d", UmockdevPad.xboxDevice.path, "-p", "\(UmockdevPad.xboxSysfsPath)=\(wrong.path)", "--",
            Self.hwprobe.path, "haptics", "--device", "usb:045e:028e", "--cue", "warning",
        ], in: scratch.url)
        #expect(refused.status == 3, "\(refused.output)")
    }

    /// Two identical Xbox pads (ports 1-2 and 1-4, the second with a serial number): `list` gives
    /// each an id that a replug keeps, and a cue sent to an id reaches that pad and no other
    /// (umockdev answers only the capture's device, bus 1 device 8; the other would time out).
    @Test(.timeLimit(.minutes(1)))
    func identicalPadsAreNamedByPortAndSerial() throws {
        let scratch = try UmockdevPad.Scratch()
        let first = try String(contentsOf: UmockdevPad.xboxDevice, encoding: .utf8)
        let second = first.replacingOccurrences(of: "usb1/1-2", with: "usb1/1-4")
            .replacingOccurrences(of: "001/007", with: "001/008").replacingOccurrences(of: "DEVNUM=007", with: "DEVNUM=008")
            .replacingOccurrences(of: "A: devnum=7\\n", with: "A: devnum=8\\n\nA: serial=3B0A71C2\\n")
            .replacingOccurrences(of: "MINOR=6", with: "MINOR=7").replacingOccurrences(of: "dev=189:6", with: "dev=189:7")
        #expect(second.contains("A: serial=3B0A71C2"))
        let both = try scratch.write(Data((first + "\n" + second).utf8), to: "two-pads.umockdev")
        let listed = try UmockdevPad.run("/usr/bin/umockdev-run", ["-d", both.path, "--", Self.hwprobe.path, "list", "--json"], in: scratch.url)
        let pads = try pads(in: listed.output).filter { $0["driver"] == "xbox360-usb" }
        #expect(pads.map { $0["uri"] } == ["usb:045e:028e@1.7", "usb:045e:028e@1.8"], "\(listed.output)")
        #expect(pads.map { $0["id"] } == ["usb:045e:028e@1-2", "usb:045e:028e?serial=3B0A71C2"], "\(listed.output)")
        #expect(pads.map { $0["usbPort"] } == ["1-2", "1-4"])

        var capture = UsbmonCapture(bus: 1, device: 8)
        for command in PadCueExpectations.commands(for: .warning) {
            capture.interruptOut(endpoint: Xbox360UmockdevTests.endpoint, PadCueExpectations.xboxReport(command))
        }
        let pcap = try scratch.write(Data(capture.bytes), to: "warning-8.pcap")
        for uri in ["usb:045e:028e?serial=3B0A71C2", "usb:045e:028e@1-4"] {
            let played = try UmockdevPad.run("/usr/bin/umockdev-run", [
                "-d", both.path, "-p", "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-4=\(pcap.path)", "--",
                Self.hwprobe.path, "haptics", "--device", uri, "--cue", "warning",
            ], in: scratch.url)
            #expect(!played.timedOut && played.status == 0, "\(uri): \(played.output)")
        }
        let missing = try UmockdevPad.run("/usr/bin/umockdev-run", [
            "-d", both.path, "--", Self.hwprobe.path, "haptics", "--device", "usb:045e:028e?serial=NOPE", "--cue", "warning",
        ], in: scratch.url)
        #expect(missing.status == 3, "\(missing.output)")
        #expect(missing.output.contains("--device usb:045e:028e?serial=NOPE: no USB device 045e:028e with serial number NOPE is attached"),
                "\(missing.output)")
    }

    @Test(.timeLimit(.minutes(1)))
    func dualShock4IsListedAndPlaysACue() throws {
        let scratch = try UmockdevPad.Scratch()
        let ioctl = try scratch.write(hidrawIoctlRecord(node: "/dev/hidraw0", bus: 3, vendor: 0x054C, product: 0x09CC,
                                                        descriptor: try DualShock4UmockdevTests.descriptor()), to: "ds4.ioctl")
        let listed = try UmockdevPad.run("/usr/bin/umockdev-run", ["-d", UmockdevPad.ds4Device.path, "-i", "/dev/hidraw0=\(ioctl.path)", "--",
                                                                  Self.hwprobe.path, "list", "--json"], in: scratch.url)
        let pads = try pads(in: listed.output)
        #expect(pads.contains { $0["uri"] == "hidraw:/dev/hidraw0" && $0["driver"] == "dualshock4-hidraw" }, "\(listed.output)")

        var script = UmockdevScript()
        for report in PadCueExpectations.ds4Reports(for: [.success]) { script.expectWrite(report) }
        let scriptFile = try scratch.write(script.data, to: "ds4.script")
        let played = try UmockdevPad.run("/usr/bin/umockdev-run", [
            "-d", UmockdevPad.ds4Device.path, "-i", "/dev/hidraw0=\(ioctl.path)", "-s", "/dev/hidraw0=\(scriptFile.path)", "--",
            Self.hwprobe.path, "haptics", "--device", "hidraw:/dev/hidraw0", "--cue", "success",
        ], in: scratch.url)
        #expect(!played.timedOut && played.status == 0 && !played.signaled, "\(played.output)")

        // A script expecting another cue's reports stops the run at the first write.
        var other = UmockdevScript()
        for report in PadCueExpectations.ds4Reports(for: [.error]) { other.expectWrite(report) }
        let otherFile = try scratch.write(other.data, to: "ds4-other.script")
        let refused = try UmockdevPad.run("/usr/bin/umockdev-run", [
            "-d", UmockdevPad.ds4Device.path, "-i", "/dev/hidraw0=\(ioctl.path)", "-s", "/dev/hidraw0=\(otherFile.path)", "--",
            Self.hwprobe.path, "haptics", "--device", "hidraw:/dev/hidraw0", "--cue", "success",
        ], in: scratch.url)
        #expect(refused.signaled || refused.status != 0, "\(refused.output)")
    }
}
