import BLEProtocol
import HAL
import Testing
@testable import Transports

/// The recorder reads the HCI traffic the way the host does: advertising reports (a change only),
/// connections, ATT both ways put back together from ACL fragments, and who ended the link.
@Suite struct CassetteRecordingTests {
    static let peer = BLEAddress(string: "B0:B0:B0:00:00:01")!

    static func advertisingReport(eventType: UInt8, rssi: Int8, data: [UInt8]) -> HCIPacket {
        .event(HCIEventPacket(code: 0x3E, parameters: [0x02, 1, eventType, 0x00] + peer.littleEndianBytes + [UInt8(data.count)] + data
                              + [UInt8(bitPattern: rssi)]))
    }

    static func connectionComplete(handle: UInt16) -> HCIPacket {
        .event(HCIEventPacket(code: 0x3E, parameters: [0x01, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x00, 0x00]
                              + peer.littleEndianBytes + [0x18, 0x00, 0x00, 0x00, 0xF4, 0x01, 0x00]))
    }

    /// One ATT PDU cut into ACL fragments of `size` bytes.
    static func acl(handle: UInt16, _ pdu: [UInt8], size: Int = 27) -> [HCIPacket] {
        let l2cap = L2CAPFrame(channel: L2CAPFrame.att, payload: pdu).encoded
        return stride(from: 0, to: l2cap.count, by: size).map { start in
            .acl(ACLPacket(handle: handle, boundary: start == 0 ? .firstFlushable : .continuing,
                           data: Array(l2cap[start..<min(start + size, l2cap.count)])))
        }
    }

