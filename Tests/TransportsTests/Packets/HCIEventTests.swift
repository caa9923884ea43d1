import BLEProtocol
import TestKit
import HAL
import Testing
@testable import Transports

/// Events as a controller sends them, H4 bytes included, decoded through the framer.
@Suite struct HCIEventTests {
    static func event(_ hex: String) throws -> HCIEvent {
        var framer = H4Framer()
        let packets = try framer.feed(PacketBytes.hex(hex))
        guard packets.count == 1, case .event(let packet) = packets[0] else {
            Issue.record("\(hex) is not exactly one event")
            return .other(code: 0, parameters: [])
        }
        return try HCIEvent(parsing: packet)
    }

    static func parse(code: UInt8, _ hex: String) throws(HCIParseError) -> HCIEvent {
        try HCIEvent(parsing: HCIEventPacket(code: code, parameters: PacketBytes.hex(hex)))
    }

    static func address(_ text: String, _ kind: BLEAddress.Kind) throws -> BLEAddress {
        try #require(BLEAddress(string: text, defaultKind: kind))
    }

    // MARK: Command Complete and its return parameters

    @Test func resetCommandComplete() throws {
        #expect(try Self.event("04 0E 04 01 03 0C 00") == .commandComplete(numPackets: 1, opcode: 0x0C03, returnParameters: [0x00]))
    }

    @Test func readBufferSize() throws {
        let event = try Self.event("04 0E 0B 01 05 10 00 FD 03 40 08 00 01 00")
        guard case .commandComplete(1, 0x1005, let rp) = event else { Issue.record("\(event)"); return }
        #expect(ReturnParameters.status(rp) == 0)
        #expect(try ACLBufferSize.fromReadBufferSize(rp) == ACLBufferSize(length: 1021, count: 8))
        #expect(throws: HCIParseError.self) { try ACLBufferSize.fromReadBufferSize(Array(rp.dropLast())) }
    }

    @Test func leReadBufferSize() throws {
        let event = try Self.event("04 0E 07 01 02 20 00 FB 00 0F")
        guard case .commandComplete(1, 0x2002, let rp) = event else { Issue.record("\(event)"); return }
        let size = try ACLBufferSize.fromLEReadBufferSize(rp)
        #expect(size == ACLBufferSize(length: 251, count: 15))
        #expect(!size.isShared)
        #expect(try ACLBufferSize.fromLEReadBufferSize(PacketBytes.hex("00 00 00 00")).isShared)
    }

    @Test func readBDADDR() throws {
        let event = try Self.event("04 0E 0A 01 09 10 00 66 55 44 33 22 11")
        guard case .commandComplete(1, 0x1009, let rp) = event else { Issue.record("\(event)"); return }
        #expect(try ReturnParameters.bdAddress(rp) == Self.address("11:22:33:44:55:66", .public))
    }

