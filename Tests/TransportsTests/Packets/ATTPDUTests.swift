import BLEProtocol
import TestKit
import HAL
import Testing
@testable import Transports

@Suite struct ATTPDUTests {
    static let mirrorService = BluetoothUUID(string: "7B9E0001-3C2A-4F1B-9E6D-5A4C3B2A1F00")
    static let mirrorServiceLE = "00 1F 2A 3B 4C 5A 6D 9E 1B 4F 2A 3C 01 00 9E 7B"

    static func parse(_ hex: String) throws(HCIParseError) -> ATTPDU { try ATTPDU(parsing: PacketBytes.hex(hex)) }

    static var everyCase: [ATTPDU] {
        let vendor = mirrorService ?? BluetoothUUID(0xFFFF)
        return [
            .errorResponse(requestOpcode: 0x10, handle: 0x0001, code: 0x0A),
            .exchangeMTURequest(247), .exchangeMTUResponse(185),
            .findInformationRequest(start: 1, end: 0xFFFF),
            .findInformationResponse([ATTHandleUUID(handle: 3, uuid: BluetoothUUID(0x2902)), ATTHandleUUID(handle: 4, uuid: BluetoothUUID(0x2901))]),
            .findInformationResponse([ATTHandleUUID(handle: 0x0A, uuid: vendor)]),
            .findByTypeValueRequest(start: 1, end: 0xFFFF, type: 0x2800, value: [0x0D, 0x18]),
            .findByTypeValueResponse([ATTHandleRange(start: 0x10, end: 0x1F), ATTHandleRange(start: 0x20, end: 0xFFFF)]),
            .readByTypeRequest(start: 1, end: 0xFFFF, type: BluetoothUUID(0x2803)),
            .readByTypeRequest(start: 0x10, end: 0x1F, type: vendor),
            .readByTypeResponse([ATTHandleValue(handle: 2, value: [0x02, 0x03, 0x00, 0x00, 0x2A]),
                                 ATTHandleValue(handle: 4, value: [0x02, 0x05, 0x00, 0x01, 0x2A])]),
            .readRequest(handle: 3), .readResponse([]), .readResponse(Array("Mirror".utf8)),
            .readBlobRequest(handle: 3, offset: 22), .readBlobResponse([1, 2, 3]),
            .readByGroupTypeRequest(start: 1, end: 0xFFFF, type: BluetoothUUID(0x2800)),
            .readByGroupTypeResponse([ATTGroupValue(handle: 1, endGroup: 5, value: [0x00, 0x18])]),
            .writeRequest(handle: 0x12, value: [0x01, 0x00]), .writeResponse,
            .writeCommand(handle: 0x12, value: []),
            .handleValueNotification(handle: 0x0F, value: [1, 2, 3]),
            .handleValueIndication(handle: 0x11, value: [0xFF]), .handleValueConfirmation,
            .unknown(opcode: 0x0E, parameters: [0x01, 0x00, 0x02, 0x00]),
            .unknown(opcode: 0xD2, parameters: Array(repeating: 7, count: 14)),
        ]
    }

    @Test func everyPDURoundTrips() throws {
        for pdu in Self.everyCase {
            #expect(try ATTPDU(parsing: pdu.encoded) == pdu, "\(pdu)")
            #expect(pdu.encoded.first == pdu.opcode)
        }
    }

    @Test func exchangeMTU() throws {
        #expect(try Self.parse("02 F7 00") == .exchangeMTURequest(247))
        #expect(ATTPDU.exchangeMTUResponse(23).encoded == PacketBytes.hex("03 17 00"))
        #expect(throws: HCIParseError.self) { try Self.parse("02 F7") }
        #expect(throws: HCIParseError.self) { try Self.parse("02 F7 00 00") }
    }

    @Test func errorResponse() throws {
        #expect(try Self.parse("01 10 01 00 0A") == .errorResponse(requestOpcode: 0x10, handle: 1, code: 0x0A))
        #expect(throws: HCIParseError.self) { try Self.parse("01 10 01 00") }
    }

