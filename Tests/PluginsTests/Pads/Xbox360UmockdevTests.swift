import Foundation
import HAL
import Testing

/// The real libusb path of the Xbox 360 driver against a umockdev-emulated wired pad
/// (Tests/Fixtures/umockdev/xbox360-wired-pad.umockdev: device and configuration descriptors
/// with interface 0 = ff/5d/01, interrupt IN 0x81 and OUT 0x02, and a headset interface whose
/// OUT endpoint 0x04 must not be picked). pad-probe opens it and plays cues on a 20× clock.
///
/// How the bytes are proven: the test writes a usbmon pcap holding exactly the reports the
/// pattern table and the documented format call for. umockdev completes a transfer only when
/// it carries the next recorded bytes; any other payload stalls until the 300 ms libusb timeout
/// and the cue fails. So "every cue played" plus "as many commands as reports in the capture"
/// means every report matched, in order, and none was left over.
@Suite(.serialized, .enabled(if: UmockdevPad.available, "needs umockdev-run, umockdev-wrapper, /usr/bin/python3 with gi and a built pad-probe"))
struct Xbox360UmockdevTests {
    static let endpoint: UInt8 = 0x02

    static func capture(_ cues: [HapticCue]) -> UsbmonCapture {
        var capture = UsbmonCapture(bus: 1, device: 7)
        for command in cues.flatMap(PadCueExpectations.commands(for:)) {
            capture.interruptOut(endpoint: endpoint, PadCueExpectations.xboxReport(command))
        }
        return capture
    }

    func playUnderUmockdev(_ capture: UsbmonCapture, cues: String, uri: String = "usb:045e:028e",
                           in scratch: UmockdevPad.Scratch) throws -> UmockdevPad.Run {
        let pcap = try scratch.write(Data(capture.bytes), to: "xbox360.pcap")
        return try UmockdevPad.run("/usr/bin/umockdev-run", [
            "-d", UmockdevPad.xboxDevice.path, "-p", "\(UmockdevPad.xboxSysfsPath)=\(pcap.path)", "--",
            UmockdevPad.probe.path, uri, "--cues", cues,
        ], in: scratch.url)
    }