    @Test func aSessionBecomesOnePeripheralWithItsAdvertisingAndConnection() throws {
        var recording = CassetteRecording()
        let ad: [UInt8] = [0x02, 0x01, 0x06]
        recording.record(Self.advertisingReport(eventType: 0x00, rssi: -50, data: ad), sentByHost: false, at: .milliseconds(100))
        recording.record(Self.advertisingReport(eventType: 0x04, rssi: -50, data: [0x03, 0x09, 0x41, 0x42]), sentByHost: false, at: .milliseconds(101))
        // The same bytes again are not a change.
        recording.record(Self.advertisingReport(eventType: 0x00, rssi: -52, data: ad), sentByHost: false, at: .milliseconds(200))
        recording.record(Self.connectionComplete(handle: 0x0040), sentByHost: false, at: .seconds(1))
        for packet in Self.acl(handle: 0x0040, [0x0A, 0x03, 0x00]) { recording.record(packet, sentByHost: true, at: .milliseconds(1_010)) }
        let long = [0x0B] + [UInt8](repeating: 0x5A, count: 60)
        for packet in Self.acl(handle: 0x0040, long) { recording.record(packet, sentByHost: false, at: .milliseconds(1_030)) }
        // Traffic on another link, and other channels, is not this connection's.
        for packet in Self.acl(handle: 0x0041, [0x0A, 0x05, 0x00]) { recording.record(packet, sentByHost: true, at: .milliseconds(1_040)) }
        recording.record(.acl(ACLPacket(handle: 0x0040, boundary: .firstFlushable, data: L2CAPFrame(channel: 0x05, payload: [1, 2]).encoded)),
                         sentByHost: false, at: .milliseconds(1_050))
        recording.record(.command(HCICommand(opcode: 0x0406, parameters: [0x40, 0x00, 0x13])), sentByHost: true, at: .milliseconds(1_100))
        recording.record(.event(HCIEventPacket(code: 0x05, parameters: [0x00, 0x40, 0x00, 0x16])), sentByHost: false, at: .milliseconds(1_120))

        let peripheral = try #require(recording.cassette.peripheral(Self.peer))
        #expect(recording.cassette.peripherals.count == 1)
        #expect(peripheral.advertising == [
            .init(at: .milliseconds(100), kind: .connectable, rssi: -50, data: ad),
            .init(at: .milliseconds(101), kind: .scanResponse, rssi: -50, data: [0x03, 0x09, 0x41, 0x42]),
        ])
        let connection = try #require(peripheral.connections.first)
        #expect(connection.at == .seconds(1))
        #expect(connection.att == [
            .init(at: .milliseconds(10), direction: .toPeripheral, pdu: [0x0A, 0x03, 0x00]),
            .init(at: .milliseconds(30), direction: .fromPeripheral, pdu: long),
        ])
        #expect(connection.end == .init(at: .milliseconds(120), byHost: true, reason: 0x16))
        #expect(recording.dropped == 0)
    }

    /// One SMP PDU as one ACL packet on channel 6.
    static func smp(handle: UInt16, _ pdu: SMPPDU) -> HCIPacket {
        .acl(ACLPacket(handle: handle, boundary: .firstFlushable, data: L2CAPFrame(channel: L2CAPFrame.securityManager, payload: pdu.encoded).encoded))
    }

    /// A pairing is recorded as happening (the method, each side's key kinds, the encryption),
    /// never with a key's value; it is written as format 1.2 and read back the same.
    @Test func aPairingIsRecordedByMethodAndKeyKindsNeverValues() throws {
        var recording = CassetteRecording()
        recording.record(Self.connectionComplete(handle: 0x0040), sentByHost: false, at: .seconds(1))
        let request = PairingFeatures(ioCapability: .keyboardOnly, authentication: [.bonding, .mitm, .secureConnections],
                                      initiatorKeys: [.encryptionKey], responderKeys: [.encryptionKey, .identityKey])
        let response = PairingFeatures(ioCapability: .displayOnly, authentication: [.bonding, .mitm, .secureConnections],
                                       initiatorKeys: [], responderKeys: [.encryptionKey, .identityKey])
        let ltk = try #require(SecurityKey(bytes: (0x10...0x1F).map { UInt8($0) }))
        let irk = try #require(SecurityKey(bytes: (0xA0...0xAF).map { UInt8($0) }))
        recording.record(Self.smp(handle: 0x0040, .pairingRequest(request)), sentByHost: true, at: .milliseconds(1_010))
        recording.record(Self.smp(handle: 0x0040, .pairingResponse(response)), sentByHost: false, at: .milliseconds(1_012))
        recording.record(.event(HCIEventPacket(code: 0x08, parameters: [0x00, 0x40, 0x00, 0x01])), sentByHost: false, at: .milliseconds(1_050))
        recording.record(Self.smp(handle: 0x0040, .encryptionInformation(ltk: ltk)), sentByHost: false, at: .milliseconds(1_051))
        recording.record(Self.smp(handle: 0x0040, .centralIdentification(ediv: 0x1234, rand: 0x0102030405060708)), sentByHost: false, at: .milliseconds(1_051))
        recording.record(Self.smp(handle: 0x0040, .identityInformation(irk: irk)), sentByHost: false, at: .milliseconds(1_052))
        recording.record(Self.smp(handle: 0x0040, .identityAddressInformation(Self.peer)), sentByHost: false, at: .milliseconds(1_052))
        // A later pairing on the same link that the device refuses.
        recording.record(Self.smp(handle: 0x0040, .pairingRequest(request)), sentByHost: true, at: .milliseconds(1_200))
        recording.record(Self.smp(handle: 0x0040, .pairingFailed(.repeatedAttempts)), sentByHost: false, at: .milliseconds(1_201))

        let connection = try #require(recording.cassette.peripheral(Self.peer)?.connections.first)
        #expect(connection.security == [
            .init(at: .milliseconds(12), event: .pairing(method: "passkey", secureConnections: true,
                                                          deviceKeys: ["ltk", "ediv-rand", "irk", "identity-address"], hostKeys: [])),
            .init(at: .milliseconds(50), event: .encrypted),
            .init(at: .milliseconds(201), event: .pairingFailed(reason: 0x09)),
        ])
        #expect(connection.att.isEmpty, "SMP is not ATT")
        let text = CassetteFormat.text(of: recording.cassette)
        #expect(text.hasPrefix("hwprobe-cassette 1.2\n"))
        #expect(text.contains("pairing 0.012000 passkey sc ltk,ediv-rand,irk,identity-address -\n"), "\(text)")
        #expect(text.contains("encrypted 0.050000\npairing-failed 0.201000 0x09\n"), "\(text)")
        for secret in [ltk, irk] {
            #expect(!text.contains(Hex.string(secret.bytes, .lower)) && !text.contains(Hex.string(secret.bytes.reversed(), .lower)))
        }
        #expect(try CassetteReader.read(Array(text.utf8)) == recording.cassette)
        // A file that says 1.1 has no security records: there they are damage.
        let older = text.replacingOccurrences(of: "hwprobe-cassette 1.2", with: "hwprobe-cassette 1.1")
        #expect(throws: CassetteError.self) { try CassetteReader.read(Array(older.utf8)) }
        // Without security records a cassette is still written as 1.1.
        var plain = recording.cassette
        plain.peripherals[0].connections[0].security = []
        #expect(CassetteFormat.text(of: plain).hasPrefix("hwprobe-cassette 1.1\n"))
    }

    @Test func aLinkThePeripheralEndsIsMarkedPeer() throws {
        var recording = CassetteRecording()
        recording.record(Self.connectionComplete(handle: 0x0001), sentByHost: false, at: .zero)
        recording.record(.event(HCIEventPacket(code: 0x05, parameters: [0x00, 0x01, 0x00, 0x13])), sentByHost: false, at: .seconds(2))
        let end = try #require(recording.cassette.peripherals.first?.connections.first?.end)
        #expect(end == .init(at: .seconds(2), byHost: false, reason: 0x13))
    }

    /// What our host resolved a private address to is kept beside it (only for a resolvable
    /// private address the recording has), written as format 1.3 and read back; anonymizing
    /// replaces the identity too, one replacement for one identity.
    @Test func aResolvedIdentityIsKeptBesideThePrivateAddress() throws {
        let rpa = try #require(BLEAddress(string: "4A:11:22:33:44:55", defaultKind: .random))
        let identity = try #require(BLEAddress(string: "D4:12:3A:00:18:99"))
        var recording = CassetteRecording()
        let report = HCIPacket.event(HCIEventPacket(code: 0x3E, parameters: [0x02, 1, 0x00, 0x01] + rpa.littleEndianBytes + [3, 0x02, 0x01, 0x06, 0xC4]))
        recording.record(report, sentByHost: false, at: .milliseconds(10))
        recording.record(Self.advertisingReport(eventType: 0x00, rssi: -60, data: [0x02, 0x01, 0x06]), sentByHost: false, at: .milliseconds(11))
        recording.resolved(rpa, to: identity)
        // A public address is no private one; an address never recorded is not added.
        recording.resolved(Self.peer, to: identity)
        recording.resolved(try #require(BLEAddress(string: "4A:00:00:00:00:01", defaultKind: .random)), to: identity)
        #expect(recording.cassette.peripherals.map(\.identity) == [identity, nil])

        let text = CassetteFormat.text(of: recording.cassette)
        #expect(text.hasPrefix("hwprobe-cassette 1.3\n"))
        #expect(text.contains("device ble 4A:11:22:33:44:55 random\nresolved D4:12:3A:00:18:99 public\n"))
        #expect(try CassetteReader.read(Array(text.utf8)) == recording.cassette)

        let anonymized = CassetteAnonymizer.anonymize(recording.cassette)
        let device = try #require(anonymized.peripherals.first { $0.identity != nil })
        #expect(device.address.bytes[0] >> 6 == 0b01, "still a resolvable private address")
        #expect(device.identity != identity && device.identity?.kind == .public)
        #expect(!CassetteFormat.text(of: anonymized).contains("D4:12:3A:00:18:99"))
    }

    @Test func advertisingIsBoundedPerPeripheral() {
        var recording = CassetteRecording()
        for index in 0..<(BLECassette.Limits.advertisingRecords + 10) {
            let data: [UInt8] = [0x05, 0x16, 0x1B, 0x18, UInt8(index & 0xFF), UInt8(index >> 8)]
            recording.record(Self.advertisingReport(eventType: 0x03, rssi: -70, data: data), sentByHost: false, at: .milliseconds(Int64(index)))
        }
        #expect(recording.cassette.peripherals.first?.advertising.count == BLECassette.Limits.advertisingRecords)
        #expect(recording.dropped == 10)
        #expect(recording.cassette.peripherals.first?.advertising.first?.kind == .nonConnectable)
    }
}
