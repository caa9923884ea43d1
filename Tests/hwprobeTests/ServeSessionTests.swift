import BLEProtocol
import HAL
import HALFakes
@testable import Peripherals
import Testing
import Transports
@testable import hwprobe

/// What `serve` makes of the ATT PDUs both ways: the contract's JSON events and the recording
/// from the device's side, on the mirror's database (its handles named by UUID).
@Suite struct ServeSessionTests {
    static let central = BLEAddress(string: "C0:C0:C0:00:00:01")!
    static let device = BLEAddress(string: "C0:FF:EE:00:4F:2A/random")!

    @Test func aConversationBecomesTheContractsEventsAndADeviceSideCassette() throws {
        let mirror = MirrorPeripheral()
        let session = ServeSession(database: mirror.database)
        let handles = mirror.handles
        var lines: [ServeSession.Line] = []
        func take(_ event: PeripheralHost.Event, _ ms: Int64) { lines += session.take(event, at: .milliseconds(ms)) }
        take(.advertising(AdvertisingSetup(form: .extended(data: [2, 1, 6]), randomAddress: Self.device), address: Self.device), 0)
        take(.connected(PeripheralLinkInfo(handle: 1, central: Self.central, interval: 24, latency: 0, supervisionTimeout: 500)), 1000)
        take(.fromCentral(ATTPDU.exchangeMTURequest(185).encoded), 1001)
        take(.toCentral(ATTPDU.exchangeMTUResponse(247).encoded), 1002)
        // Subscribing to scanState: a write of 01 00 to its CCCD.
        take(.fromCentral(ATTPDU.writeRequest(handle: handles.scanState + 1, value: [1, 0]).encoded), 1010)
        take(.toCentral(ATTPDU.writeResponse.encoded), 1011)
        take(.fromCentral(ATTPDU.readRequest(handle: handles.deviceInfo).encoded), 1020)
        take(.toCentral(ATTPDU.readResponse([1, 1, 4, 2, 82]).encoded), 1021)
        // A refused write names its error.
        take(.fromCentral(ATTPDU.writeRequest(handle: handles.scanToken, value: [1]).encoded), 1030)
        take(.toCentral(ATTPDU.errorResponse(requestOpcode: 0x12, handle: handles.scanToken, code: 0x0D).encoded), 1031)
        // A long write, in two parts, reported once executed.
        take(.fromCentral([0x16] + LittleEndian.u16(handles.initialize) + [0, 0, 1, 0x08]), 1040)
        take(.toCentral([0x17] + LittleEndian.u16(handles.initialize) + [0, 0, 1, 0x08]), 1041)
        take(.fromCentral([0x16] + LittleEndian.u16(handles.initialize) + [2, 0, 0x07, 0]), 1042)
        take(.toCentral([0x17] + LittleEndian.u16(handles.initialize) + [2, 0, 0x07, 0]), 1043)
        take(.fromCentral([0x18, 0x01]), 1044)
        take(.toCentral([0x19]), 1045)
        take(.toCentral(ATTPDU.handleValueNotification(handle: handles.scanState, value: [1, 0, 0]).encoded), 1050)
        take(.fromCentral(ATTPDU.writeRequest(handle: handles.scanState + 1, value: [0, 0]).encoded), 1060)
        take(.toCentral(ATTPDU.writeResponse.encoded), 1061)
        take(.disconnected(reason: 0x13), 2000)

        let state = MirrorProfileValues.uuid(0x05).description
        #expect(lines.map(\.event) == ["advertising", "connected", "mtu", "subscribed", "read", "write", "write", "notified", "unsubscribed", "disconnected"])
        #expect(lines[2].mtu == 185)
        #expect(lines[3].handle == Int(handles.scanState) && lines[3].uuid == state && lines[3].indications == false)
        #expect(lines[4].value == "0101040252" && lines[4].uuid == MirrorProfileValues.uuid(0x02).description)
        #expect(lines[5].error == "0x0D Invalid Attribute Value Length" && lines[5].value == "01")
        #expect(lines[6].value == "01080700" && lines[6].handle == Int(handles.initialize))
        #expect(lines[7].value == "010000")
        #expect(lines[9].reason == "0x13")
        #expect(ServeSession.json(lines[1]) == #"{"central":"C0:C0:C0:00:00:01","event":"connected","t":1}"# + "\n")

        // The recording: the device as advertised, one connection, the central's PDUs `>`.
        let cassette = session.cassette
        let peripheral = try #require(cassette.peripherals.first)
        #expect(peripheral.address == Self.device)
        #expect(peripheral.advertising.map(\.kind) == [.extended])
        let connection = try #require(peripheral.connections.first)
        #expect(connection.at == .seconds(1))
        #expect(connection.att.first?.direction == .toPeripheral && connection.att.first?.at == .milliseconds(1))
        #expect(connection.att.count == 17)
        #expect(connection.end == BLECassette.Disconnection(at: .seconds(1), byHost: true, reason: 0x13))
        // It reads back as the cassette format says.
        let text = CassetteFormat.text(of: cassette)
        #expect(try CassetteReader.read(Array(text.utf8)) == cassette)
    }

