import HAL

/// Why an H4 byte stream can no longer be split into packets. Both mean the stream lost sync;
/// nothing after that point can be trusted.
public enum H4Error: Error, Hashable, Sendable, CustomStringConvertible {
    /// The byte where a packet should start is no H4 indicator, so the stream is misaligned.
    case unknownPacketType(UInt8)
    /// A header claims more bytes than `maximumPayloadLength`, which no real controller sends.
    case oversized(type: UInt8, length: Int)

    /// The words a person reads in messages and logs, including what to do about the lost sync.
    public var description: String {
        switch self {
        case .unknownPacketType(let type):
            "HCI stream lost sync: 0x\(Hex.byte(type)) is not an H4 packet type; "
                + "close and reopen the transport, then reset the controller"
        case .oversized(let type, let length):
            "HCI stream lost sync: a packet of type 0x\(Hex.byte(type)) claims \(length) bytes, more than any "
                + "controller sends; close and reopen the transport, then reset the controller"
        }
    }
}

/// Splits the byte stream of an H4 transport (UART, TCP, btsnoop payloads) into packets.
///
/// Bytes may arrive in any chunks: a partial packet is kept until the rest arrives, and one call
/// can yield several packets, in stream order. An unknown indicator byte or an impossible length
/// means the stream lost sync; the framer then refuses everything until `reset()`, rather than
/// guessing where the next packet starts.
public struct H4Framer: Sendable {
    /// Larger than any controller's ACL buffer (LE at most 251 bytes, BR/EDR typically 1021) or ISO
    /// SDU fragment, so only a lost sync reaches it; it also bounds how much the framer ever holds.
    public static let defaultMaximumPayloadLength = 8192

    /// The largest payload length this framer believes; a larger one is taken as lost sync. Never below 255.
    public let maximumPayloadLength: Int
    private var buffer: [UInt8] = []
    private var failure: H4Error?

    /// A framer with `defaultMaximumPayloadLength`, for real transports.
    public init() { self.init(maximumPayloadLength: Self.defaultMaximumPayloadLength) }

    /// A framer with a custom limit, e.g. a small one in tests; values below 255 are raised to 255.
    public init(maximumPayloadLength: Int) {
        self.maximumPayloadLength = max(255, maximumPayloadLength)
    }

    /// Bytes received but not yet part of a complete packet.
    public var bufferedByteCount: Int { buffer.count }

    /// Forgets everything buffered and any loss of sync: for after the transport was reopened.
    public mutating func reset() {
        buffer.removeAll()
        failure = nil
    }

    /// Takes bytes from the stream and returns the packets they complete.
    ///
    /// When the stream loses sync after some complete packets in the same call, those packets are
    /// returned first and the error is thrown by the next call, so no good packet is lost.
    public mutating func feed(_ bytes: some Collection<UInt8>) throws(H4Error) -> [HCIPacket] {
        if let failure { throw failure }
        buffer.append(contentsOf: bytes)
        var packets: [HCIPacket] = []
        var start = 0
        defer { buffer.removeFirst(start) }
        while start < buffer.count {
            switch nextPacket(at: start) {
            case .needMore:
                return packets
            case .packet(let packet, let length):
                packets.append(packet)
                start += length
            case .lostSync(let error):
                failure = error
                if packets.isEmpty { throw error }
                return packets
            }
        }
        return packets
    }

    private enum Step {
        case needMore
        case packet(HCIPacket, length: Int)
        case lostSync(H4Error)
    }

    /// Looks at the packet starting at `start` without consuming it.
    private func nextPacket(at start: Int) -> Step {
        let type = buffer[start]
        let headerLength: Int
        switch HCIPacketType(rawValue: type) {
        case .command, .sco: headerLength = 3
        case .event: headerLength = 2
        case .acl, .iso: headerLength = 4
        case nil: return .lostSync(.unknownPacketType(type))
        }
        let headerStart = start + 1
        guard buffer.count - headerStart >= headerLength else { return .needMore }
        let payloadLength: Int
        switch HCIPacketType(rawValue: type) {
        case .command, .sco: payloadLength = Int(buffer[headerStart + 2])
        case .event: payloadLength = Int(buffer[headerStart + 1])
        case .acl: payloadLength = Int(buffer[headerStart + 2]) | Int(buffer[headerStart + 3]) << 8
        // The top two bits of the ISO length field are reserved.
        case .iso: payloadLength = (Int(buffer[headerStart + 2]) | Int(buffer[headerStart + 3]) << 8) & 0x3FFF
        case nil: return .lostSync(.unknownPacketType(type))
        }
        guard payloadLength <= maximumPayloadLength else {
            return .lostSync(.oversized(type: type, length: payloadLength))
        }
        let end = headerStart + headerLength + payloadLength
        guard buffer.count >= end else { return .needMore }
        let header = buffer[headerStart..<headerStart + headerLength]
        let payload = Array(buffer[headerStart + headerLength..<end])
        let packet: HCIPacket
        switch HCIPacketType(rawValue: type) {
        case .command:
            let opcode = UInt16(header[headerStart]) | UInt16(header[headerStart + 1]) << 8
            packet = .command(HCICommand(opcode: opcode, parameters: payload))
        case .event:
            packet = .event(HCIEventPacket(code: header[headerStart], parameters: payload))
        case .acl:
            let field = UInt16(header[headerStart]) | UInt16(header[headerStart + 1]) << 8
            packet = .acl(ACLPacket(handle: field & 0x0FFF,
                                    boundary: ACLPacket.Boundary(rawValue: UInt8((field >> 12) & 0x3)) ?? .continuing,
                                    broadcast: UInt8(field >> 14), data: payload))
        case .sco, .iso, nil:
            packet = .other(type: type, payload: Array(buffer[headerStart..<end]))
        }
        return .packet(packet, length: end - start)
    }
}
