import BLEProtocol
import HAL
import Testing

/// The HCI commands and events of the Security Manager's routing, byte for byte as Core Vol 4
/// Part E lays them out (§7.8.24–26, §7.7.8, §7.7.39, §7.7.65.5).
@Suite struct SecurityHCITests {
    static let ltk = SecurityKey(bytes: Array(1...16))!

    @Test func theCommandsCarryTheirParametersLittleEndian() {
        let key = EncryptionKey(ltk: Self.ltk, ediv: 0xBEEF, rand: 0x0102_0304_0506_0708)
        let enable = SecurityHCI.enableEncryption(handle: 0x0040, key: key)
        #expect(enable.opcode == 0x2019)
        #expect(enable.parameters == [0x40, 0x00, 8, 7, 6, 5, 4, 3, 2, 1, 0xEF, 0xBE] + Array((1...16).reversed()))
        let reply = SecurityHCI.longTermKeyRequestReply(handle: 0x0041, ltk: Self.ltk)
        #expect(reply.opcode == 0x201A && reply.parameters == [0x41, 0x00] + Array((1...16).reversed()))
        let negative = SecurityHCI.longTermKeyRequestNegativeReply(handle: 0x0042)
        #expect(negative.opcode == 0x201B && negative.parameters == [0x42, 0x00])
        #expect(SecurityHCI.command(for: .rejectLTKRequest, handle: 0x42) == negative)
        #expect(SecurityHCI.command(for: .requestPasskey, handle: 0x42) == nil)
    }

    @Test func theEventsBecomeSecurityManagerEvents() throws {
        let change = try #require(SecurityHCI.event(from: .other(code: 0x08, parameters: [0x00, 0x40, 0x00, 0x01])))
        #expect(change.handle == 0x40 && change.event == .encryptionChanged(status: 0, enabled: true))
        let failed = try #require(SecurityHCI.event(from: .other(code: 0x08, parameters: [0x06, 0x40, 0x00, 0x00])))
        #expect(failed.event == .encryptionChanged(status: 6, enabled: false))
        let v2 = try #require(SecurityHCI.event(from: .other(code: 0x59, parameters: [0x00, 0x40, 0x00, 0x01, 0x10])))
        #expect(v2.event == .encryptionChanged(status: 0, enabled: true))
        let refresh = try #require(SecurityHCI.event(from: .other(code: 0x30, parameters: [0x00, 0x41, 0x00])))
        #expect(refresh.handle == 0x41 && refresh.event == .encryptionChanged(status: 0, enabled: true))
        let request = try #require(SecurityHCI.event(from: .leMeta(subevent: 0x05, parameters: [0x40, 0x00, 8, 7, 6, 5, 4, 3, 2, 1, 0xEF, 0xBE])))
        #expect(request.handle == 0x40 && request.event == .ltkRequested(ediv: 0xBEEF, rand: 0x0102_0304_0506_0708))
        #expect(SecurityHCI.event(from: .other(code: 0x08, parameters: [0x00, 0x40])) == nil)
        #expect(SecurityHCI.event(from: .hardwareError(1)) == nil)
    }
}
