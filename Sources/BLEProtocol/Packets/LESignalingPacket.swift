import HAL

/// A command on the LE signaling channel (Vol 3 Part A §4): code, identifier, length, data.
public enum LESignalingPacket: Hashable, Sendable {
    /// Refuses a command the sender could not handle; `reason` 0 means not understood.
    case commandReject(identifier: UInt8, reason: UInt16, data: [UInt8])
    /// From a peripheral asking for new parameters (intervals 1.25 ms, timeout 10 ms units).
    case connectionParameterUpdateRequest(identifier: UInt8, minInterval: UInt16, maxInterval: UInt16,
                                          latency: UInt16, timeout: UInt16)
    /// 0 accepted, 1 rejected.
    case connectionParameterUpdateResponse(identifier: UInt8, result: UInt16)
    /// A command this host does not handle; requests among them get a command reject.
    case other(code: UInt8, identifier: UInt8, data: [UInt8])

    /// Signaling command codes (Core Vol 3 Part A §4) this host reads or answers.
    public enum Code {
        /// Refuses a command the receiver does not understand; our answer to unknown requests.
        public static let commandReject: UInt8 = 0x01
        /// A peripheral asks the central for new connection parameters.
        public static let connectionParameterUpdateRequest: UInt8 = 0x12
        /// The central's answer to a parameter update request.
        public static let connectionParameterUpdateResponse: UInt8 = 0x13
    }

    /// Parses one command from an LE signaling channel payload; the length field must match exactly.
    public init(parsing bytes: [UInt8]) throws(HCIParseError) {
        var r = PacketReader(bytes, context: "LE signaling command")
        let code = try r.u8("Code")
        let identifier = try r.u8("Identifier")
        let length = Int(try r.u16("Length"))
        guard r.remaining == length else {
            throw .malformed("LE signaling command: header says \(length) data bytes, got \(r.remaining)")
        }
        switch code {
        case Code.commandReject:
            let reason = try r.u16("Reason")
            self = .commandReject(identifier: identifier, reason: reason, data: r.rest())
        case Code.connectionParameterUpdateRequest:
            guard length == 8 else { throw .malformed("Connection Parameter Update Request of \(length) bytes (needs 8)") }
            let minInterval = try r.u16("Interval Min")
            let maxInterval = try r.u16("Interval Max")
            let latency = try r.u16("Latency")
            self = .connectionParameterUpdateRequest(identifier: identifier, minInterval: minInterval,
                                                     maxInterval: maxInterval, latency: latency,
                                                     timeout: try r.u16("Timeout"))
        case Code.connectionParameterUpdateResponse:
            guard length == 2 else { throw .malformed("Connection Parameter Update Response of \(length) bytes (needs 2)") }
            self = .connectionParameterUpdateResponse(identifier: identifier, result: try r.u16("Result"))
        default:
            self = .other(code: code, identifier: identifier, data: r.rest())
        }
    }

    /// Matches a response to its request; the requester picks it, the responder echoes it.
    public var identifier: UInt8 {
        switch self {
        case .commandReject(let identifier, _, _), .connectionParameterUpdateRequest(let identifier, _, _, _, _),
             .connectionParameterUpdateResponse(let identifier, _), .other(_, let identifier, _):
            identifier
        }
    }

    /// Code, identifier, length and data, as the L2CAP payload on the signaling channel.
    public var encoded: [UInt8] {
        let (code, data): (UInt8, [UInt8]) = switch self {
        case .commandReject(_, let reason, let data): (Code.commandReject, LittleEndian.u16(reason) + data)
        case .connectionParameterUpdateRequest(_, let minInterval, let maxInterval, let latency, let timeout):
            (Code.connectionParameterUpdateRequest, [minInterval, maxInterval, latency, timeout].flatMap(LittleEndian.u16))
        case .connectionParameterUpdateResponse(_, let result): (Code.connectionParameterUpdateResponse, LittleEndian.u16(result))
        case .other(let code, _, let data): (code, data)
        }
        return [code, identifier] + LittleEndian.u16(UInt16(truncatingIfNeeded: data.count)) + data
    }
}
