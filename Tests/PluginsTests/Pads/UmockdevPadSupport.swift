import TestKit
import Foundation
import Synchronization

/// Files and processes for the pad tests that run pad-probe (Tests/PadProbe) inside umockdev.
enum UmockdevPad {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/umockdev")
    /// pad-probe is built next to the test bundle (`swift build --build-tests` builds every target).
    static let probe = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pad-probe")

    static let xboxDevice = fixtures.appendingPathComponent("xbox360-wired-pad.umockdev")
    static let xboxSysfsPath = "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2"
    static let ds4Device = fixtures.appendingPathComponent("dualshock4-usb.umockdev")
    static let ds4ReportDescriptor = fixtures.appendingPathComponent("dualshock4-usb-report-descriptor.hex")
    /// A Python testbed that can unplug the pad on cue or hold it with xpad (see the script).
    static let testbed = fixtures.appendingPathComponent("pad_testbed.py")

    static var available: Bool {
        ProcessInfo.processInfo.environment["UMOCKDEV_DIR"] == nil
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/umockdev-run")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/umockdev-wrapper")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
            && FileManager.default.isExecutableFile(atPath: probe.path)
    }

    struct Run {
        var status: Int32
        /// Killed by a signal (then `status` is its number): umockdev-run dies of SIGTRAP when a
        /// script's expected write does not match.
        var signaled: Bool
        var output: String
        var timedOut: Bool
        var lines: [String] { output.split(separator: "\n").map(String.init) }
    }

    /// Where the testbeds live: inside the build folder (a crashed testbed leaves its directory
    /// behind there, not in /tmp), on a short path because umockdev puts Unix sockets for the
    /// emulated nodes under it and socket paths end at 108 bytes.
    static let testbedRoot = fixtures.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".build/umd")

    /// Runs a command with stdout and stderr in one file and TMPDIR in a directory of its own
    /// under `testbedRoot`, removed afterwards (with whatever a crashed testbed left in it).
    /// Killed at `deadline`.
    static func run(_ executable: String, _ arguments: [String], in directory: URL, deadline: Duration = .seconds(60)) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        let testbeds = testbedRoot.appendingPathComponent(String(UUID().uuidString.prefix(8)))
        try FileManager.default.createDirectory(at: testbeds, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: testbeds) }
        environment["TMPDIR"] = testbeds.path
        process.environment = environment
        let log = directory.appendingPathComponent("output-\(UUID().uuidString).txt")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        let seconds = Double(deadline.components.seconds) + Double(deadline.components.attoseconds) / 1e18
        var timedOut = false
        if exited.wait(timeout: .now() + seconds) == .timedOut {
            timedOut = true
            process.terminate()
            if exited.wait(timeout: .now() + 5) == .timedOut { kill(process.processIdentifier, SIGKILL); exited.wait() }
        }
        try handle.close()
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return Run(status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal,
                   output: output, timedOut: timedOut)
    }

    /// A scratch directory inside the build folder, removed when the test ends.
    final class Scratch {
        let url: URL
        init() throws {
            url = probe.deletingLastPathComponent().appendingPathComponent("pad-tests/\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(at: url) }
        func write(_ data: Data, to name: String) throws -> URL {
            let file = url.appendingPathComponent(name)
            try data.write(to: file)
            return file
        }
    }
}

/// A usbmon capture in pcap form (LINKTYPE_USB_LINUX_MMAPPED, 220), the format umockdev replays
/// with `-p SYSPATH=FILE`: for each interrupt OUT transfer a submit event carrying the bytes and
/// a completion event with its status. umockdev hands the client a transfer's completion only
/// when the client submitted exactly the recorded bytes, in the recorded order.
struct UsbmonCapture {
    var bus: UInt16
    var device: UInt8
    private var records: [[UInt8]] = []
    private var next: UInt64 = 1

    init(bus: UInt16, device: UInt8) {
        self.bus = bus
        self.device = device
    }

    /// `status` 0 is success; -108 (ESHUTDOWN) is what usbmon shows for a transfer in flight
    /// when its device is unplugged.
    mutating func interruptOut(endpoint: UInt8, _ data: [UInt8], status: Int32 = 0) {
        let id = 0xFFFF_8880_0000_0000 + next * 0x100
        let microseconds = next * 2000
        next += 1
        // Submit: status -EINPROGRESS, length and captured length are the data's, data follows.
        records.append(header(id: id, event: "S", endpoint: endpoint, time: microseconds, status: -115,
                              length: UInt32(data.count), captured: UInt32(data.count), dataFlag: 0) + data)
        // Completion: the length the device took (none when it failed), no data for an OUT transfer.
        records.append(header(id: id, event: "C", endpoint: endpoint, time: microseconds + 500, status: status,
                              length: status == 0 ? UInt32(data.count) : 0, captured: 0, dataFlag: UInt8(ascii: ">")))
    }

    var bytes: [UInt8] {
        var out: [UInt8] = []
        out += le(UInt32(0xA1B2_C3D4)) + le(UInt16(2)) + le(UInt16(4)) + le(UInt32(0)) + le(UInt32(0))
            + le(UInt32(65535)) + le(UInt32(220))
        for (index, record) in records.enumerated() {
            out += le(UInt32(1 + index / 1000)) + le(UInt32(index * 1000 % 1_000_000))
                + le(UInt32(record.count)) + le(UInt32(record.count)) + record
        }
        return out
    }

    /// The 64-byte `usbmon_packet` header of Documentation/usb/usbmon.rst.
    private func header(id: UInt64, event: Character, endpoint: UInt8, time: UInt64, status: Int32,
                        length: UInt32, captured: UInt32, dataFlag: UInt8) -> [UInt8] {
        var h: [UInt8] = le(id)
        h += [UInt8(ascii: event.unicodeScalars.first ?? "S"), 0x01 /* interrupt */, endpoint, device]
        h += le(bus)
        h += [UInt8(ascii: "-") /* no setup packet */, dataFlag]
        h += le(Int64(time / 1_000_000)) + le(Int32(time % 1_000_000)) + le(status) + le(length) + le(captured)
        h += [UInt8](repeating: 0, count: 8) // setup
        h += le(Int32(8)) /* interval */ + le(Int32(0)) + le(UInt32(0)) + le(UInt32(0))
        return h
    }
}

/// A umockdev script: `w` lines the client must write byte for byte, `r` lines umockdev sends.
struct UmockdevScript {
    private var lines: [[UInt8]] = []

    mutating func expectWrite(_ bytes: [UInt8]) { lines.append(Array("w 0 ".utf8) + Self.escape(bytes)) }
    mutating func send(_ bytes: [UInt8]) { lines.append(Array("r 0 ".utf8) + Self.escape(bytes)) }

    var data: Data { Data(lines.flatMap { $0 + [0x0A] }) }

    /// Bytes up to 32 become `^` + (b + 64); `^` itself is "^`" (script-format.txt).
    static func escape(_ bytes: [UInt8]) -> [UInt8] {
        bytes.flatMap { b -> [UInt8] in
            if b < 32 { return [UInt8(ascii: "^"), b + 64] }
            if b == UInt8(ascii: "^") { return [UInt8(ascii: "^"), UInt8(ascii: "`")] }
            return [b]
        }
    }
}

/// An umockdev `.ioctl` record for a hidraw node: HIDIOCGRAWINFO, HIDIOCGRDESCSIZE and
/// HIDIOCGRDESC (whose payload is the whole 4100-byte `hidraw_report_descriptor`).
func hidrawIoctlRecord(node: String, bus: UInt32, vendor: UInt16, product: UInt16, descriptor: [UInt8]) -> Data {
    func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02X", $0) }.joined() }
    let payload = le(UInt32(descriptor.count)) + descriptor + [UInt8](repeating: 0, count: 4096 - descriptor.count)
    precondition(payload.count == 4100)
    let text = """
        @DEV \(node)
        HIDIOCGRAWINFO 0 \(hex(le(bus) + le(vendor) + le(product)))
        HIDIOCGRDESCSIZE 0 \(hex(le(UInt32(descriptor.count))))
        HIDIOCGRDESC 0 \(hex(payload))

        """
    return Data(text.utf8)
}

func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    withUnsafeBytes(of: value.littleEndian) { Array($0) }
}

func hexBytes(_ text: String) -> [UInt8] { bytes(hex: text) }
