import Foundation
import HAL
import Testing
@testable import Transports
@testable import hwprobe
import MirrorV1

/// `gatt`'s IDs, values, limits and checks, without a device: everything here is decided before a
/// controller opens or before the first read.
@Suite struct GattRequestTests {
    static let scanState = BluetoothUUID(high: 0x7B9E_0005_3C2A_4F1B, low: 0x9E6D_5A4C_3B2A_1F00)

    func failure(_ body: () throws(CLIFailure) -> Void) -> CLIFailure? {
        do { try body() } catch { return error }
        return nil
    }

    @Test func anIDIsAUUIDOrAValueHandle() throws {
        #expect(try CharacteristicID.parse("2A9D", option: "--read") == .uuid(BluetoothUUID(0x2A9D)))
        #expect(try CharacteristicID.parse("2a9d", option: "--read") == .uuid(BluetoothUUID(0x2A9D)))
        #expect(try CharacteristicID.parse("7B9E0005-3C2A-4F1B-9E6D-5A4C3B2A1F00", option: "--read") == .uuid(Self.scanState))
        #expect(try CharacteristicID.parse("7b9e0005-3c2a-4f1b-9e6d-5a4c3b2a1f00", option: "--read") == .uuid(Self.scanState))
        #expect(try CharacteristicID.parse("00002A19-0000-1000-8000-00805F9B34FB", option: "--read") == .uuid(BluetoothUUID(0x2A19)))
        #expect(try CharacteristicID.parse("22", option: "--read") == .handle(22))
        #expect(try CharacteristicID.parse("0x0016", option: "--read") == .handle(22))
        #expect(try CharacteristicID.parse("0X16", option: "--read") == .handle(22))
        #expect(try CharacteristicID.parse("65535", option: "--read") == .handle(0xFFFF))
        #expect(try CharacteristicID.parse("0xFFFF", option: "--read") == .handle(0xFFFF))
        // Digits alone are a handle, as the contract has it, even when they could spell a UUID.
        #expect(try CharacteristicID.parse("1800", option: "--read") == .handle(1800))
    }

    @Test func aBadIDSaysWhatAnIDIs() {
        let cases: [(String, String)] = [
            ("0", "decimal handle runs from 1 to 65535"), ("65536", "decimal handle runs from 1 to 65535"),
            ("0x0000", "handle 0 is not a handle"), ("0x10000", "0x and one to four hex digits"), ("0x", "0x and one to four hex digits"),
            ("0xG1", "0x and one to four hex digits"), ("2A9", "not a characteristic UUID"), ("2A9DX", "not a characteristic UUID"),
            ("0000180F", "not a characteristic UUID"), ("7B9E00053C2A4F1B9E6D5A4C3B2A1F00", "not a characteristic UUID"),
            ("battery", "not a characteristic UUID"), ("", "not a characteristic UUID"), ("-1", "not a characteristic UUID"),
        ]
        for (text, reason) in cases {
            let error = failure { () throws(CLIFailure) in _ = try CharacteristicID.parse(text, option: "--read") }
            #expect(error?.kind == .usage, "\(text)")
            #expect(error?.message.hasPrefix("--read \(text): ") == true, "\(text): \(error?.message ?? "parsed")")
            #expect(error?.message.contains(reason) == true, "\(text): \(error?.message ?? "parsed")")
        }
        let message = failure { () throws(CLIFailure) in _ = try CharacteristicID.parse("2A9", option: "--subscribe") }?.message
        #expect(message == "--subscribe 2A9: not " + CharacteristicID.forms)
    }

    @Test func hexIsTwoDigitsAByteInEitherCaseWithOptionalSeparators() throws {
        #expect(try HexValue.parse("0100", option: "--write", id: "x") == [0x01, 0x00])
        #expect(try HexValue.parse("DEADbeef", option: "--write", id: "x") == [0xDE, 0xAD, 0xBE, 0xEF])
        #expect(try HexValue.parse("01:02:ff", option: "--write", id: "x") == [0x01, 0x02, 0xFF])
        #expect(try HexValue.parse("01 02", option: "--write", id: "x") == [0x01, 0x02])
        #expect(try HexValue.parse("0x0a0b", option: "--write", id: "x") == [0x0A, 0x0B])
        #expect(try HexValue.parse(String(repeating: "ab", count: 512), option: "--write", id: "x").count == 512)
        #expect(HexValue.text([0x00, 0x0F, 0xA5, 0xFF]) == "000fa5ff")
        #expect(HexValue.text([]) == "")
    }

