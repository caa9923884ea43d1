import BLEProtocol
import Peripherals
import Testing

/// `serve --pairing required`'s gate: until the link has the security, only Exchange MTU reaches
/// the server; requests are refused naming their handle, commands dropped.
struct ATTSecurityGateTests {
    static let encrypted = ATTSecurityGate(required: .encrypted)

    @Test func exchangeMTUPassesAndEveryRequestIsRefusedWithInsufficientEncryption() {
        #expect(Self.encrypted.verdict(for: [0x02, 0xF7, 0x00], link: .none) == .pass)
        // Read Request of 0x0003, Read By Group Type from 0x0001, Write Request to 0x0010.
        #expect(Self.encrypted.verdict(for: [0x0A, 0x03, 0x00], link: .none) == .refuse([0x01, 0x0A, 0x03, 0x00, 0x0F]))
        #expect(Self.encrypted.verdict(for: [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28], link: .none)
            == .refuse([0x01, 0x10, 0x01, 0x00, 0x0F]))
        #expect(Self.encrypted.verdict(for: [0x12, 0x10, 0x00, 0x01], link: .none) == .refuse([0x01, 0x12, 0x10, 0x00, 0x0F]))
        // Execute Write names no handle.
        #expect(Self.encrypted.verdict(for: [0x18, 0x01], link: .none) == .refuse([0x01, 0x18, 0x00, 0x00, 0x0F]))
        for opcode: UInt8 in [0x04, 0x06, 0x08, 0x0C, 0x0E, 0x16, 0x20] {
            guard case .refuse(let answer) = Self.encrypted.verdict(for: [opcode, 0x01, 0x00, 0x02, 0x00], link: .none) else {
                Issue.record("0x\(String(opcode, radix: 16)) was not refused")
                continue
            }
            #expect(answer == [0x01, opcode, 0x01, 0x00, 0x0F])
        }
    }

    @Test func commandsAreDroppedAndConfirmationsPass() {
        #expect(Self.encrypted.verdict(for: [0x52, 0x10, 0x00, 0x01], link: .none) == .drop)
        #expect(Self.encrypted.verdict(for: [0xD2, 0x10, 0x00, 0x01], link: .none) == .drop)
        #expect(Self.encrypted.verdict(for: [0x1E], link: .none) == .pass)
    }

    @Test func onceTheLinkHasTheSecurityEverythingPasses() {
        #expect(Self.encrypted.verdict(for: [0x0A, 0x03, 0x00], link: .encrypted) == .pass)
        let authenticated = ATTSecurityGate(required: .authenticated)
        #expect(authenticated.verdict(for: [0x0A, 0x03, 0x00], link: .encrypted) == .refuse([0x01, 0x0A, 0x03, 0x00, 0x05]))
        #expect(authenticated.verdict(for: [0x0A, 0x03, 0x00], link: .authenticated) == .pass)
        #expect(Self.encrypted.verdict(for: [], link: .none) == .pass)
    }
}
