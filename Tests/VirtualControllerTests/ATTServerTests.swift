import BLEProtocol
import HAL
import Testing
import Transports
@testable import Peripherals
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
        #expect(s.server.indication(valueHandle: 18, value: [1], at: .zero) == nil, "indications were not enabled")
    }

    @Test func indicationsWaitForTheirConfirmation() {
        var s = Session()
        _ = s.ask(.writeRequest(handle: 19, value: [0x02, 0x00]))
        #expect(s.server.indication(valueHandle: 18, value: [1], at: .zero) == [0x1D, 18, 0, 1])
        #expect(s.server.indication(valueHandle: 18, value: [2], at: .zero) == nil)
        #expect(s.server.indication(valueHandle: 18, value: [3], at: .zero) == nil)
        #expect(s.server.receive(ATTPDU.handleValueConfirmation.encoded, behaviour: &s.behaviour) == [[0x1D, 18, 0, 2]])
        #expect(s.server.receive(ATTPDU.handleValueConfirmation.encoded, behaviour: &s.behaviour) == [[0x1D, 18, 0, 3]])
        #expect(s.server.receive(ATTPDU.handleValueConfirmation.encoded, behaviour: &s.behaviour) == [])
        // The queue behind an unconfirmed indication is bounded: the oldest waiting one goes.
        #expect(s.server.indication(valueHandle: 18, value: [0], at: .zero) != nil)
        for index in 0..<(ATTServer.indicationQueueLimit + 5) {
            #expect(s.server.indication(valueHandle: 18, value: [UInt8(index)], at: .zero) == nil)
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
        // Read Multiple of one handle, Execute Write with flags 2: malformed.
        #expect(s.ask([0x0E, 12, 0]) == Self.error(0x0E, 0, 0x04))
        #expect(s.ask([0x18, 0x02]) == Self.error(0x18, 0, 0x04))
        // An unknown command (bit 6) and a stray response are dropped without an answer.
        #expect(s.ask([0x7E, 1, 2]) == nil)
        #expect(s.ask([0x13]) == nil)
        #expect(s.ask([]) == nil)
        // A request longer than the MTU.
        #expect(s.ask(ATTPDU.writeRequest(handle: 16, value: [UInt8](repeating: 0, count: 30)).encoded) == Self.error(0x12, 0, 0x04))
    }

    // MARK: long writes, several reads, security, the transaction timeout (issue 28)

    @Test func aLongWriteIsQueuedThenWrittenWholeOnExecute() {
        var s = Session()
        let value = (0..<40).map { UInt8($0) }
        // Prepare Write Response echoes handle, offset and part, so the client can check them.
        #expect(s.server.receive([0x16, 16, 0, 0, 0] + value.prefix(18), behaviour: &s.behaviour) == [[0x17, 16, 0, 0, 0] + value.prefix(18)])
        #expect(s.server.receive([0x16, 16, 0, 18, 0] + value[18..<36], behaviour: &s.behaviour) == [[0x17, 16, 0, 18, 0] + value[18..<36]])
        #expect(s.server.receive([0x16, 16, 0, 36, 0] + value[36...], behaviour: &s.behaviour) == [[0x17, 16, 0, 36, 0] + value[36...]])
        #expect(s.behaviour.writes.isEmpty, "nothing is written before Execute Write")
        #expect(s.ask([0x18, 0x01]) == .unknown(opcode: 0x19, parameters: []))
        #expect(s.behaviour.writes.map(\.handle) == [16])
        #expect(s.behaviour.writes.first?.value == value)
        // The queue is empty afterwards: executing again writes nothing more.
        _ = s.ask([0x18, 0x01])
        #expect(s.behaviour.writes.count == 1)
    }

    @Test func aCancelledOrBrokenLongWriteWritesNothing() {
        var s = Session()
        _ = s.ask([0x16, 16, 0, 0, 0, 1, 2])
        #expect(s.ask([0x18, 0x00]) == .unknown(opcode: 0x19, parameters: []))
        #expect(s.behaviour.writes.isEmpty)
        // A part that starts past the end of what is there: Invalid Offset at execution, naming the handle.
        _ = s.ask([0x16, 16, 0, 0, 0, 1, 2])
        _ = s.ask([0x16, 16, 0, 5, 0, 3])
        #expect(s.ask([0x18, 0x01]) == Self.error(0x18, 16, 0x07))
        #expect(s.behaviour.writes.isEmpty)
        // Permissions are checked when the part is prepared.
        #expect(s.ask([0x16, 12, 0, 0, 0, 1]) == Self.error(0x16, 12, 0x03))
        #expect(s.ask([0x16, 99, 0, 0, 0, 1]) == Self.error(0x16, 99, 0x01))
        // The queue is bounded.
        for _ in 0..<ATTServer.prepareQueueEntries { _ = s.ask([0x16, 16, 0, 0, 0, 1]) }
        #expect(s.ask([0x16, 16, 0, 0, 0, 1]) == Self.error(0x16, 16, 0x09))
        // A behaviour's refusal of the whole value ends the execution with its code.
        _ = s.ask([0x18, 0x00])
        s.behaviour.refuseWrites = ATTRefusal(0x80)
        _ = s.ask([0x16, 16, 0, 0, 0, 9])
        #expect(s.ask([0x18, 0x01]) == Self.error(0x18, 16, 0x80))
    }

    @Test func readMultipleAnswersEveryValueOrTheFirstRefusal() {
        var s = Session()
        // Device Name ("Lab", handle 3) and the gauge (0x2A, handle 18), back to back.
        #expect(s.ask([0x0E, 3, 0, 18, 0]) == .unknown(opcode: 0x0F, parameters: Array("Lab".utf8) + [0x2A]))
        // The variable form gives each its length.
        #expect(s.ask([0x20, 3, 0, 18, 0]) == .unknown(opcode: 0x21, parameters: [3, 0] + Array("Lab".utf8) + [1, 0, 0x2A]))
        // The write-only secret refuses the whole request, naming its handle.
        #expect(s.ask([0x0E, 3, 0, 14, 0]) == Self.error(0x0E, 14, 0x02))
        #expect(s.ask([0x0E, 3, 0, 77, 0]) == Self.error(0x0E, 77, 0x01))
        // Cut to ATT_MTU − 1: the 300-byte value fills the response.
        #expect(s.server.receive([0x0E, 11, 0, 3, 0], behaviour: &s.behaviour).first?.count == 23)
    }

    @Test func securedValuesAnswerInsufficientEncryptionOrAuthenticationUntilTheLinkHasIt() {
        var builder = AttributeDatabase.Builder()
        builder.service(Self.custom, [
            CharacteristicDefinition(Self.secret, [.read, .write], value: [7],
                                     security: AttributeSecurity(read: .encrypted, write: .authenticated)),
        ])
        var server = ATTServer(database: builder.build())
        var behaviour = Recorder()
        func ask(_ bytes: [UInt8]) -> [[UInt8]] { server.receive(bytes, behaviour: &behaviour) }
        #expect(ask(ATTPDU.readRequest(handle: 3).encoded) == [Self.error(0x0A, 3, 0x0F).encoded])
        #expect(ask(ATTPDU.readByTypeRequest(start: 1, end: 0xFFFF, type: Self.secret).encoded) == [Self.error(0x08, 3, 0x0F).encoded])
        #expect(ask(ATTPDU.writeRequest(handle: 3, value: [1]).encoded) == [Self.error(0x12, 3, 0x05).encoded])
        _ = ask(ATTPDU.writeCommand(handle: 3, value: [1]).encoded)
        #expect(behaviour.writes.isEmpty)
        server.setLinkSecurity(.encrypted)
        #expect(ask(ATTPDU.readRequest(handle: 3).encoded) == [ATTPDU.readResponse([7]).encoded])
        #expect(ask(ATTPDU.writeRequest(handle: 3, value: [1]).encoded) == [Self.error(0x12, 3, 0x05).encoded])
        server.setLinkSecurity(.authenticated)
        #expect(ask(ATTPDU.writeRequest(handle: 3, value: [1]).encoded) == [ATTPDU.writeResponse.encoded])
        #expect(behaviour.writes.map(\.value) == [[1]])
        // A new link starts without security again.
        server.reset()
        #expect(ask(ATTPDU.readRequest(handle: 3).encoded) == [Self.error(0x0A, 3, 0x0F).encoded])
    }

    @Test func anIndicationUnconfirmedFor30SecondsEndsTheBearer() {
        var s = Session()
        _ = s.ask(.writeRequest(handle: 19, value: [0x03, 0x00]))
        #expect(s.server.transactionDeadline == nil)
        #expect(s.server.indication(valueHandle: 18, value: [1], at: .seconds(5)) != nil)
        #expect(s.server.transactionDeadline == .seconds(35))
        let early = s.server.expire(at: .seconds(34))
        #expect(!early)
        // A confirmation in time clears the deadline; the next indication starts its own.
        _ = s.server.receive(ATTPDU.handleValueConfirmation.encoded, behaviour: &s.behaviour, at: .seconds(34))
        #expect(s.server.transactionDeadline == nil)
        #expect(s.server.indication(valueHandle: 18, value: [2], at: .seconds(40)) != nil)
        let expired = s.server.expire(at: .seconds(70))
        #expect(expired)
        #expect(s.server.timedOut)
        // Nothing more goes out or is answered on this bearer.
        #expect(s.ask(.readRequest(handle: 18)) == nil)
        #expect(s.server.notification(valueHandle: 18, value: [3]) == nil)
        #expect(s.server.indication(valueHandle: 18, value: [3], at: .seconds(71)) == nil)
        let again = s.server.expire(at: .seconds(200))
        #expect(!again, "it says so once")
        s.server.reset()
        #expect(s.ask(.readRequest(handle: 18)) == .readResponse([0x2A]))
    }
}
