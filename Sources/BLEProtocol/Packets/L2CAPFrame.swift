import HAL

/// A basic-mode L2CAP PDU on an LE fixed channel: length, channel ID, payload (Vol 3 Part A §3.1).
public struct L2CAPFrame: Hashable, Sendable {
    public static let att: UInt16 = 0x0004
    public static let leSignaling: UInt16 = 0x0005
    public static let securityManager: UInt16 = 0x0006

    public var channel: UInt16
    public var payload: [UInt8]

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

    public var encoded: [UInt8] {
        precondition(payload.count <= Int(UInt16.max), "an L2CAP payload is limited to 65535 bytes")
        return LittleEndian.u16(UInt16(payload.count)) + LittleEndian.u16(channel) + payload
    }
}
