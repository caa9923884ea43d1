import Foundation
import HAL
import Testing

/// The real hidraw path of the DualShock 4 driver against a umockdev-emulated pad on USB
/// (Tests/Fixtures/umockdev/dualshock4-usb.umockdev, identity and report descriptor replayed
/// from an `.ioctl` record written here). pad-probe opens it and plays cues on a 20× clock.
///
/// How the bytes are proven: a umockdev script lists, as `w` lines, the output report of every
/// command in order, worked out from the pattern table and hid-sony's layout; a write that
/// differs kills umockdev-run (SIGTRAP). After the last `w` line the script sends one input
/// report, which pad-probe waits for (5 s at most): it arrives only once every report before it
/// matched. The command count rules out extra reports.
@Suite(.serialized, .enabled(if: UmockdevPad.available, "needs umockdev-run, umockdev-wrapper, /usr/bin/python3 with gi and a built pad-probe"))
struct DualShock4UmockdevTests {
    /// A pad at rest: sticks centred, d-pad released (8), no buttons.
    static let inputReport: [UInt8] = [0x01, 0x80, 0x80, 0x80, 0x80, 0x08] + [UInt8](repeating: 0, count: 58)

    static func descriptor() throws -> [UInt8] {
        hexBytes(try String(contentsOf: UmockdevPad.ds4ReportDescriptor, encoding: .utf8))
    }

    func play(_ cues: [HapticCue], expecting reports: [[UInt8]], in scratch: UmockdevPad.Scratch) throws -> UmockdevPad.Run {
        let ioctl = try scratch.write(hidrawIoctlRecord(node: "/dev/hidraw0", bus: 3, vendor: 0x054C, product: 0x09CC,
                                                        descriptor: try Self.descriptor()), to: "ds4.ioctl")
        var script = UmockdevScript()
        for report in reports { script.expectWrite(report) }
        script.send(Self.inputReport)
        let scriptFile = try scratch.write(script.data, to: "ds4.script")
        return try UmockdevPad.run("/usr/bin/umockdev-run", [
            "-d", UmockdevPad.ds4Device.path, "-i", "/dev/hidraw0=\(ioctl.path)", "-s", "/dev/hidraw0=\(scriptFile.path)", "--",
            UmockdevPad.probe.path, "hidraw:/dev/hidraw0", "--cues", cues.map(\.rawValue).joined(separator: ","),
            "--await-input-report",
        ], in: scratch.url)
    }

    @Test(.timeLimit(.minutes(1)))
    func everyCueWritesTheDocumentedReports() throws {
        let scratch = try UmockdevPad.Scratch()
        let cues = HapticCue.allCases
        let reports = PadCueExpectations.ds4Reports(for: cues)
        let run = try play(cues, expecting: reports, in: scratch)
        #expect(!run.timedOut && run.status == 0, "\(run.output)")
        for cue in cues {
            #expect(run.lines.contains("played \(cue)"), "\(run.output)")
        }
        #expect(run.lines.contains("commands \(reports.count)"), "\(run.output)")
        #expect(run.lines.contains("input-report " + Self.inputReport.map { String(format: "%02x", $0) }.joined()), "\(run.output)")
    }

    /// The check must be able to fail: a script expecting the motors swapped (strong in the
    /// right motor's byte) stops umockdev at the first rumble.
    @Test(.timeLimit(.minutes(1)))
    func aReportThatDiffersFromTheScriptFails() throws {
        let scratch = try UmockdevPad.Scratch()
        var reports = PadCueExpectations.ds4Reports(for: [.error])
        reports[1].swapAt(4, 5)
        reports[1][4] = reports[1][4] &+ 1
        let run = try play([.error], expecting: reports, in: scratch)
        #expect(run.signaled && run.status == SIGTRAP, "\(run.output)")
        #expect(run.output.contains("data mismatch"), "\(run.output)")
        #expect(!run.lines.contains { $0.hasPrefix("input-report") }, "\(run.output)")
    }

