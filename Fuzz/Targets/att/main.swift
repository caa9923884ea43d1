import BLEProtocol
import FuzzSupport
import Transports

/// An ATT PDU from the peer. Whatever parses must write back to a PDU that parses the same.
runFuzzer { bytes in
    guard let pdu = try? ATTPDU(parsing: bytes) else { return }
    _ = (pdu.isRequest, pdu.isResponse, ATTPDU.responseOpcode(forRequest: pdu.opcode))
    let again: ATTPDU
    do { again = try ATTPDU(parsing: pdu.encoded) } catch {
        preconditionFailure("a parsed PDU writes back to bytes that do not parse: \(error)")
    }
    precondition(again == pdu, "a parsed PDU does not read back the same after writing")
}