    @Test func badHexSaysWhatIsWrongWithIt() {
        let cases: [(String, String)] = [
            ("", "no bytes to write: give at least one, e.g. 2A06=01"), ("0x", "no bytes to write"),
            ("1", "1 hex digits: each byte is two, e.g. 01 rather than 1"), ("012", "3 hex digits"),
            ("0g", "'g' is not a hex digit"), ("01-02", "'-' is not a hex digit"),
            (String(repeating: "00", count: 513), "513 bytes: an attribute value holds at most 512"),
        ]
        for (text, reason) in cases {
            let error = failure { () throws(CLIFailure) in _ = try HexValue.parse(text, option: "--write", id: "2A06") }
            #expect(error?.kind == .usage, "\(text)")
            #expect(error?.message.hasPrefix("--write 2A06=\(text.prefix(20))") == true, "\(error?.message ?? "parsed")")
            #expect(error?.message.contains(reason) == true, "\(text): \(error?.message ?? "parsed")")
        }
    }

    func request(_ arguments: [String]) throws -> GattRequest {
        try GattRequest(try ArgumentParser.parse(["gatt", "--hci", "sim:", "AA:BB:CC:DD:EE:FF"] + arguments))
    }

    @Test func writesKeepTheOrderGivenAcrossBothOptions() throws {
        let r = try request(["--write", "2A06=01", "--write-command", "0x0010=0203", "--read", "2A19", "--write", "22=ff"])
        #expect(r.writes == [
            .init(id: .uuid(BluetoothUUID(0x2A06)), value: [0x01], withResponse: true),
            .init(id: .handle(0x10), value: [0x02, 0x03], withResponse: false),
            .init(id: .handle(22), value: [0xFF], withResponse: true),
        ])
        #expect(r.reads == [.uuid(BluetoothUUID(0x2A19))])
        #expect(!r.readAll)
        #expect(r.subscription == nil)
    }

    @Test func readsAreEachOnceAndAllIsAWordOfItsOwn() throws {
        let r = try request(["--read", "2A19", "--read", "all", "--read", "2a19", "--read", "0x12"])
        #expect(r.readAll)
        #expect(r.reads == [.uuid(BluetoothUUID(0x2A19)), .handle(0x12)])
        #expect(throws: CLIFailure.self) { try request(["--read", "ALL"]) }
    }

    @Test func aSubscriptionTakesItsLimits() throws {
        let r = try request(["--subscribe", "7B9E0005-3C2A-4F1B-9E6D-5A4C3B2A1F00", "--count", "20000", "--seconds", "2.5"])
        #expect(r.subscription == .init(id: .uuid(Self.scanState), count: 20000, seconds: 2.5))
        let cases: [([String], String)] = [
            (["--count", "5"], "--count limits a subscription: give --subscribe ID with it"),
            (["--seconds", "5"], "--seconds limits a subscription: give --subscribe ID with it"),
            (["--subscribe", "22", "--count", "0"], "--count 0: give a whole number of values from 1 to 1000000"),
            (["--subscribe", "22", "--count", "1000001"], "--count 1000001: give a whole number"),
            (["--subscribe", "22", "--count", "2.5"], "--count 2.5: give a whole number"),
            (["--subscribe", "22", "--seconds", "0"], "--seconds 0: give a number of seconds more than 0 and at most 86400"),
            (["--subscribe", "22", "--seconds", "nan"], "--seconds nan: give a number of seconds"),
            (["--subscribe", "22", "--seconds", "inf"], "--seconds inf: give a number of seconds"),
            (["--write", "2A06"], "--write 2A06: give ID=HEX, e.g. --write 2A06=01"),
            (["--write-command", "=01"], "--write-command : not a characteristic UUID"),
        ]
        for (arguments, message) in cases {
            do {
                _ = try request(arguments)
                Issue.record("\(arguments) was accepted")
            } catch let error as CLIFailure {
                #expect(error.kind == .usage)
                #expect(error.message.hasPrefix(message), "\(error.message)")
            }
        }
    }

    @Test func withJSONAndNeitherLimitASubscriptionLastsTenSeconds() {
        #expect(GattSubscriber.timeLimit(count: nil, seconds: nil, json: true) == 10)
        #expect(GattSubscriber.timeLimit(count: 5, seconds: nil, json: true) == nil, "--count alone: until the count")
        #expect(GattSubscriber.timeLimit(count: nil, seconds: 2, json: true) == 2)
        #expect(GattSubscriber.timeLimit(count: nil, seconds: nil, json: false) == nil, "text: until Ctrl-C")
        #expect(GattSubscriber.keepLimit(count: nil, json: true) == SubscriptionRecord.jsonCap)
        #expect(GattSubscriber.keepLimit(count: 20000, json: true) == 20000)
        #expect(GattSubscriber.keepLimit(count: 20000, json: false) == 0, "text prints each value and keeps none")
    }

    @Test func aFloodIsCountedButKeptOnlyUpToTheLimit() {
        var record = SubscriptionRecord(keeping: SubscriptionRecord.jsonCap)
        let value = [UInt8](repeating: 0xAB, count: 244)
        for i in 0..<(SubscriptionRecord.jsonCap * 2 + 7) { record.record(value, at: .microseconds(i)) }
        #expect(record.received == SubscriptionRecord.jsonCap * 2 + 7)
        #expect(record.kept.count == SubscriptionRecord.jsonCap)
        #expect(record.kept.last?.t == .microseconds(SubscriptionRecord.jsonCap - 1), "the first ones are kept, in order")
        #expect(record.truncated)
        var text = SubscriptionRecord(keeping: 0)
        for _ in 0..<1000 { text.record(value, at: .zero) }
        #expect(text.kept.isEmpty && text.received == 1000)
        var exact = SubscriptionRecord(keeping: 3)
        for i in 0..<3 { exact.record([UInt8(i)], at: .zero) }
        #expect(!exact.truncated)
        #expect(exact.kept.map(\.value) == [[0], [1], [2]])
    }

    @Test func eachValueIsOneLineOfSecondsHandleAndHex() {
        #expect(GattSubscriber.line(.milliseconds(1234), handle: 22, value: [0x01, 0x00, 0xFF]) == "1.234  22  0100ff\n")
        #expect(GattSubscriber.line(.zero, handle: 7, value: []) == "0.000  7  \n")
        #expect(GattSubscriber.summary(SubscriptionRecord(keeping: 0), kind: "notifications", ending: .seconds, took: .seconds(1),
                                       count: nil, seconds: 1) == "received 0 notifications in 1.0 s (--seconds 1)")
        var one = SubscriptionRecord(keeping: 0)
        one.record([1], at: .zero)
        #expect(GattSubscriber.summary(one, kind: "indications", ending: .interrupted(SIGINT), took: .milliseconds(2500),
                                       count: nil, seconds: nil) == "received 1 indication in 2.5 s (Ctrl-C)")
    }

    @Test func attErrorsAreSaidWithTheirCodeAndName() {
        #expect(GattText.attError(0x05) == "0x05 Insufficient Authentication")
        #expect(GattText.attError(0x02) == "0x02 Read Not Permitted")
        #expect(GattText.attError(0x13) == "0x13 Value Not Allowed")
        #expect(GattText.attError(0x80) == "0x80 Application Error")
        #expect(GattText.attError(0xFD) == "0xFD Client Characteristic Configuration Descriptor Improperly Configured")
        let refused = GattText.refused(ATTFailure(code: 0x05, handle: 0x12, requestOpcode: 0x0A), "--read 2A19 (Battery Level, handle 18)")
        #expect(refused.exitCode == 1)
        #expect(refused.message == "--read 2A19 (Battery Level, handle 18): the device answered ATT error 0x05 Insufficient Authentication")
    }

    // A small database: Battery, and the mirror's scanState and control.
    static let database = GattDatabase(address: BLEAddress(string: "B0:B0:B0:00:00:01")!, trees: [
        GATTServiceTree(service: GATTService(uuid: BluetoothUUID(0x180F), start: 1, end: 4), characteristics: [
            GATTCharacteristic(uuid: BluetoothUUID(0x2A19), declarationHandle: 2, valueHandle: 3, properties: [.read, .notify],
                               descriptors: [GATTDescriptor(uuid: BluetoothUUID(0x2902), handle: 4)]),
        ]),
        GATTServiceTree(service: GATTService(uuid: MirrorGATT.service, start: 5, end: 12), characteristics: [
            GATTCharacteristic(uuid: MirrorGATT.uuid(0x05), declarationHandle: 6, valueHandle: 7, properties: [.read, .notify], descriptors: []),
            GATTCharacteristic(uuid: MirrorGATT.uuid(0x08), declarationHandle: 8, valueHandle: 9, properties: [.write], descriptors: []),
            GATTCharacteristic(uuid: BluetoothUUID(0x2A19), declarationHandle: 10, valueHandle: 11, properties: [.writeWithoutResponse], descriptors: []),
        ]),
    ])

    func resolved(_ id: String, _ use: GattDatabase.Use, option: String = "--read") throws(CLIFailure) -> GATTCharacteristic {
        try Self.database.characteristic(try CharacteristicID.parse(id, option: option), for: use, option: option)
    }

    @Test func anIDNamesTheFirstCharacteristicWithTheUUIDOrTheOneWithThatValueHandle() throws {
        #expect(try resolved("2A19", .read).valueHandle == 3, "the first occurrence")
        #expect(try resolved("11", .writeCommand, option: "--write-command").valueHandle == 11)
        #expect(try resolved("0x0009", .write, option: "--write").uuid == MirrorGATT.uuid(0x08))
        #expect(try resolved("2A19", .subscribe, option: "--subscribe").valueHandle == 3)
    }

    @Test func whatACharacteristicDoesNotAllowIsRefusedBeforeAnythingIsSent() {
        let cases: [(String, GattDatabase.Use, String, CLIFailure.Kind, String)] = [
            ("7B9E0008-3C2A-4F1B-9E6D-5A4C3B2A1F00", .read, "--read", .usage,
             "--read 7B9E0008-3C2A-4F1B-9E6D-5A4C3B2A1F00 (control, handle 9): the characteristic does not allow reads (its properties: write)"),
            ("9", .writeCommand, "--write-command", .usage,
             "--write-command 7B9E0008-3C2A-4F1B-9E6D-5A4C3B2A1F00 (control, handle 9): the characteristic does not take Write Commands "
             + "(its properties: write); it takes Write Requests: use --write"),
            ("11", .write, "--write", .usage,
             "--write 2A19 (Battery Level, handle 11): the characteristic does not take Write Requests (its properties: "
             + "writeWithoutResponse); it takes Write Commands: use --write-command"),
            ("9", .subscribe, "--subscribe", .usage,
             "--subscribe 7B9E0008-3C2A-4F1B-9E6D-5A4C3B2A1F00 (control, handle 9): the characteristic neither notifies nor indicates (its properties: write)"),
            ("7", .subscribe, "--subscribe", .device,
             "--subscribe 7B9E0005-3C2A-4F1B-9E6D-5A4C3B2A1F00 (scanState, handle 7): the characteristic offers read, notify but has no "
             + "Client Characteristic Configuration descriptor (2902) to turn them on"),
            ("2A9D", .read, "--read", .device, "--read 2A9D: B0:B0:B0:00:00:01 has no characteristic 2A9D (Weight Measurement)"),
            ("4", .read, "--read", .device,
             "--read 4: handle 4 is descriptor 2902 (Client Characteristic Configuration) of 2A19 (Battery Level, handle 3), "
             + "not a value handle; give the characteristic's value handle 3"),
            ("6", .read, "--read", .device,
             "--read 6: handle 6 is the declaration of 7B9E0005-3C2A-4F1B-9E6D-5A4C3B2A1F00 (scanState, handle 7); give its value handle 7"),
            ("5", .read, "--read", .device,
             "--read 5: handle 5 is the declaration of service 7B9E0001-3C2A-4F1B-9E6D-5A4C3B2A1F00 (Body-scan Mirror), not a characteristic's value"),
            ("40", .read, "--read", .device, "--read 40: B0:B0:B0:00:00:01 has no characteristic whose value handle is 40"),
        ]
        for (id, use, option, kind, message) in cases {
            let error = failure { () throws(CLIFailure) in _ = try resolved(id, use, option: option) }
            #expect(error?.kind == kind, "\(id)")
            #expect(error?.message == message)
        }
    }

    @Test func theJSONNamesWhatItCanAndCarriesValuesAndRefusals() throws {
        let report = GattReport(address: Self.database.address, mtu: 247, trees: Self.database.trees,
                                reads: [3: .value([0x57]), 7: .refused(0x02)])
        let json = try JSONShape.parse(JSON.encode(report))
        let battery = try #require(json["services"]?.array?.first)
        #expect(battery["name"]?.string == "Battery")
        let level = try #require(battery["characteristics"]?.array?.first)
        #expect(level.keys == ["uuid", "name", "handle", "properties", "descriptors", "value"])
        #expect(level["value"]?.string == "57")
        #expect(level["descriptors"]?.array?.first?["name"]?.string == "Client Characteristic Configuration")
        let mirror = try #require(json["services"]?.array?.last)
        #expect(mirror["name"]?.string == "Body-scan Mirror")
        let scanState = try #require(mirror["characteristics"]?.array?.first)
        #expect(scanState["name"]?.string == "scanState")
        #expect(scanState["error"]?.string == "0x02 Read Not Permitted")
        #expect(scanState["value"] == nil)
        #expect(json["writes"] == nil && json["subscription"] == nil, "only what was asked for")
        let text = report.text
        #expect(text.contains("service 180F Battery  handles 1–4\n  characteristic 2A19 Battery Level  handle 3  read,notify\n    value 57\n"))
        #expect(text.contains("    read refused: ATT error 0x02 Read Not Permitted\n"))
        #expect(text.contains("    descriptor 2902 Client Characteristic Configuration  handle 4\n"))
    }

    /// The subscription's values are written from the packed record (issue 27, item 14) and
    /// read back as the same JSON the encoder would have made of them.
    @Test func streamedSubscriptionValuesAreTheJSONTheEncoderWouldWrite() throws {
        var record = SubscriptionRecord(keeping: 5000)
        for i in 0..<4321 { record.record([UInt8(i & 0xFF), 0x00, UInt8(i >> 8)], at: .microseconds(Int64(i) * 1_234_567 + 7)) }
        var report = GattReport(address: Self.database.address, mtu: 247, trees: Self.database.trees, reads: [3: .value([0x57])])
        report.subscription = .init(uuid: "2A19", name: "Battery Level", handle: 3, received: record.received, values: [], truncated: nil, dropped: 2)
        var streamed = ""
        var writes = 0
        GattReport.writeJSON(report, values: record) { streamed += $0; writes += 1 }
        #expect(writes > 2, "written in chunks")
        var whole = report
        whole.subscription?.values = record.kept.map { .init(t: (GattSubscriber.seconds($0.t) * 1e6).rounded() / 1e6, value: HexValue.text($0.value)) }
        let expected = try JSONSerialization.jsonObject(with: Data(JSON.encode(whole).utf8)) as? NSDictionary
        let got = try JSONSerialization.jsonObject(with: Data(streamed.utf8)) as? NSDictionary
        #expect(got != nil && got == expected)
        #expect(streamed.hasSuffix("}\n"))
    }

    @Test func aPrintableValueIsShownAsTextToo() {
        let report = GattReport(address: Self.database.address, mtu: 23, trees: Self.database.trees, reads: [3: .value(Array("hwprobe".utf8))])
        #expect(report.text.contains("    value 687770726f6265  \"hwprobe\"\n"))
        #expect(GattText.printable([0x41, 0x42, 0x00]) == nil)
        #expect(GattText.printable([0x57]) == nil, "a battery level of 87 is not \"W\"")
    }

    @Test func mistakesInTheOptionsAreCaughtBeforeTheControllerOpens() async throws {
        // Nothing listens on port 1: had the controller been opened first, this would be exit 3.
        let cases: [[String]] = [["--write", "2A06=zz"], ["--read", "2A9"], ["--count", "3"], ["--subscribe", "0x0"]]
        for arguments in cases {
            let captured = CapturedConsole()
            let code = await HWProbe(console: captured.console, listSources: .empty)
                .run(["gatt", "--hci", "tcp:127.0.0.1:1", "AA:BB:CC:DD:EE:FF/public"] + arguments + ["--json"])
            #expect(code == 2, "\(arguments): \(captured.stderr)")
            #expect(try JSONShape.parse(captured.stdout)["error"]?["kind"]?.string == "usage")
        }
    }
}
