import BLEProtocol
import HAL

/// `serve --pairing required` (hwprobe-cli.md, third edition: every request but pairing is
/// refused until the link is encrypted), as a value: given a PDU from the client and the
/// security the link has, it says whether the server may see it, or what to answer instead.
///
/// Exchange MTU passes (it configures the bearer and names no attribute, Core Vol 3 Part F
/// §3.4.2; SMP runs on its own channel and is never seen here). Every other request is answered
/// with an Error Response naming its first handle — 0x05 Insufficient Authentication when an
/// authenticated link is required, 0x0F Insufficient Encryption otherwise, the codes a client
/// answers by pairing (Vol 3 Part C §10.3). Commands (Write Command, Signed Write) have no
/// answer to carry a refusal and are dropped, as the specification has a server do with a
/// command it does not act on; confirmations and unknown opcodes go on to the server.
package struct ATTSecurityGate: Hashable, Sendable {
    /// What the link must have before requests are served.
    package var required: SecurityLevel

    package init(required: SecurityLevel) {
        self.required = required
    }

    /// What to do with a client's PDU.
    package enum Verdict: Equatable, Sendable {
        /// Let the server answer it.
        case pass
        /// Answer with this Error Response instead.
        case refuse([UInt8])
        /// Drop it: a command, which has no answer.
        case drop
    }

    /// The requests (Vol 3 Part F §3.4.8, Table 3.37): a client expects a response to each.
    static let requests: Set<UInt8> = [0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20]
    static let exchangeMTU: UInt8 = 0x02

    package func verdict(for pdu: [UInt8], link: SecurityLevel) -> Verdict {
        guard let opcode = pdu.first, link < required, opcode != Self.exchangeMTU else { return .pass }
        if opcode & 0x40 != 0 { return .drop } // the Command flag (§3.3.1)
        guard Self.requests.contains(opcode) else { return .pass }
        // Every request but Execute Write starts with a handle; a PDU too short for one names 0.
        let handle: UInt16 = opcode != 0x18 && pdu.count >= 3 ? UInt16(pdu[1]) | UInt16(pdu[2]) << 8 : 0
        let code = required == .authenticated ? ATTErrorCode.insufficientAuthentication : ATTErrorCode.insufficientEncryption
        return .refuse(ATTPDU.errorResponse(requestOpcode: opcode, handle: handle, code: code).encoded)
    }
}
