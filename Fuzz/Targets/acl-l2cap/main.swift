import BLEProtocol
import FuzzSupport
import Transports

/// ACL fragments of a few links, reassembled into L2CAP PDUs, each routed as the host routes it:
/// ATT to the ATT parser, LE signaling to the signaling parser (and its answers written back).
///
/// Input: fragments, each a byte (bits 0–1 the link, 2–3 the Packet_Boundary flag) and a chunk
/// (a length byte, then the data).
runFuzzer { bytes in
    var input = FuzzInput(bytes)
    var reassembler = ACLReassembler()
    while !input.isAtEnd {
        let header = input.byte()
        let boundary = ACLPacket.Boundary(rawValue: (header >> 2) & 0x3) ?? .continuing
        let packet = ACLPacket(handle: UInt16(header & 0x3), boundary: boundary, data: input.chunk())
        guard let frame = reassembler.add(packet) else { continue }
        precondition(frame.encoded.count == frame.payload.count + 4, "an L2CAP frame with a wrong header")
        switch frame.channel {
        case L2CAPFrame.att:
            _ = try? ATTPDU(parsing: frame.payload)
        case L2CAPFrame.leSignaling:
            if let command = try? LESignalingPacket(parsing: frame.payload) {
                precondition((try? LESignalingPacket(parsing: command.encoded)) == command,
                             "a signaling command does not read back the same after writing")
            }
        default:
            break
        }
    }
    precondition(reassembler.pendingHandles <= 4, "more links pending than there are handles")
}