    /// The pad is removed from the testbed between two reports of a cue, and the node answers
    /// ENODEV from then on, as hidraw does after an unplug: `.disappeared` once, later cues return
    /// at once, nothing hangs.
    @Test(.timeLimit(.minutes(1)))
    func unplugDuringACueIsReportedOnce() throws {
        let scratch = try UmockdevPad.Scratch()
        let run = try UmockdevPad.run("/usr/bin/umockdev-wrapper", [
            "/usr/bin/python3", UmockdevPad.testbed.path, UmockdevPad.ds4Device.path,
            "--hidraw", "/dev/hidraw0=3:054c:09cc:\(UmockdevPad.ds4ReportDescriptor.path)", "--",
            UmockdevPad.probe.path, "hidraw:/dev/hidraw0", "--cues", "error,success,warning", "--unplug-after", "2",
        ], in: scratch.url)
        #expect(!run.timedOut && run.status == 0, "\(run.output)")
        let written = run.lines.filter { $0.hasPrefix("hidraw-write ") }.map { hexBytes(String($0.dropFirst(13))) }
        #expect(written == Array(PadCueExpectations.ds4Reports(for: [.error]).prefix(2)), "\(run.output)")
        #expect(run.lines.contains("unplugged"), "\(run.output)")
        #expect(run.lines.filter { $0.contains("disappeared") }.count == 1, "\(run.output)")
        #expect(run.lines.contains("failed error: haptic device hidraw:/dev/hidraw0 disappeared: carrying on without haptics"), "\(run.output)")
        #expect(run.lines.contains("played success") && run.lines.contains("played warning") && run.lines.contains("gone true"), "\(run.output)")
    }

    struct Identity: Sendable, CustomTestStringConvertible {
        var bus: UInt32, vendor: UInt16, product: UInt16
        var descriptor: [UInt8]?
        /// nil: opens; otherwise part of the refusal.
        var refusal: String?
        var testDescription: String { refusal ?? "\(String(vendor, radix: 16)):\(String(product, radix: 16)) opens" }
    }

    static let identities: [Identity] = [
        Identity(bus: 3, vendor: 0x054C, product: 0x05C4, refusal: nil),
        Identity(bus: 3, vendor: 0x054C, product: 0x09CC, refusal: nil),
        Identity(bus: 3, vendor: 0x046D, product: 0xC52B, refusal: "is 046d:c52b, not a DualShock 4"),
        Identity(bus: 5, vendor: 0x054C, product: 0x09CC, refusal: "is not on USB (Bluetooth needs report 0x11 with a checksum): connect it with a cable"),
        Identity(bus: 3, vendor: 0x054C, product: 0x09CC, descriptor: [0x05, 0x01, 0x09, 0x05, 0xA1, 0x01, 0x85, 0x01, 0x09, 0x30, 0x81, 0x02, 0xC0],
                 refusal: "does not declare output report 0x05"),
    ]

    /// Both revisions open; another device, a pad on Bluetooth or a node without report 0x05 is
    /// refused before anything is written to it (the script has no `w` lines, so a write would fail).
    @Test(.timeLimit(.minutes(1)), arguments: identities)
    func onlyADualShock4OnUSBIsOpened(_ identity: Identity) throws {
        let scratch = try UmockdevPad.Scratch()
        let ioctl = try scratch.write(hidrawIoctlRecord(node: "/dev/hidraw0", bus: identity.bus, vendor: identity.vendor, product: identity.product,
                                                        descriptor: try identity.descriptor ?? Self.descriptor()), to: "pad.ioctl")
        let run = try UmockdevPad.run("/usr/bin/umockdev-run", [
            "-d", UmockdevPad.ds4Device.path, "-i", "/dev/hidraw0=\(ioctl.path)", "--",
            UmockdevPad.probe.path, "hidraw:/dev/hidraw0", "--cues", "none",
        ], in: scratch.url)
        if let refusal = identity.refusal {
            #expect(run.status == 2, "\(run.output)")
            #expect(run.output.contains(refusal), "\(run.output)")
        } else {
            #expect(run.status == 0 && run.lines.contains("closed"), "\(run.output)")
        }
    }
}
