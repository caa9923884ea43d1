import HAL
import Testing
@testable import Transports

/// The cassette's text form: what the writer writes reads back the same, in a fixed order, and
/// the reader refuses what is not a cassette of this version, or is damaged, saying where.
@Suite struct CassetteFormatTests {
    static let scale = BLEAddress(string: "D4:12:3A:00:18:1D")!
    static let mirror = BLEAddress(string: "C0:FF:EE:00:4F:2A", defaultKind: .random)!

    static var sample: BLECassette {
        var scale = BLECassette.Peripheral(address: Self.scale)
        scale.advertising = [
            .init(at: .milliseconds(250), kind: .connectable, rssi: -61, data: [0x02, 0x01, 0x06, 0x03, 0x03, 0x1D, 0x18]),
            .init(at: .milliseconds(251), kind: .scanResponse, rssi: -61, data: []),
        ]
        scale.connections = [BLECassette.Connection(at: .seconds(1), att: [
            .init(at: .microseconds(10), direction: .toPeripheral, pdu: [0x02, 0xF7, 0x00]),
            .init(at: .microseconds(1_510), direction: .fromPeripheral, pdu: [0x03, 0xF7, 0x00]),
            .init(at: .milliseconds(3), direction: .toPeripheral, pdu: [0x12, 0x0A, 0x00, 0x02, 0x00]),
            .init(at: .milliseconds(4), direction: .fromPeripheral, pdu: [0x13]),
            .init(at: .milliseconds(300), direction: .fromPeripheral, pdu: [0x1D, 0x09, 0x00, 0x02, 0x1A, 0x3F]),
        ], end: .init(at: .milliseconds(900), byHost: true, reason: 0x16))]
        scale.varying = [0x000A]
        let mirror = BLECassette.Peripheral(address: Self.mirror, advertising: [
            .init(at: .milliseconds(150), kind: .extended, rssi: -40, data: Array(repeating: 0xAB, count: 200)),
        ])
        // Out of address order on purpose: the writer sorts.
        return BLECassette(peripherals: [scale, mirror])
    }

    @Test func whatIsWrittenReadsBackTheSameWithPeripheralsInAddressOrder() throws {
        let text = CassetteFormat.text(of: Self.sample)
        let read = try CassetteReader.read(Array(text.utf8))
        #expect(read.peripherals.map(\.address) == [Self.mirror, Self.scale])
        #expect(read.peripheral(Self.scale) == Self.sample.peripheral(Self.scale))
        #expect(read.peripheral(Self.mirror) == Self.sample.peripheral(Self.mirror))
        // Writing what was read gives the same bytes: the order is the format's, not the input's.
        #expect(CassetteFormat.text(of: read) == text)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first == "hwprobe-cassette 1.1")
        #expect(lines.contains("device ble D4:12:3A:00:18:1D public"))
        #expect(lines.contains("device ble C0:FF:EE:00:4F:2A random"))
        #expect(lines.contains("adv 0.250000 ind -61 0201060303" + "1d18"))
        #expect(lines.contains("adv 0.251000 scan-rsp -61 -"))
        #expect(lines.contains("att 0.001510 < 03f700"))
        #expect(lines.contains("disconnect 0.900000 host 0x16"))
        #expect(lines.contains("varying 0x000a"))
        #expect(lines.last == "end \(lines.count - 3)", "every record but the header, the comment and end itself")
    }

    func refusal(_ text: String) -> CassetteError? {
        do {
            _ = try CassetteReader.read(Array(text.utf8))
            return nil
        } catch {
            return error
        }
    }

    func cassette(_ records: [String]) -> String {
        (["hwprobe-cassette 1.0"] + records + ["end \(records.count)"]).joined(separator: "\n") + "\n"
    }

    @Test func aNewerMajorVersionIsRefusedWithWhatToDo() {
        let error = refusal("hwprobe-cassette 2.0\nend 0\n")
        #expect(error == .newerVersion(found: "2.0"))
        #expect(error?.description.contains("use a newer hwprobe") == true)
    }