    /// `@BUS.ADDR` picks that pad; an address where there is none is not quietly replaced by another pad.
    @Test(.timeLimit(.minutes(1)), arguments: [("usb:045e:028e@1.7", true), ("usb:045e:028e@1.8", false)])
    func aLocatedURIOpensOnlyThatPad(uri: String, present: Bool) throws {
        let scratch = try UmockdevPad.Scratch()
        let run = try playUnderUmockdev(Self.capture([.selection]), cues: "selection", uri: uri, in: scratch)
        if present {
            #expect(run.status == 0 && run.lines.contains("played selection"), "\(run.output)")
        } else {
            #expect(run.status == 2, "\(run.output)")
            #expect(run.output.contains("no Xbox 360 pad usb:045e:028e@1.8 is attached"), "\(run.output)")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func everyCueSendsTheDocumentedReports() throws {
        let scratch = try UmockdevPad.Scratch()
        let cues = HapticCue.allCases
        let expected = cues.flatMap(PadCueExpectations.commands(for:)).count
        let run = try playUnderUmockdev(Self.capture(cues), cues: "all", in: scratch)
        #expect(!run.timedOut && run.status == 0, "\(run.output)")
        for cue in cues {
            #expect(run.lines.contains("played \(cue)"), "\(cue) did not play cleanly:\n\(run.output)")
        }
        #expect(run.lines.contains("commands \(expected)"), "\(run.output)")
        #expect(run.lines.contains("gone false"))
    }

    /// The check itself must be able to fail: one wrong byte in the capture (error's ring
    /// animation) stalls that report, and the cue says so.
    @Test(.timeLimit(.minutes(1)))
    func aReportThatDiffersFromTheCaptureFails() throws {
        let scratch = try UmockdevPad.Scratch()
        var capture = UsbmonCapture(bus: 1, device: 7)
        capture.interruptOut(endpoint: Self.endpoint, [0x01, 0x03, 0x0A]) // rotating: success's, not error's
        let run = try playUnderUmockdev(capture, cues: "error", in: scratch)
        #expect(!run.timedOut, "\(run.output)")
        #expect(run.lines.contains { $0.hasPrefix("failed error: haptic I/O failed") }, "\(run.output)")
        #expect(run.lines.contains("commands 0"), "\(run.output)")
    }

    /// The device reports the unplug the way usbmon shows it: the transfer in flight completes
    /// with -ESHUTDOWN. The cue stops there, reports `.disappeared` once, and later cues return
    /// at once without touching the pad.
    @Test(.timeLimit(.minutes(1)))
    func unplugDuringACueIsReportedOnce() throws {
        let scratch = try UmockdevPad.Scratch()
        var capture = UsbmonCapture(bus: 1, device: 7)
        let error = PadCueExpectations.commands(for: .error).map(PadCueExpectations.xboxReport)
        capture.interruptOut(endpoint: Self.endpoint, error[0])
        capture.interruptOut(endpoint: Self.endpoint, error[1])
        capture.interruptOut(endpoint: Self.endpoint, error[2], status: -108)
        let run = try playUnderUmockdev(capture, cues: "error,success,warning", in: scratch)
        #expect(!run.timedOut && run.status == 0, "\(run.output)")
        #expect(run.lines.filter { $0.contains("disappeared") }.count == 1, "\(run.output)")
        #expect(run.lines.contains("failed error: haptic device usb:045e:028e@1.7 disappeared: carrying on without haptics"), "\(run.output)")
        #expect(run.lines.contains("played success") && run.lines.contains("played warning"), "\(run.output)")
        #expect(run.lines.contains("commands 2") && run.lines.contains("gone true"), "\(run.output)")
    }

    /// The pad is removed from the testbed (sysfs entry, device node, remove uevent) between two
    /// commands of a cue; the capture has nothing more for it. The next report is not taken, the
    /// node is gone, so the driver reports `.disappeared` (once) within the transfer timeout.
    @Test(.timeLimit(.minutes(1)))
    func padRemovedFromTheTestbedMidCue() throws {
        let scratch = try UmockdevPad.Scratch()
        var capture = UsbmonCapture(bus: 1, device: 7)
        for report in PadCueExpectations.commands(for: .error).prefix(2).map(PadCueExpectations.xboxReport) {
            capture.interruptOut(endpoint: Self.endpoint, report)
        }
        let pcap = try scratch.write(Data(capture.bytes), to: "xbox360.pcap")
        let run = try UmockdevPad.run("/usr/bin/umockdev-wrapper", [
            "/usr/bin/python3", UmockdevPad.testbed.path, UmockdevPad.xboxDevice.path,
            "--pcap", "\(UmockdevPad.xboxSysfsPath)=\(pcap.path)", "--",
            UmockdevPad.probe.path, "usb:045e:028e", "--cues", "error,success", "--unplug-after", "2",
        ], in: scratch.url)
        #expect(!run.timedOut && run.status == 0, "\(run.output)")
        #expect(run.lines.contains("unplugged"), "\(run.output)")
        #expect(run.lines.filter { $0.contains("disappeared") }.count == 1, "\(run.output)")
        #expect(run.lines.contains("played success") && run.lines.contains("gone true"), "\(run.output)")
    }

    func withXpad(_ state: String, probe arguments: [String], in scratch: UmockdevPad.Scratch) throws -> UmockdevPad.Run {
        try UmockdevPad.run("/usr/bin/umockdev-wrapper", [
            "/usr/bin/python3", UmockdevPad.testbed.path, UmockdevPad.xboxDevice.path,
            "--xpad", "/dev/bus/usb/001/007=\(state)", "--", UmockdevPad.probe.path, "usb:045e:028e", "--cues", "none",
        ] + arguments, in: scratch.url)
    }

    /// While xpad holds the pad, opening it says who holds it and the two ways out.
    @Test(.timeLimit(.minutes(1)))
    func xpadHoldingThePadIsNamedWithTheWayOut() throws {
        let scratch = try UmockdevPad.Scratch()
        let run = try withXpad("bound", probe: [], in: scratch)
        #expect(run.status == 2, "\(run.output)")
        #expect(run.lines.contains("open failed: the kernel's xpad driver holds this pad: use evdev:/dev/input/eventN (hwprobe list shows it) or pass --detach-kernel-driver"), "\(run.output)")
        #expect(!run.lines.contains("xpad detached from interface 0"), "\(run.output)")
    }

    /// With the opt-in, the pad is taken from xpad before the claim and given back on close.
    @Test(.timeLimit(.minutes(1)))
    func detachingTakesThePadFromXpadAndGivesItBack() throws {
        let scratch = try UmockdevPad.Scratch()
        let run = try withXpad("bound", probe: ["--detach-kernel-driver"], in: scratch)
        #expect(run.status == 0, "\(run.output)")
        let steps = run.lines.filter { $0.hasPrefix("xpad ") || $0.hasPrefix("usbfs claim") || $0 == "usbfs release" }
        #expect(steps == ["xpad detached from interface 0", "usbfs claim", "usbfs release", "xpad reattached to interface 0"], "\(run.output)")
    }

    /// A pad nobody holds is claimed as it is; nothing is detached or reattached.
    @Test(.timeLimit(.minutes(1)))
    func aFreePadIsClaimedWithoutDetaching() throws {
        let scratch = try UmockdevPad.Scratch()
        let run = try withXpad("free", probe: ["--detach-kernel-driver"], in: scratch)
        #expect(run.status == 0, "\(run.output)")
        #expect(run.lines.contains("usbfs claim") && run.lines.contains("closed"), "\(run.output)")
        #expect(!run.lines.contains { $0.hasPrefix("xpad ") }, "\(run.output)")
    }

    @Test(.timeLimit(.minutes(1)))
    func aMissingPadSaysSo() throws {
        let scratch = try UmockdevPad.Scratch()
        let run = try UmockdevPad.run("/usr/bin/umockdev-run", [
            "-d", UmockdevPad.ds4Device.path, "--", UmockdevPad.probe.path, "usb:045e:028e",
        ], in: scratch.url)
        #expect(run.status == 2, "\(run.output)")
        #expect(run.output.contains("no Xbox 360 pad usb:045e:028e is attached"), "\(run.output)")
    }
}
