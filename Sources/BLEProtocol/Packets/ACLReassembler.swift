/// Puts the ACL fragments of each link back together into L2CAP PDUs (Vol 3 Part A §7.2).
///
/// A first fragment starts a PDU, continuing fragments extend it, and the PDU is complete when
/// its basic header's length is reached. A first fragment while a PDU is unfinished abandons
/// that PDU; a continuation with nothing to continue, or a PDU longer than its header says, is
/// dropped. What one link holds is bounded by the 16-bit length field (at most 65,539 bytes
/// plus one fragment), so a peer cannot make it grow without end.
public struct ACLReassembler: Sendable {
    private var partial: [UInt16: [UInt8]] = [:]
    /// Fragments and PDUs thrown away (each case above counts once).
    public private(set) var dropped = 0

    /// Starts with no PDU in progress on any link.
    public init() {}

    /// Links with a PDU in progress.
    public var pendingHandles: Int { partial.count }

    /// Takes one fragment as it came from the controller; returns the PDU it completes, if any.
    public mutating func add(_ packet: ACLPacket) -> L2CAPFrame? {
        var buffer: [UInt8]
        switch packet.boundary {
        case .continuing:
            guard let started = partial[packet.handle] else {
                dropped += 1 // a continuation without a start
                return nil
            }
            buffer = started + packet.data
        default:
            if partial[packet.handle] != nil { dropped += 1 } // an unfinished PDU is abandoned
            buffer = packet.data
        }
        guard buffer.count >= 4 else {
            partial[packet.handle] = buffer
            return nil
        }
        let length = Int(buffer[0]) | Int(buffer[1]) << 8
        if buffer.count < length + 4 {
            partial[packet.handle] = buffer
            return nil
        }
        partial[packet.handle] = nil
        guard buffer.count == length + 4, let frame = try? L2CAPFrame(parsing: buffer) else {
            dropped += 1 // longer than its header says: not L2CAP we can trust
            return nil
        }
        return frame
    }

    /// Forgets a link's PDU in progress (the link ended).
    public mutating func forget(handle: UInt16) {
        partial[handle] = nil
    }
}
