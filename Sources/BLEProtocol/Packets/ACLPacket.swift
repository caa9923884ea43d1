import HAL

/// A chunk of ACL data: a piece of an L2CAP PDU for one connection.
public struct ACLPacket: Hashable, Sendable {
    /// Where this chunk sits in its L2CAP PDU (the Packet_Boundary flag).
    public enum Boundary: UInt8, Sendable {
        /// Starts a PDU that the controller must not flush; what a host sends on LE.
        case firstNonFlushable = 0
        /// Carries on the PDU the previous chunk on this handle started.
        case continuing = 1
        /// Starts a PDU the controller may flush; what controllers send the host.
        case firstFlushable = 2
        /// A whole PDU in one chunk (flushable); rarely used on LE.
        case complete = 3
    }

    /// The 12-bit connection handle.
    public var handle: UInt16
    /// Tells the reassembler whether this chunk starts a new L2CAP PDU or extends the one in progress.
    public var boundary: Boundary
    /// The 2-bit Broadcast flag; always 0 on LE.
    public var broadcast: UInt8
    /// The L2CAP bytes this chunk carries, at most 65535 (the header's 16-bit length).
    public var data: [UInt8]

    /// Builds a chunk; `broadcast` defaults to 0, the only value LE allows.
    public init(handle: UInt16, boundary: Boundary, broadcast: UInt8 = 0, data: [UInt8]) {
        self.handle = handle
        self.boundary = boundary
        self.broadcast = broadcast
        self.data = data
    }

    /// Parses the 4-byte header and the data (no H4 indicator); the length must match exactly.
    public init(parsing bytes: [UInt8]) throws(HCIParseError) {
        var reader = PacketReader(bytes, context: "ACL packet")
        let header = try reader.u16("handle and flags")
        let length = try reader.u16("data length")
        let data = try reader.bytes(Int(length), "data")
        try reader.expectEnd()
        // Two bits can hold every Boundary value, so this cannot fail.
        self.init(handle: header & 0x0FFF, boundary: Boundary(rawValue: UInt8((header >> 12) & 0x3)) ?? .continuing,
                  broadcast: UInt8(header >> 14), data: data)
    }

    /// The 4-byte header (handle and flags, data length) and the data, without the H4 indicator.
    public var encoded: [UInt8] {
        precondition(data.count <= Int(UInt16.max), "ACL data is limited to 65535 bytes")
        let header = (handle & 0x0FFF) | UInt16(boundary.rawValue) << 12 | UInt16(broadcast & 0x3) << 14
        return LittleEndian.u16(header) + LittleEndian.u16(UInt16(data.count)) + data
    }
}