    @Test func readByGroupTypeResponseWithSixteenAndOneTwentyEightBitServices() throws {
        #expect(try Self.parse("11 06 01 00 05 00 00 18 06 00 09 00 01 18") == .readByGroupTypeResponse([
            ATTGroupValue(handle: 1, endGroup: 5, value: [0x00, 0x18]),
            ATTGroupValue(handle: 6, endGroup: 9, value: [0x01, 0x18]),
        ]))
        let pdu = try Self.parse("11 14 10 00 1F 00 " + Self.mirrorServiceLE)
        guard case .readByGroupTypeResponse(let groups) = pdu, let group = groups.first else { Issue.record("\(pdu)"); return }
        #expect(groups.count == 1 && group.handle == 0x10 && group.endGroup == 0x1F)
        #expect(BluetoothUUID(littleEndian: group.value) == Self.mirrorService)
    }

    @Test func findInformationResponseFormats() throws {
        #expect(try Self.parse("05 01 03 00 02 29 04 00 01 29") == .findInformationResponse([
            ATTHandleUUID(handle: 3, uuid: BluetoothUUID(0x2902)), ATTHandleUUID(handle: 4, uuid: BluetoothUUID(0x2901)),
        ]))
        let vendor = try #require(Self.mirrorService)
        #expect(try Self.parse("05 02 0A 00 " + Self.mirrorServiceLE) == .findInformationResponse([ATTHandleUUID(handle: 10, uuid: vendor)]))
        // Mixed sizes are written in 128 bits (format 2).
        let mixed = ATTPDU.findInformationResponse([ATTHandleUUID(handle: 1, uuid: BluetoothUUID(0x2902)), ATTHandleUUID(handle: 2, uuid: vendor)])
        #expect(mixed.encoded.count == 2 + 2 * 18)
        #expect(mixed.encoded[1] == 2)
        #expect(try ATTPDU(parsing: mixed.encoded) == mixed)
    }

    @Test func readByTypeResponseOfCharacteristicDeclarations() throws {
        // Properties (read), value handle, UUID: Device Name at 3 and Appearance at 5.
        let pdu = try Self.parse("09 07 02 00 02 03 00 00 2A 04 00 02 05 00 01 2A")
        #expect(pdu == .readByTypeResponse([
            ATTHandleValue(handle: 2, value: PacketBytes.hex("02 03 00 00 2A")),
            ATTHandleValue(handle: 4, value: PacketBytes.hex("02 05 00 01 2A")),
        ]))
        // A 128-bit characteristic: 2 + 1 + 2 + 16 = 21 bytes per entry.
        let long = try Self.parse("09 15 11 00 1A 12 00 " + Self.mirrorServiceLE)
        guard case .readByTypeResponse(let entries) = long, let entry = entries.first else { Issue.record("\(long)"); return }
        #expect(entry.handle == 0x11 && entry.value[0] == 0x1A && entry.value[1] == 0x12 && entry.value[2] == 0x00)
        #expect(BluetoothUUID(littleEndian: entry.value[3...]) == Self.mirrorService)
    }

    @Test func requestsCarryTheirType() throws {
        #expect(try Self.parse("10 01 00 FF FF 00 28") == .readByGroupTypeRequest(start: 1, end: 0xFFFF, type: BluetoothUUID(0x2800)))
        #expect(try Self.parse("08 01 00 FF FF 03 28") == .readByTypeRequest(start: 1, end: 0xFFFF, type: BluetoothUUID(0x2803)))
        #expect(try Self.parse("08 10 00 1F 00 " + Self.mirrorServiceLE)
                == .readByTypeRequest(start: 0x10, end: 0x1F, type: try #require(Self.mirrorService)))
        #expect(try Self.parse("06 01 00 FF FF 00 28 0D 18")
                == .findByTypeValueRequest(start: 1, end: 0xFFFF, type: 0x2800, value: [0x0D, 0x18]))
    }

    @Test func notificationsAndWrites() throws {
        #expect(try Self.parse("1B 0F 00 01 02 03") == .handleValueNotification(handle: 0x0F, value: [1, 2, 3]))
        #expect(try Self.parse("1B 0F 00") == .handleValueNotification(handle: 0x0F, value: []))
        #expect(try Self.parse("1D 11 00 05") == .handleValueIndication(handle: 0x11, value: [5]))
        #expect(try Self.parse("1E") == .handleValueConfirmation)
        #expect(ATTPDU.writeRequest(handle: 0x12, value: [0x01, 0x00]).encoded == PacketBytes.hex("12 12 00 01 00"))
        #expect(ATTPDU.writeCommand(handle: 0x12, value: [0x01]).encoded == PacketBytes.hex("52 12 00 01"))
        #expect(try Self.parse("13") == .writeResponse)
    }

    @Test func malformedLengthsThrow() {
        let bad = [
            "",                                            // no opcode
            "09 07 02 00 02 03 00 00 2A 04 00 02 05 00",   // entries of 7 bytes, 13 present
            "09 01 02",                                    // entry length below a handle
            "09 07",                                       // no entries
            "11 06 01 00 05 00 00 18 06 00",               // 6-byte groups, 10 bytes
            "11 03 01 00 05",                              // group length below two handles
            "05 01 03 00 02",                              // format 1, 3 bytes
            "05 02 03 00 02 29",                           // format 2 with a 16-bit UUID
            "05 03 03 00 02 29",                           // format 3 is not defined
            "05 01",                                       // no entries
            "07 10 00 1F",                                 // half a handle range list
            "07",
            "08 01 00 FF FF 03 28 00 00",                  // a 4-byte attribute type
            "10 01 00 FF FF",                              // no attribute type
            "0A 03",                                       // half a handle
            "0A 03 00 00",                                 // trailing byte
            "0C 03 00 16",                                 // half an offset
            "12 12",                                       // write without a whole handle
            "13 00",                                       // write response with a parameter
            "1E 00",
            "1B 0F",
        ]
        for hex in bad {
            #expect(throws: HCIParseError.self, "\(hex)") { try Self.parse(hex) }
        }
    }

    @Test func requestsAndResponses() {
        #expect(ATTPDU.responseOpcode(forRequest: 0x02) == 0x03)
        #expect(ATTPDU.responseOpcode(forRequest: 0x10) == 0x11)
        #expect(ATTPDU.responseOpcode(forRequest: 0x12) == 0x13)
        #expect(ATTPDU.responseOpcode(forRequest: 0x52) == nil)
        #expect(ATTPDU.responseOpcode(forRequest: 0x1D) == nil)
        #expect(ATTPDU.readRequest(handle: 1).isRequest && !ATTPDU.readRequest(handle: 1).isResponse)
        #expect(ATTPDU.errorResponse(requestOpcode: 0x0A, handle: 1, code: 1).isResponse)
        #expect(ATTPDU.readResponse([]).isResponse && !ATTPDU.readResponse([]).isRequest)
        #expect(ATTPDU.unknown(opcode: 0x0E, parameters: []).isRequest)
        for pdu in [ATTPDU.writeCommand(handle: 1, value: []), .handleValueNotification(handle: 1, value: []),
                    .handleValueIndication(handle: 1, value: []), .handleValueConfirmation] {
            #expect(!pdu.isRequest && !pdu.isResponse, "\(pdu)")
        }
        for pdu in Self.everyCase where pdu.isRequest {
            let response = ATTPDU.responseOpcode(forRequest: pdu.opcode)
            #expect(response == pdu.opcode + 1, "\(pdu)")
        }
    }

    @Test func errorCodeNames() {
        #expect(ATTErrorCode.describe(0x01) == "Invalid Handle")
        #expect(ATTErrorCode.describe(0x0A) == "Attribute Not Found")
        #expect(ATTErrorCode.describe(0x0D) == "Invalid Attribute Value Length")
        #expect(ATTErrorCode.describe(0x11) == "Insufficient Resources")
        #expect(ATTErrorCode.describe(0x13) == "Value Not Allowed")
        #expect(ATTErrorCode.describe(0x80) == "Application Error 0x80")
        #expect(ATTErrorCode.describe(0xFD) == "Client Characteristic Configuration Descriptor Improperly Configured")
        #expect(ATTErrorCode.describe(0x50) == "Reserved error 0x50")
    }

    @Test func randomBytesNeverCrashTheParsers() throws {
        var rng = SplitMix64(seed: 0xA77)
        for _ in 0..<5000 {
            let count = Int.random(in: 0...30, using: &rng)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if !bytes.isEmpty { bytes[0] = UInt8.random(in: 0...0x1F, using: &rng) }
            if let pdu = try? ATTPDU(parsing: bytes) {
                #expect(try ATTPDU(parsing: pdu.encoded) == pdu)
            }
            _ = try? L2CAPFrame(parsing: bytes)
            _ = try? LESignalingPacket(parsing: bytes)
        }
    }
}
