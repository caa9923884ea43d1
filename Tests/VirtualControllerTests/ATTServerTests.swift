import BLEProtocol
import HAL
import Testing
import Transports
@testable import VirtualController

/// The ATT server as a value: PDUs in, PDUs out, checked against the Attribute Protocol (Core
/// Vol 3 Part F §3.4) answer by answer, error code by error code.
@Suite struct ATTServerTests {
    static let custom = BluetoothUUID(string: "A5C30001-6B1E-4F2A-9D3C-2B7E5F10C4A9")!
    static let long = BluetoothUUID(string: "A5C30002-6B1E-4F2A-9D3C-2B7E5F10C4A9")!
    static let secret = BluetoothUUID(string: "A5C30003-6B1E-4F2A-9D3C-2B7E5F10C4A9")!
    static let sink = BluetoothUUID(string: "A5C30004-6B1E-4F2A-9D3C-2B7E5F10C4A9")!
    static let gauge = BluetoothUUID(string: "A5C30005-6B1E-4F2A-9D3C-2B7E5F10C4A9")!

    /// 1–5 Generic Access, 6–9 Generic Attribute, then the custom service:
    /// 10 service, 11/12 long (read, 300 bytes), 13/14 secret (write only), 15/16 sink (write,
    /// write without response), 17/18/19 gauge (read, notify, indicate; dynamic) and its CCCD.
    static func database() -> AttributeDatabase {
        var builder = AttributeDatabase.Builder()
        builder.standardServices(deviceName: "Lab", appearance: 0)
        builder.service(custom, [
            CharacteristicDefinition(long, .read, value: (0..<300).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }),
            CharacteristicDefinition(secret, .write),
            CharacteristicDefinition(sink, [.write, .writeWithoutResponse]),
            CharacteristicDefinition(gauge, [.read, .notify, .indicate]),
        ])
        return builder.build()
    }

    struct Recorder: ATTServerBehaviour {
        var gauge: [UInt8] = [0x2A]
        var writes: [(handle: UInt16, value: [UInt8], withResponse: Bool)] = []
        var configurations: [UInt16: UInt16] = [:]
        var refuseWrites: ATTRefusal?

        mutating func read(_ handle: UInt16) -> Result<[UInt8], ATTRefusal> { handle == 18 ? .success(gauge) : .failure(.readNotPermitted) }
        mutating func write(_ value: [UInt8], to handle: UInt16, withResponse: Bool) -> ATTRefusal? {
            writes.append((handle, value, withResponse))
            return refuseWrites
        }
        mutating func clientConfigurationChanged(valueHandle: UInt16, to value: UInt16) { configurations[valueHandle] = value }
    }

    /// One link's server and what its behaviour saw.
    struct Session {
        var server = ATTServer(database: ATTServerTests.database(), preferredMTU: 247)
        var behaviour = Recorder()

        mutating func ask(_ pdu: ATTPDU) -> ATTPDU? {
            ask(pdu.encoded)
        }

        mutating func ask(_ bytes: [UInt8]) -> ATTPDU? {
            let answers = server.receive(bytes, behaviour: &behaviour)
            guard let first = answers.first else { return nil }
            return try? ATTPDU(parsing: first)
        }
    }

    static func error(_ opcode: UInt8, _ handle: UInt16, _ code: UInt8) -> ATTPDU {
        .errorResponse(requestOpcode: opcode, handle: handle, code: code)
    }

    @Test func exchangeMTUSettlesOnTheSmallerOfTheTwo() {
        var s = Session()
        #expect(s.ask(.exchangeMTURequest(517)) == .exchangeMTUResponse(247))
        #expect(s.server.mtu == 247)
        #expect(s.ask(.exchangeMTURequest(100)) == .exchangeMTUResponse(247))
        #expect(s.server.mtu == 100)
        // A client MTU below the minimum still leaves 23.
        #expect(s.ask(.exchangeMTURequest(5)) == .exchangeMTUResponse(247))
        #expect(s.server.mtu == 23)
    }

    @Test func primaryServicesAreListedByGroupAndEndWithAttributeNotFound() {
        var s = Session()
        #expect(s.ask(.readByGroupTypeRequest(start: 1, end: 0xFFFF, type: Attribute.primaryService))
                == .readByGroupTypeResponse([ATTGroupValue(handle: 1, endGroup: 5, value: [0x00, 0x18]),
                                              ATTGroupValue(handle: 6, endGroup: 9, value: [0x01, 0x18])]))
        // The 128-bit service has another value length: it comes in a response of its own.
        #expect(s.ask(.readByGroupTypeRequest(start: 10, end: 0xFFFF, type: Attribute.primaryService))
                == .readByGroupTypeResponse([ATTGroupValue(handle: 10, endGroup: 19, value: Self.custom.littleEndianBytes)]))
        #expect(s.ask(.readByGroupTypeRequest(start: 20, end: 0xFFFF, type: Attribute.primaryService)) == Self.error(0x10, 20, 0x0A))
        #expect(s.ask(.readByGroupTypeRequest(start: 1, end: 0xFFFF, type: Attribute.characteristicDeclaration)) == Self.error(0x10, 1, 0x10))
    }

    @Test func findByTypeValueFindsAServiceByItsUUID() {
        var s = Session()
        #expect(s.ask(.findByTypeValueRequest(start: 1, end: 0xFFFF, type: 0x2800, value: Self.custom.littleEndianBytes))
                == .findByTypeValueResponse([ATTHandleRange(start: 10, end: 19)]))
        #expect(s.ask(.findByTypeValueRequest(start: 1, end: 0xFFFF, type: 0x2800, value: [0x0F, 0x18])) == Self.error(0x06, 1, 0x0A))
    }

    @Test func characteristicDeclarationsShareOneLengthPerResponse() {
        var s = Session()
        // 2A00 and 2A01 are 16-bit (7-byte declarations), 2A05 too; the next service's are 21 bytes.
        guard case .readByTypeResponse(let first) = s.ask(.readByTypeRequest(start: 1, end: 0xFFFF, type: Attribute.characteristicDeclaration)) else {
            Issue.record("no Read By Type Response")
            return
        }
        #expect(first.map(\.handle) == [2, 4, 7])
        #expect(first.allSatisfy { $0.value.count == 5 })
        guard case .readByTypeResponse(let second) = s.ask(.readByTypeRequest(start: 10, end: 19, type: Attribute.characteristicDeclaration)) else {
            Issue.record("no Read By Type Response")
            return
        }
        // 19-byte values: at an MTU of 23 only one entry fits.
        #expect(second.map(\.handle) == [11])
        #expect(second[0].value == [0x02, 12, 0] + Self.long.littleEndianBytes)
        #expect(s.ask(.readByTypeRequest(start: 20, end: 0xFFFF, type: Attribute.characteristicDeclaration)) == Self.error(0x08, 20, 0x0A))
    }

    @Test func readByTypeOfAValueTheClientMayNotReadIsRefusedWithItsHandle() {
        var s = Session()
        #expect(s.ask(.readByTypeRequest(start: 10, end: 19, type: Self.secret)) == Self.error(0x08, 14, 0x02))
        #expect(s.ask(.readByTypeRequest(start: 10, end: 19, type: Self.gauge)) == .readByTypeResponse([ATTHandleValue(handle: 18, value: [0x2A])]))
    }

    @Test func findInformationKeepsOneUUIDFormatPerResponse() {
        var s = Session()
        // Handle 10's type (0x2800) is 16-bit; 12 is a 128-bit value type: the response stops before it.
        #expect(s.ask(.findInformationRequest(start: 10, end: 12))
                == .findInformationResponse([ATTHandleUUID(handle: 10, uuid: Attribute.primaryService),
                                             ATTHandleUUID(handle: 11, uuid: Attribute.characteristicDeclaration)]))
        #expect(s.ask(.findInformationRequest(start: 12, end: 12)) == .findInformationResponse([ATTHandleUUID(handle: 12, uuid: Self.long)]))
        #expect(s.ask(.findInformationRequest(start: 19, end: 19))
                == .findInformationResponse([ATTHandleUUID(handle: 19, uuid: Attribute.clientConfigurationType)]))
        #expect(s.ask(.findInformationRequest(start: 20, end: 0xFFFF)) == Self.error(0x04, 20, 0x0A))
    }

    @Test func invalidRangesAreInvalidHandle() {
        var s = Session()
        #expect(s.ask(.findInformationRequest(start: 0, end: 5)) == Self.error(0x04, 0, 0x01))
        #expect(s.ask(.readByTypeRequest(start: 9, end: 3, type: Attribute.characteristicDeclaration)) == Self.error(0x08, 9, 0x01))
        #expect(s.ask(.readByGroupTypeRequest(start: 0, end: 0, type: Attribute.primaryService)) == Self.error(0x10, 0, 0x01))
        #expect(s.ask(.findByTypeValueRequest(start: 7, end: 6, type: 0x2800, value: [])) == Self.error(0x06, 7, 0x01))
    }

    @Test func longValuesReadInBlobsAndEndAtTheirLength() {
        var s = Session()
        #expect(s.ask(.readRequest(handle: 12)) == .readResponse(Array(Self.expectedLong.prefix(22))))
        #expect(s.ask(.readBlobRequest(handle: 12, offset: 22)) == .readBlobResponse(Array(Self.expectedLong[22..<44])))
        #expect(s.ask(.readBlobRequest(handle: 12, offset: 300)) == .readBlobResponse([]))
        #expect(s.ask(.readBlobRequest(handle: 12, offset: 301)) == Self.error(0x0C, 12, 0x07))
        _ = s.ask(.exchangeMTURequest(247))
        #expect(s.ask(.readRequest(handle: 12)) == .readResponse(Array(Self.expectedLong.prefix(246))))
    }

    static let expectedLong = (0..<300).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }

    @Test func readsAndWritesAreCheckedAgainstPermissions() {
        var s = Session()
        #expect(s.ask(.readRequest(handle: 0)) == Self.error(0x0A, 0, 0x01))
        #expect(s.ask(.readRequest(handle: 99)) == Self.error(0x0A, 99, 0x01))
        #expect(s.ask(.readRequest(handle: 14)) == Self.error(0x0A, 14, 0x02))
        #expect(s.ask(.writeRequest(handle: 12, value: [1])) == Self.error(0x12, 12, 0x03))
        #expect(s.ask(.writeRequest(handle: 99, value: [1])) == Self.error(0x12, 99, 0x01))
        #expect(s.ask(.writeRequest(handle: 14, value: [1, 2])) == .writeResponse)
        s.behaviour.refuseWrites = ATTRefusal(0x80)
        #expect(s.ask(.writeRequest(handle: 14, value: [3])) == Self.error(0x12, 14, 0x80))
        s.behaviour.refuseWrites = nil
        // Write Commands: to a characteristic that takes them, silently; to one that does not, dropped.
        #expect(s.ask(.writeCommand(handle: 16, value: [9])) == nil)
        #expect(s.ask(.writeCommand(handle: 14, value: [9])) == nil)
        #expect(s.behaviour.writes.map(\.handle) == [14, 14, 16])
        #expect(s.behaviour.writes.map(\.withResponse) == [true, true, false])
    }

    @Test func clientConfigurationIsCheckedAndKeptPerLink() {
        var s = Session()
        #expect(s.ask(.writeRequest(handle: 19, value: [0x01])) == Self.error(0x12, 19, 0x0D))
        #expect(s.ask(.writeRequest(handle: 19, value: [0x04, 0x00])) == Self.error(0x12, 19, 0xFD))
        #expect(s.ask(.writeRequest(handle: 19, value: [0x03, 0x00])) == .writeResponse)
        #expect(s.behaviour.configurations == [18: 0x0003])
        #expect(s.ask(.readRequest(handle: 19)) == .readResponse([0x03, 0x00]))
        // Service Changed offers indications only.
        #expect(s.ask(.writeRequest(handle: 9, value: [0x01, 0x00])) == Self.error(0x12, 9, 0xFD))
        #expect(s.ask(.writeRequest(handle: 9, value: [0x02, 0x00])) == .writeResponse)
        s.server.reset()
        #expect(s.ask(.readRequest(handle: 19)) == .readResponse([0x00, 0x00]))
    }

    @Test func notificationsGoOnlyWhenEnabledAndAreCutToTheMTU() {
        var s = Session()
        #expect(s.server.notification(valueHandle: 18, value: [1]) == nil)
        _ = s.ask(.writeRequest(handle: 19, value: [0x01, 0x00]))
        let value = [UInt8](repeating: 0x55, count: 40)
        #expect(s.server.notification(valueHandle: 18, value: value) == [0x1B, 18, 0] + value.prefix(20))
        #expect(s.server.indication(valueHandle: 18, value: [1]) == nil, "indications were not enabled")
    }

    @Test func indicationsWaitForTheirConfirmation() {
        var s = Session()
        _ = s.ask(.writeRequest(handle: 19, value: [0x02, 0x00]))
        #expect(s.server.indication(valueHandle: 18, value: [1]) == [0x1D, 18, 0, 1])
        #expect(s.server.indication(valueHandle: 18, value: [2]) == nil)
        #expect(s.server.indication(valueHandle: 18, value: [3]) == nil)
        #expect(s.server.receive(ATTPDU.handleValueConfirmation.encoded, behaviour: &s.behaviour) == [[0x1D, 18, 0, 2]])
        #expect(s.server.receive(ATTPDU.handleValueConfirmation.encoded, behaviour: &s.behaviour) == [[0x1D, 18, 0, 3]])
        #expect(s.server.receive(ATTPDU.handleValueConfirmation.encoded, behaviour: &s.behaviour) == [])
        // The queue behind an unconfirmed indication is bounded: the oldest waiting one goes.
        #expect(s.server.indication(valueHandle: 18, value: [0]) != nil)
        for index in 0..<(ATTServer.indicationQueueLimit + 5) {
            #expect(s.server.indication(valueHandle: 18, value: [UInt8(index)]) == nil)
        }
        #expect(s.server.droppedIndications == 5)
        #expect(s.server.receive(ATTPDU.handleValueConfirmation.encoded, behaviour: &s.behaviour) == [[0x1D, 18, 0, 5]])
    }

    @Test func nonsenseIsAnsweredTheWayTheProtocolSays() {
        var s = Session()
        // A request cut short: Invalid PDU, naming the request.
        #expect(s.ask([0x0A, 0x01]) == Self.error(0x0A, 0, 0x04))
        // A Read By Type with a 3-byte UUID.
        #expect(s.ask([0x08, 1, 0, 0xFF, 0xFF, 1, 2, 3]) == Self.error(0x08, 0, 0x04))
        // Prepare Write and Read Multiple are requests this server does not implement.
        #expect(s.ask([0x16, 12, 0, 0, 0, 1]) == Self.error(0x16, 0, 0x06))
        #expect(s.ask([0x0E, 12, 0, 18, 0]) == Self.error(0x0E, 0, 0x06))
        // An unknown command (bit 6) and a stray response are dropped without an answer.
        #expect(s.ask([0x7E, 1, 2]) == nil)
        #expect(s.ask([0x13]) == nil)
        #expect(s.ask([]) == nil)
        // A request longer than the MTU.
        #expect(s.ask(ATTPDU.writeRequest(handle: 16, value: [UInt8](repeating: 0, count: 30)).encoded) == Self.error(0x12, 0, 0x04))
    }
}