    @Test func aNewerMinorVersionIsReadSkippingWhatItAdded() throws {
        let text = """
            hwprobe-cassette 1.7
            device ble D4:12:3A:00:18:1D public
            adv 0.100000 ind -50 020106
            sparkle 0.100000 something new
            device hologram 3d:0 whatever
            frame 0.000000 y4m
            device ble C0:FF:EE:00:4F:2A random
            end 6

            """
        let read = try CassetteReader.read(Array(text.utf8))
        #expect(read.peripherals.map(\.address) == [Self.scale, Self.mirror])
        #expect(read.peripherals[0].advertising.count == 1)
        // In a 1.0 file the same unknown record is damage.
        #expect(refusal(cassette(["device ble D4:12:3A:00:18:1D public", "sparkle 0.100000"]))
                == .damaged(line: 3, expected: "a record (device, resolved, adv, connection, att, disconnect, pairing, pairing-failed, encrypted, varying, service, characteristic, descriptor, value or end)",
                            found: "sparkle 0.100000"))
    }

    /// `resolved` (1.3) is read under a resolvable private address only, once, with a public or
    /// static random identity; in an older file it is damage, and a file without it keeps its
    /// older header.
    @Test func aResolvedLineIsCheckedAndOnlyInA13File() throws {
        func file(_ minor: Int, _ device: String, _ lines: [String]) -> String {
            (["hwprobe-cassette 1.\(minor)", "device ble \(device)"] + lines + ["end \(lines.count + 1)"]).joined(separator: "\n") + "\n"
        }
        let read = try CassetteReader.read(Array(file(3, "4A:11:22:33:44:55 random", ["resolved D4:12:3A:00:18:99 public"]).utf8))
        #expect(read.peripherals.first?.identity == BLEAddress(string: "D4:12:3A:00:18:99"))
        let wanted = "`resolved AA:BB:CC:DD:EE:FF public|random` (a public or static random identity address)"
        #expect(refusal(file(3, "4A:11:22:33:44:55 random", ["resolved 4B:00:00:00:00:01 random"]))
                == .damaged(line: 3, expected: wanted, found: "resolved 4B:00:00:00:00:01 random"))
        #expect(refusal(file(3, "D4:12:3A:00:18:1D public", ["resolved C0:00:00:00:00:01 random"]))
                == .damaged(line: 3, expected: "`resolved` only under a device with a resolvable private address", found: "resolved C0:00:00:00:00:01 random"))
        #expect(refusal(file(3, "4A:11:22:33:44:55 random", ["resolved D4:12:3A:00:18:99 public", "resolved D4:12:3A:00:18:99 public"]))
                == .damaged(line: 4, expected: "one `resolved` line per device", found: "resolved D4:12:3A:00:18:99 public"))
        #expect(refusal(file(2, "4A:11:22:33:44:55 random", ["resolved D4:12:3A:00:18:99 public"])) != nil)
        #expect(CassetteFormat.text(of: Self.sample).hasPrefix("hwprobe-cassette 1.1\n"))
    }

    @Test func somethingElseIsNotACassette() {
        #expect(refusal("btsnoop\0\0\0") == .notACassette(found: "btsnoop\0\0\0"))
        #expect(refusal("") == .notACassette(found: ""))
        #expect(refusal("hwprobe-cassette one\nend 0\n") == .damaged(line: 1, expected: "a version MAJOR.MINOR such as 1.3",
                                                                   found: "hwprobe-cassette one"))
    }

    @Test func aFileCutShortIsCaughtByItsMissingEndLine() {
        let text = CassetteFormat.text(of: Self.sample)
        let lines = text.split(separator: "\n")
        let cut = lines.dropLast(3).joined(separator: "\n") + "\n"
        #expect(refusal(cut) == .cutShort(lines: lines.count - 3))
        #expect(refusal(cut)?.description.contains("cut short after line \(lines.count - 3)") == true)
        // A record taken out of the middle: the count no longer adds up.
        var missing = lines.map(String.init)
        missing.remove(at: 5)
        let error = refusal(missing.joined(separator: "\n"))
        guard case .damaged(let line, let expected, _) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(line == missing.count)
        #expect(expected.contains("some are missing"))
    }

    @Test(arguments: [
        ("adv 0.100000 ind -50 02010", "advertising data in hex, two digits a byte (found an odd number of digits)"),
        ("adv 0.100000 ind -50 0201XY", "advertising data in lower-case hex (0-9, a-f)"),
        ("adv 0.100000 ind -50 02010G", "advertising data in lower-case hex (0-9, a-f)"),
        ("adv 0.100000 ind -50 " + String(repeating: "00", count: 32), "advertising data of at most 31 bytes (found 32)"),
        ("adv 0.1 ind -50 020106", "a time in seconds with six decimals, such as 1.250000"),
        ("adv -0.100000 ind -50 020106", "a time in seconds with six decimals, such as 1.250000"),
        ("adv 86400.000000 ind -50 020106", "a time below 86400 seconds (a day)"),
        ("adv 0.100000 ind -129 020106", "an RSSI in dBm from -128 to 127"),
        ("adv 0.100000 loud -50 020106", "an advertising kind (ind, direct-ind, scan-ind, nonconn-ind, scan-rsp, ext, ext-nonconn)"),
        ("adv 0.100000  ind -50 020106", "words separated by single spaces"),
        ("adv 0.100000\tind -50 020106", "printable ASCII (a record line has no tabs, control characters or UTF-8)"),
        ("att 0.100000 > 0a0300", "a `connection` line before its `att` and `disconnect` records"),
    ])
    func aDamagedLineIsNamedWithWhatWasExpected(line: String, expected: String) {
        let text = cassette(["device ble D4:12:3A:00:18:1D public", line])
        #expect(refusal(text) == .damaged(line: 3, expected: expected, found: line))
    }

    @Test func sizesFromOutsideAreCheckedBeforeTheyAreTrusted() {
        let tooLongPDU = "att 0.000000 > 0b" + String(repeating: "00", count: 517)
        #expect(refusal(cassette(["device ble D4:12:3A:00:18:1D public", "connection 0.000000", tooLongPDU]))
                == .damaged(line: 4, expected: "an ATT PDU of at most 517 bytes (found 518)", found: tooLongPDU))
        let longLine = "# " + String(repeating: "x", count: 5000)
        #expect(refusal(cassette([longLine])) == .damaged(line: 2, expected: "a line of at most 4096 characters", found: "a line of 5002"))
        let huge = [UInt8](repeating: 0x23, count: CassetteFormat.maximumBytes + 1)
        #expect(refusal(String(decoding: huge, as: UTF8.self)) == .tooLarge(bytes: huge.count, limit: CassetteFormat.maximumBytes))
        #expect(refusal(cassette(["device ble D4:12:3A:00:18:1D public", "device ble D4:12:3A:00:18:1D public"]))
                == .damaged(line: 3, expected: "each device once (D4:12:3A:00:18:1D public came before)", found: "device ble D4:12:3A:00:18:1D public"))
    }

    @Test func timesThatRunBackwardsAreDamage() {
        let records = ["device ble D4:12:3A:00:18:1D public", "connection 1.000000", "att 0.200000 > 0a0300", "att 0.100000 < 0b00"]
        #expect(refusal(cassette(records)) == .damaged(line: 5, expected: "times that do not run backwards (the last `att` was at 0.200000)",
                                                       found: "att 0.100000 < 0b00"))
    }
}