    @Test func readLocalVersionAndFeatures() throws {
        let version = try LocalVersion(returnParameters: PacketBytes.hex("00 0C 0E 22 0C 5D 00 34 12"))
        #expect(version == LocalVersion(hciVersion: 0x0C, hciRevision: 0x220E, lmpVersion: 0x0C,
                                        manufacturer: 0x005D, lmpSubversion: 0x1234))
        #expect(throws: HCIParseError.self) { try LocalVersion(returnParameters: PacketBytes.hex("00 0C 0E 22")) }
        #expect(try ReturnParameters.features(PacketBytes.hex("00 FF 49 01 00 00 00 00 80")) == 0x8000_0000_0001_49FF)
    }

    @Test func aFailedStatusIsNotReadAsData() {
        #expect(ReturnParameters.status([0x0C]) == 0x0C)
        #expect(ReturnParameters.status([]) != HCIStatus.success)
        #expect(throws: HCIParseError.self) { try ReturnParameters.bdAddress([0x01]) }
        #expect(throws: HCIParseError.self) { try ReturnParameters.bdAddress(PacketBytes.hex("01 66 55 44 33 22 11")) }
        #expect(throws: HCIParseError.self) { try ReturnParameters.features([]) }
    }

    @Test func commandCompleteNeedsItsHeader() {
        #expect(throws: HCIParseError.self) { try Self.parse(code: 0x0E, "01 03") }
        #expect((try? Self.parse(code: 0x0E, "01 00 00")) == .commandComplete(numPackets: 1, opcode: 0, returnParameters: []))
    }

    // MARK: Other controller events

    @Test func commandStatus() throws {
        #expect(try Self.event("04 0F 04 00 01 0D 20") == .commandStatus(status: 0, numPackets: 1, opcode: 0x200D))
        #expect(throws: HCIParseError.self) { try Self.parse(code: 0x0F, "00 01 0D") }
    }

    @Test func disconnectionComplete() throws {
        #expect(try Self.event("04 05 04 00 40 00 13") == .disconnectionComplete(status: 0, handle: 0x0040, reason: 0x13))
        #expect(throws: HCIParseError.self) { try Self.parse(code: 0x05, "00 40 00") }
    }

    @Test func numberOfCompletedPacketsWithTwoHandles() throws {
        #expect(try Self.event("04 13 09 02 40 00 02 00 41 00 01 00")
                == .numberOfCompletedPackets([CompletedPackets(handle: 0x40, count: 2), CompletedPackets(handle: 0x41, count: 1)]))
        #expect(throws: HCIParseError.self) { try Self.parse(code: 0x13, "02 40 00 02 00") }
        #expect(throws: HCIParseError.self) { try Self.parse(code: 0x13, "01 40 00 02 00 00") }
        #expect(throws: HCIParseError.self) { try Self.parse(code: 0x13, "") }
    }

    @Test func hardwareErrorAndUnknownEvents() throws {
        #expect(try Self.event("04 10 01 2A") == .hardwareError(0x2A))
        #expect(try Self.event("04 1A 01 01") == .other(code: 0x1A, parameters: [0x01]))
        #expect(try Self.event("04 3E 03 14 40 00") == .leMeta(subevent: 0x14, parameters: [0x40, 0x00]))
        #expect(throws: HCIParseError.self) { try Self.parse(code: 0x3E, "") }
    }

    // MARK: Connections

    @Test func leConnectionComplete() throws {
        let event = try Self.event("04 3E 13 01 00 40 00 00 01 A6 A5 A4 A3 A2 C1 28 00 00 00 F4 01 00")
        #expect(event == .leConnectionComplete(LEConnectionComplete(
            status: 0, handle: 0x40, role: 0, peer: try Self.address("C1:A2:A3:A4:A5:A6", .random),
            interval: 40, latency: 0, supervisionTimeout: 500)))
        #expect(throws: HCIParseError.self) {
            try Self.parse(code: 0x3E, "01 00 40 00 00 01 A6 A5 A4 A3 A2 C1 28 00 00 00 F4")
        }
        // Peer address type 7 is not defined.
        #expect(throws: HCIParseError.malformed("LE Connection Complete: address type 0x07 is not defined")) {
            try Self.parse(code: 0x3E, "01 00 40 00 00 07 A6 A5 A4 A3 A2 C1 28 00 00 00 F4 01 00")
        }
    }

    @Test func leEnhancedConnectionCompleteV1AndV2() throws {
        let common = "00 41 00 01 02 66 55 44 33 22 11 " + "00 00 00 00 00 00 " + "00 00 00 00 00 00 " + "18 00 02 00 C8 00 01"
        let expected = HCIEvent.leConnectionComplete(LEConnectionComplete(
            status: 0, handle: 0x41, role: 1, peer: try Self.address("11:22:33:44:55:66", .public),
            interval: 24, latency: 2, supervisionTimeout: 200))
        #expect(try Self.event("04 3E 1F 0A " + common) == expected)
        #expect(try Self.event("04 3E 22 29 " + common + " 00 FF FF") == expected)
        // The two resolvable private addresses are missing: only 18 bytes, as in the legacy event.
        #expect(throws: HCIParseError.self) {
            try Self.parse(code: 0x3E, "0A 00 41 00 01 02 66 55 44 33 22 11 18 00 02 00 C8 00 01")
        }
    }

    @Test func connectionUpdateAndParameterRequest() throws {
        #expect(try Self.event("04 3E 0A 03 00 40 00 18 00 00 00 48 00")
                == .leConnectionUpdateComplete(status: 0, handle: 0x40, interval: 24, latency: 0, supervisionTimeout: 72))
        #expect(try Self.event("04 3E 0B 06 40 00 06 00 0C 00 00 00 C8 00")
                == .leRemoteConnectionParameterRequest(handle: 0x40, minInterval: 6, maxInterval: 12, latency: 0, timeout: 200))
        #expect(throws: HCIParseError.self) { try Self.parse(code: 0x3E, "06 40 00 06 00 0C 00 00 00") }
    }

    // MARK: Advertising reports

    @Test func legacyAdvertisingReportWithAdvertisementAndScanResponse() throws {
        let event = try Self.event("04 3E 1F 02 02"
            + " 00 01 F6 E5 D4 C3 B2 C1 03 02 01 06 C4"            // ADV_IND, random address, flags
            + " 04 01 F6 E5 D4 C3 B2 C1 06 05 09 53 63 61 6C C3")   // SCAN_RSP, "Scal"
        let address = try Self.address("C1:B2:C3:D4:E5:F6", .random)
        #expect(event == .leAdvertisingReports([
            LEAdvertisingReport(address: address, rssi: -60, data: PacketBytes.hex("02 01 06"), connectable: true,
                                scannable: true, isScanResponse: false, isLegacy: true),
            LEAdvertisingReport(address: address, rssi: -61, data: PacketBytes.hex("05 09 53 63 61 6C"), connectable: false,
                                scannable: true, isScanResponse: true, isLegacy: true),
        ]))
        guard case .leAdvertisingReports(let reports) = event else { return }
        #expect(try reports[1].advertisement().localName == "Scal")
    }

    @Test func legacyReportEventTypes() throws {
        let kinds: [(UInt8, Bool, Bool)] = [(0, true, true), (1, true, false), (2, false, true), (3, false, false)]
        for (type, connectable, scannable) in kinds {
            let event = try Self.parse(code: 0x3E, "02 01 \(Hex.byte(type)) 00 66 55 44 33 22 11 00 7F")
            guard case .leAdvertisingReports(let reports) = event, let report = reports.first else {
                Issue.record("\(event)"); continue
            }
            #expect(report.connectable == connectable && report.scannable == scannable && !report.isScanResponse)
            #expect(report.rssi == 127)
        }
    }

    @Test func malformedLegacyReportsThrow() {
        let bad = [
            "02 00",                                          // no reports
            "02 02 00 00 66 55 44 33 22 11 00 C4",            // claims two, has one
            "02 01 00 00 66 55 44 33 22 11 05 02 01 06 C4",   // data runs past the end
            "02 01 00 00 66 55 44 33 22 11 00 C4 00",         // trailing byte
            "02 01 07 00 66 55 44 33 22 11 00 C4",            // undefined event type
            "02 01 00 09 66 55 44 33 22 11 00 C4",            // undefined address type
            "02 FF 00",                                       // a hostile count
        ]
        for hex in bad {
            #expect(throws: HCIParseError.self, "\(hex)") { try Self.parse(code: 0x3E, hex) }
        }
    }

    /// One extended report, laid out field by field.
    static func extendedReport(eventType: UInt16, addressType: UInt8, address: String, rssi: Int8, data: [UInt8]) -> [UInt8] {
        LittleEndian.u16(eventType) + [addressType] + PacketBytes.hex(address)
            + [0x01, 0x00, 0xFF, 0x7F]          // primary PHY 1M, no secondary, no SID, no TX power
            + [UInt8(bitPattern: rssi)]
            + [0x00, 0x00] + [0x00] + [0, 0, 0, 0, 0, 0]   // no periodic advertising, no direct address
            + [UInt8(data.count)] + data
    }

    @Test func extendedAdvertisingReportWithLegacyAndExtendedPDUs() throws {
        let mirrorData = AdvertisingData.encode(AdvertisingDataTests.mirrorAdvertisement)
        #expect(mirrorData.count > 31)
        let reports = [
            Self.extendedReport(eventType: 0x13, addressType: 1, address: "A6 A5 A4 A3 A2 C1", rssi: -50, data: [2, 1, 6]),
            Self.extendedReport(eventType: 0x1B, addressType: 1, address: "A6 A5 A4 A3 A2 C1", rssi: -51, data: [2, 1, 6]),
            Self.extendedReport(eventType: 0x01, addressType: 0, address: "66 55 44 33 22 11", rssi: -70, data: mirrorData),
            Self.extendedReport(eventType: 0x12, addressType: 0xFF, address: "00 00 00 00 00 00", rssi: -80, data: []),
        ]
        let parameters: [UInt8] = [0x0D, UInt8(reports.count)] + Array(reports.joined())
        let event = try HCIEvent(parsing: HCIEventPacket(code: 0x3E, parameters: parameters))
        guard case .leAdvertisingReports(let parsed) = event, parsed.count == 4 else { Issue.record("\(event)"); return }
        let random = try Self.address("C1:A2:A3:A4:A5:A6", .random)
        #expect(parsed[0] == LEAdvertisingReport(address: random, rssi: -50, data: [2, 1, 6], connectable: true,
                                                 scannable: true, isScanResponse: false, isLegacy: true))
        #expect(parsed[1] == LEAdvertisingReport(address: random, rssi: -51, data: [2, 1, 6], connectable: true,
                                                 scannable: true, isScanResponse: true, isLegacy: true))
        #expect(parsed[2].address == (try Self.address("11:22:33:44:55:66", .public)))
        #expect(parsed[2].rssi == -70)
        #expect(parsed[2].connectable && !parsed[2].scannable && !parsed[2].isLegacy && !parsed[2].isScanResponse)
        #expect(try parsed[2].advertisement() == AdvertisingDataTests.mirrorAdvertisement)
        #expect(!parsed[3].connectable && parsed[3].scannable && parsed[3].isLegacy && parsed[3].data.isEmpty)
    }

    @Test func malformedExtendedReportsThrow() {
        let one = Self.extendedReport(eventType: 0x13, addressType: 0, address: "66 55 44 33 22 11", rssi: -50, data: [2, 1, 6])
        let bad: [[UInt8]] = [
            [0x0D, 0x00],
            [0x0D, 0x01] + one.dropLast(),                     // data shorter than its length
            [0x0D, 0x02] + one,                                // claims two
            [0x0D, 0x01] + one + [0x00],                       // trailing byte
            [0x0D, 0x01] + one.prefix(2) + [0x05] + one.dropFirst(3),   // address type 5
            [0x0D, 0xFF],
        ]
        for parameters in bad {
            #expect(throws: HCIParseError.self, "\(parameters)") {
                try HCIEvent(parsing: HCIEventPacket(code: 0x3E, parameters: parameters))
            }
        }
    }

    // MARK: Hostile input

    @Test func randomBytesNeverCrashTheEventParser() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<3000 {
            let code: UInt8 = [0x05, 0x0E, 0x0F, 0x10, 0x13, 0x3E].randomElement(using: &rng) ?? 0x3E
            let count = Int.random(in: 0...60, using: &rng)
            var parameters = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if code == 0x3E, !parameters.isEmpty {
                parameters[0] = [0x01, 0x02, 0x03, 0x06, 0x0A, 0x0D, 0x29].randomElement(using: &rng) ?? 0x02
            }
            _ = try? HCIEvent(parsing: HCIEventPacket(code: code, parameters: parameters))
        }
    }

    @Test func statusNames() {
        #expect(HCIStatus.describe(0x00) == "Success")
        #expect(HCIStatus.describe(0x13) == "Remote User Terminated Connection")
        #expect(HCIStatus.describe(0x3E).hasPrefix("Connection Failed to be Established"))
        #expect(HCIStatus.describe(0x3B) == "Unacceptable Connection Parameters")
        #expect(HCIStatus.describe(0xEE) == "Reserved status 0xEE")
    }
}