    /// The recording keeps a connection's security from the served side: a failed pairing by its
    /// reason, the pairing before the encryption it made (the device's keys are the ones we
    /// sent), a later encryption with the bond; and reads back as format 1.2 with no key bytes.
    @Test func aPairingIsRecordedFromTheServedSideWithKindsNotKeys() throws {
        let session = ServeSession(database: MirrorPeripheral().database)
        func take(_ event: PeripheralHost.Event, _ ms: Int64) { _ = session.take(event, at: .milliseconds(ms)) }
        let encrypted = LinkSecurity(isEncrypted: true, isAuthenticated: false, isSecureConnections: false, keySize: 16)
        take(.advertising(AdvertisingSetup(form: .extended(data: [2, 1, 6]), randomAddress: Self.device), address: Self.device), 0)
        take(.connected(PeripheralLinkInfo(handle: 1, central: Self.central, interval: 24, latency: 0, supervisionTimeout: 500)), 1000)
        take(.secured(.failed(PairingFailure(.received(.confirmValueFailed), "typo"))), 1100)
        // Refused here before anything went over the air: not a Pairing Failed on the link.
        take(.secured(.failed(PairingFailure(.refused(.repeatedAttempts), "wait"))), 1150)
        take(.securityChanged(encrypted), 1200)
        let paired = PairingOutcome(method: .justWorks, security: encrypted, bond: nil, peerIdentity: nil, keyNames: ["ltk", "irk"],
                                    sentKeyKinds: ["ltk", "ediv-rand"], receivedKeyKinds: ["irk", "identity-address"])
        take(.secured(.paired(paired)), 1300)
        take(.securityChanged(encrypted), 1500)
        take(.disconnected(reason: 0x13), 2000)

        let connection = try #require(session.cassette.peripherals.first?.connections.first)
        #expect(connection.security == [
            BLECassette.SecurityRecord(at: .milliseconds(100), event: .pairingFailed(reason: 0x04)),
            BLECassette.SecurityRecord(at: .milliseconds(200), event: .pairing(method: "just-works", secureConnections: false,
                                                                                deviceKeys: ["ltk", "ediv-rand"], hostKeys: ["irk", "identity-address"])),
            BLECassette.SecurityRecord(at: .milliseconds(200), event: .encrypted),
            BLECassette.SecurityRecord(at: .milliseconds(500), event: .encrypted),
        ])
        let text = CassetteFormat.text(of: session.cassette)
        #expect(text.hasPrefix("hwprobe-cassette 1.2"))
        #expect(text.contains("pairing 0.200000 just-works legacy ltk,ediv-rand irk,identity-address"))
        #expect(try CassetteReader.read(Array(text.utf8)) == session.cassette)
    }

    @Test func jsonLinesEscapeWhatCouldDriveATerminal() throws {
        var line = ServeSession.Line(event: "write", t: 0.25)
        line.error = "0x80 \u{1B}]0;T\u{07}\u{9B}\"q\"\\"
        let text = ServeSession.json(line)
        #expect(text == #"{"error":"0x80 \u001b]0;T\u0007\u009b\"q\"\\","event":"write","t":0.25}"# + "\n")
        let parsed = try JSONShape.parse(text)
        #expect(parsed["error"]?.string == line.error)
    }

    /// `relay`'s lines say their side, and name what the SIG or the mirror profile names; the
    /// JSON keeps the UUID alone (its key order sorted, `side` among them).
    @Test func relayLinesSayTheirSideAndNameWhatTheyCan() throws {
        var line = ServeSession.Line("read", at: .milliseconds(1_250))
        line.side = "app"
        line.handle = 0x10
        line.uuid = "2A19"
        line.value = "64"
        #expect(ServeSession.human(line) == "   1.250 s  app    read 0x0010 Battery Level (2A19) = 64")
        line.uuid = "7B9E0005-3C2A-4F1B-9E6D-5A4C3B2A1F00"
        #expect(ServeSession.human(line).contains("mirror scanState (7B9E0005-"))
        #expect(ServeSession.json(line) == #"{"event":"read","handle":16,"side":"app","t":1.25,"uuid":"7B9E0005-3C2A-4F1B-9E6D-5A4C3B2A1F00","value":"64"}"# + "\n")
        // serve's own lines are as they were: no side, the UUID alone.
        line.side = nil
        #expect(ServeSession.human(line) == "   1.250 s  read 0x0010 7B9E0005-3C2A-4F1B-9E6D-5A4C3B2A1F00 = 64")
    }
}
