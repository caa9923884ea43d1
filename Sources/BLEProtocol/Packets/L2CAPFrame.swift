import HAL

/// A basic-mode L2CAP PDU on an LE fixed channel: length, channel ID, payload (Vol 3 Part A §3.1).
public struct L2CAPFrame: Hashable, Sendable {
    /// The fixed channel that carries the Attribute Protocol.
    public static let att: UInt16 = 0x0004
    /// The fixed channel for LE signaling, e.g. connection parameter update requests.
    public static let leSignaling: UInt16 = 0x0005
    /// The Security Manager channel; this host does not pair and answers requests with Pairing Failed.
    public static let securityManager: UInt16 = 0x0006

    /// Which fixed channel the payload belongs to; the host routes frames by it.
    public var channel: UInt16
    /// The channel's bytes, e.g. one ATT PDU.
    public var payload: [UInt8]

    /// Builds a frame for `channel`; its length is computed on encoding.
    public init(channel: UInt16, payload: [UInt8]) {
        self.channel = channel
        self.payload = payload
    }

    /// From a reassembled PDU; the header's length must match the payload exactly.
    public init(parsing pdu: [UInt8]) throws(HCIParseError) {
        var r = PacketReader(pdu, context: "L2CAP frame")
        let length = Int(try r.u16("Length"))
        channel = try r.u16("Channel ID")
        guard r.remaining == length else {
            throw .malformed("L2CAP frame: header says \(length) payload bytes, got \(r.remaining)")
        }
        payload = r.rest()
    }

    /// Length, channel ID and payload, ready to cut into ACL packets.
    public var encoded: [UInt8] {
        precondition(payload.count <= Int(UInt16.max), "an L2CAP payload is limited to 65535 bytes")
        return LittleEndian.u16(UInt16(payload.count)) + LittleEndian.u16(channel) + payload
    }
}
