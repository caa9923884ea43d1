import HAL

/// An Attribute Protocol PDU (Core Specification Vol 3 Part F §3.4): opcode, then parameters.
/// Opcodes we do not use (read multiple, prepared writes, signed writes…) stay `unknown`.
public enum ATTPDU: Hashable, Sendable {
    /// The server refused a request: which request, the handle it failed on, and the ATT error code.
    case errorResponse(requestOpcode: UInt8, handle: UInt16, code: UInt8)
    /// The client's receive MTU in bytes, offered once per link.
    case exchangeMTURequest(UInt16)
    /// The server's receive MTU in bytes; the link then uses the smaller of the two.
    case exchangeMTUResponse(UInt16)
    /// Asks which attribute types sit in a handle range, to find descriptors such as the CCCD.
    case findInformationRequest(start: UInt16, end: UInt16)
    /// The handle and type UUID of each attribute found in the asked range.
    case findInformationResponse([ATTHandleUUID])
    /// Looks for attributes of one 16-bit type holding an exact value, e.g. one service by UUID.
    case findByTypeValueRequest(start: UInt16, end: UInt16, type: UInt16, value: [UInt8])
    /// The handle ranges of the matching attributes' groups.
    case findByTypeValueResponse([ATTHandleRange])
    /// Reads every attribute of a type in a range, e.g. the characteristic declarations of a service.
    case readByTypeRequest(start: UInt16, end: UInt16, type: BluetoothUUID)
    /// The handles and values found, all values of one length.
    case readByTypeResponse([ATTHandleValue])
    /// Reads one attribute's value.
    case readRequest(handle: UInt16)
    /// The value read, cut to MTU − 1 bytes; read on with a blob request if it may be longer.
    case readResponse([UInt8])
    /// Reads the rest of a long value, starting at a byte offset.
    case readBlobRequest(handle: UInt16, offset: UInt16)
    /// The part of the value from the asked offset, at most MTU − 1 bytes.
    case readBlobResponse([UInt8])
    /// Reads group attributes of a type in a range; how primary services are discovered.
    case readByGroupTypeRequest(start: UInt16, end: UInt16, type: BluetoothUUID)
    /// Each group found: its first handle, last handle and value (for services, the UUID).
    case readByGroupTypeResponse([ATTGroupValue])
    /// Writes a value and expects a write response, so the caller learns whether it took.
    case writeRequest(handle: UInt16, value: [UInt8])
    /// The server accepted a write request.
    case writeResponse
    /// Writes a value with no answer; nothing tells us whether the device took it.
    case writeCommand(handle: UInt16, value: [UInt8])
    /// A value the device pushed unasked, e.g. a live weight; not acknowledged.
    case handleValueNotification(handle: UInt16, value: [UInt8])
    /// A value the device pushed that must be confirmed before it sends the next one.
    case handleValueIndication(handle: UInt16, value: [UInt8])
    /// Our acknowledgement of an indication.
    case handleValueConfirmation
    /// A PDU whose opcode this enum does not model, kept raw so it can be logged or answered.
    case unknown(opcode: UInt8, parameters: [UInt8])

    /// The opcode bytes of the PDUs this enum parses (Core Vol 3 Part F §3.4.8), for matching without building a PDU.
    public enum Opcode {
        /// A request failed; carries the failed request's opcode, the handle and the error code.
        public static let errorResponse: UInt8 = 0x01
        /// The client tells the server its receive MTU, once per link.
        public static let exchangeMTURequest: UInt8 = 0x02
        /// The server's receive MTU; the link then uses the smaller of the two.
        public static let exchangeMTUResponse: UInt8 = 0x03
        /// Asks for the handles and types in a range, for descriptor discovery.
        public static let findInformationRequest: UInt8 = 0x04
        /// Answers Find Information with handle–type pairs.
        public static let findInformationResponse: UInt8 = 0x05
        /// Finds attributes of a 16-bit type with a given value, e.g. a primary service by UUID.
        public static let findByTypeValueRequest: UInt8 = 0x06
        /// Answers Find By Type Value with handle ranges.
        public static let findByTypeValueResponse: UInt8 = 0x07
        /// Reads every attribute of one type in a range, e.g. characteristic declarations.
        public static let readByTypeRequest: UInt8 = 0x08
        /// Answers Read By Type with handle–value pairs of one length.
        public static let readByTypeResponse: UInt8 = 0x09
        /// Reads one attribute value by handle.
        public static let readRequest: UInt8 = 0x0A
        /// Answers Read Request with the value, cut to the ATT MTU.
        public static let readResponse: UInt8 = 0x0B
        /// Reads a value from an offset, for values longer than one Read Response holds.
        public static let readBlobRequest: UInt8 = 0x0C
        /// Answers Read Blob with the part of the value from the offset.
        public static let readBlobResponse: UInt8 = 0x0D
        /// Reads grouping attributes of one type in a range, e.g. primary services.
        public static let readByGroupTypeRequest: UInt8 = 0x10
        /// Answers Read By Group Type with handle, group end and value entries.
        public static let readByGroupTypeResponse: UInt8 = 0x11
        /// Writes a value and waits for the server to confirm.
        public static let writeRequest: UInt8 = 0x12
        /// Confirms a Write Request; carries nothing.
        public static let writeResponse: UInt8 = 0x13
        /// Writes a value with no response; the command bit (0x40) is set.
        public static let writeCommand: UInt8 = 0x52
        /// A server-sent value the client does not acknowledge.
        public static let handleValueNotification: UInt8 = 0x1B
        /// A server-sent value the client must confirm before the server sends another.
        public static let handleValueIndication: UInt8 = 0x1D
        /// The client's acknowledgement of an indication.
        public static let handleValueConfirmation: UInt8 = 0x1E
        /// Several handles' values in one request (kept as `unknown` by the parser).
        public static let readMultipleRequest: UInt8 = 0x0E
        /// Their values back to back.
        public static let readMultipleResponse: UInt8 = 0x0F
        /// Several handles' values, each answered with its length (ATT over EATT and LE alike).
        public static let readMultipleVariableRequest: UInt8 = 0x20
        /// Each value after its 16-bit length.
        public static let readMultipleVariableResponse: UInt8 = 0x21
        /// One part of a long write, queued by the server.
        public static let prepareWriteRequest: UInt8 = 0x16
        /// The part echoed back, so the client can check it.
        public static let prepareWriteResponse: UInt8 = 0x17
        /// Writes (flags 0x01) or drops (0x00) the prepared parts.
        public static let executeWriteRequest: UInt8 = 0x18
        /// The queue was written or dropped.
        public static let executeWriteResponse: UInt8 = 0x19
    }

    /// Every request and the response that answers it (besides an Error Response), including
    /// the ones this enum keeps as `unknown`.
    private static let responses: [UInt8: UInt8] = [
        0x02: 0x03, 0x04: 0x05, 0x06: 0x07, 0x08: 0x09, 0x0A: 0x0B, 0x0C: 0x0D, 0x0E: 0x0F,
        0x10: 0x11, 0x12: 0x13, 0x16: 0x17, 0x18: 0x19, 0x20: 0x21,
    ]
    private static let responseOpcodes: Set<UInt8> = Set(responses.values).union([Opcode.errorResponse])

    /// The name the ATT specification gives an opcode (`Read By Type Request`), for people reading
    /// an error; opcodes this enum keeps as `unknown` are named by their number.
    public static func name(ofOpcode opcode: UInt8) -> String {
        opcodeNames[opcode] ?? "ATT opcode 0x" + Hex.byte(opcode)
    }

    private static let opcodeNames: [UInt8: String] = [
        0x01: "Error Response", 0x02: "Exchange MTU Request", 0x03: "Exchange MTU Response",
        0x04: "Find Information Request", 0x05: "Find Information Response", 0x06: "Find By Type Value Request",
        0x07: "Find By Type Value Response", 0x08: "Read By Type Request", 0x09: "Read By Type Response",
        0x0A: "Read Request", 0x0B: "Read Response", 0x0C: "Read Blob Request", 0x0D: "Read Blob Response",
        0x0E: "Read Multiple Request", 0x0F: "Read Multiple Response", 0x10: "Read By Group Type Request",
        0x11: "Read By Group Type Response", 0x12: "Write Request", 0x13: "Write Response", 0x16: "Prepare Write Request",
        0x17: "Prepare Write Response", 0x18: "Execute Write Request", 0x19: "Execute Write Response",
        0x20: "Read Multiple Variable Request", 0x21: "Read Multiple Variable Response", 0x1B: "Handle Value Notification",
        0x1D: "Handle Value Indication", 0x1E: "Handle Value Confirmation", 0x52: "Write Command", 0xD2: "Signed Write Command",
    ]

    /// The opcode of the success response to a request, or nil when `opcode` is not a request.
    public static func responseOpcode(forRequest opcode: UInt8) -> UInt8? { responses[opcode] }

    /// Expects exactly one response (commands, notifications and indications are not requests).
    public var isRequest: Bool { Self.responses[opcode] != nil }
    /// Answers a request, successfully or with an Error Response.
    public var isResponse: Bool { Self.responseOpcodes.contains(opcode) }

    /// The first byte on the wire, which says what the PDU is; `unknown` keeps the byte it was parsed with.
    public var opcode: UInt8 {
        switch self {
        case .errorResponse: Opcode.errorResponse
        case .exchangeMTURequest: Opcode.exchangeMTURequest
        case .exchangeMTUResponse: Opcode.exchangeMTUResponse
        case .findInformationRequest: Opcode.findInformationRequest
        case .findInformationResponse: Opcode.findInformationResponse
        case .findByTypeValueRequest: Opcode.findByTypeValueRequest
        case .findByTypeValueResponse: Opcode.findByTypeValueResponse
        case .readByTypeRequest: Opcode.readByTypeRequest
        case .readByTypeResponse: Opcode.readByTypeResponse
        case .readRequest: Opcode.readRequest
        case .readResponse: Opcode.readResponse
        case .readBlobRequest: Opcode.readBlobRequest
        case .readBlobResponse: Opcode.readBlobResponse
        case .readByGroupTypeRequest: Opcode.readByGroupTypeRequest
        case .readByGroupTypeResponse: Opcode.readByGroupTypeResponse
        case .writeRequest: Opcode.writeRequest
        case .writeResponse: Opcode.writeResponse
        case .writeCommand: Opcode.writeCommand
        case .handleValueNotification: Opcode.handleValueNotification
        case .handleValueIndication: Opcode.handleValueIndication
        case .handleValueConfirmation: Opcode.handleValueConfirmation
        case .unknown(let opcode, _): opcode
        }
    }

    /// Fixed-size PDUs must have exactly their size; lists must be whole numbers of entries.
    public init(parsing bytes: [UInt8]) throws(HCIParseError) {
        guard let opcode = bytes.first else { throw .truncated("ATT PDU without an opcode") }
        var r = PacketReader(Array(bytes.dropFirst()), context: "ATT PDU 0x\(Hex.byte(opcode))")
        switch opcode {
        case Opcode.errorResponse:
            let request = try r.u8("Request Opcode In Error")
            let handle = try r.u16("Attribute Handle In Error")
            self = .errorResponse(requestOpcode: request, handle: handle, code: try r.u8("Error Code"))
        case Opcode.exchangeMTURequest:
            self = .exchangeMTURequest(try r.u16("Client Rx MTU"))
        case Opcode.exchangeMTUResponse:
            self = .exchangeMTUResponse(try r.u16("Server Rx MTU"))
        case Opcode.findInformationRequest:
            let start = try r.u16("Starting Handle")
            self = .findInformationRequest(start: start, end: try r.u16("Ending Handle"))
        case Opcode.findInformationResponse:
            self = .findInformationResponse(try Self.parseInformation(&r))
        case Opcode.findByTypeValueRequest:
            let start = try r.u16("Starting Handle")
            let end = try r.u16("Ending Handle")
            let type = try r.u16("Attribute Type")
            self = .findByTypeValueRequest(start: start, end: end, type: type, value: r.rest())
        case Opcode.findByTypeValueResponse:
            guard r.remaining > 0, r.remaining % 4 == 0 else {
                throw .malformed("Find By Type Value Response: \(r.remaining) bytes is not a list of 4-byte handle ranges")
            }
            var ranges: [ATTHandleRange] = []
            while !r.isAtEnd {
                let start = try r.u16("Found Attribute Handle")
                ranges.append(ATTHandleRange(start: start, end: try r.u16("Group End Handle")))
            }
            self = .findByTypeValueResponse(ranges)
        case Opcode.readByTypeRequest:
            let start = try r.u16("Starting Handle")
            let end = try r.u16("Ending Handle")
            self = .readByTypeRequest(start: start, end: end, type: try Self.parseType(&r))
        case Opcode.readByTypeResponse:
            self = .readByTypeResponse(try Self.parseHandleValues(&r))
        case Opcode.readRequest:
            self = .readRequest(handle: try r.u16("Attribute Handle"))
        case Opcode.readResponse:
            self = .readResponse(r.rest())
        case Opcode.readBlobRequest:
            let handle = try r.u16("Attribute Handle")
            self = .readBlobRequest(handle: handle, offset: try r.u16("Value Offset"))
        case Opcode.readBlobResponse:
            self = .readBlobResponse(r.rest())
        case Opcode.readByGroupTypeRequest:
            let start = try r.u16("Starting Handle")
            let end = try r.u16("Ending Handle")
            self = .readByGroupTypeRequest(start: start, end: end, type: try Self.parseType(&r))
        case Opcode.readByGroupTypeResponse:
            self = .readByGroupTypeResponse(try Self.parseGroupValues(&r))
        case Opcode.writeRequest:
            let handle = try r.u16("Attribute Handle")
            self = .writeRequest(handle: handle, value: r.rest())
        case Opcode.writeResponse:
            self = .writeResponse
        case Opcode.writeCommand:
            let handle = try r.u16("Attribute Handle")
            self = .writeCommand(handle: handle, value: r.rest())
        case Opcode.handleValueNotification:
            let handle = try r.u16("Attribute Handle")
            self = .handleValueNotification(handle: handle, value: r.rest())
        case Opcode.handleValueIndication:
            let handle = try r.u16("Attribute Handle")
            self = .handleValueIndication(handle: handle, value: r.rest())
        case Opcode.handleValueConfirmation:
            self = .handleValueConfirmation
        default:
            self = .unknown(opcode: opcode, parameters: r.rest())
        }
        try r.expectEnd()
    }

    /// A 16-bit or 128-bit attribute type filling the rest of a request.
    private static func parseType(_ r: inout PacketReader) throws(HCIParseError) -> BluetoothUUID {
        guard r.remaining == 2 || r.remaining == 16 else {
            throw .malformed("\(r.context): an attribute type of \(r.remaining) bytes (must be 2 or 16)")
        }
        return try r.uuid(byteCount: r.remaining, "Attribute Type")
    }

    /// Format 1: handle and 16-bit UUID pairs; format 2: handle and 128-bit UUID pairs.
    private static func parseInformation(_ r: inout PacketReader) throws(HCIParseError) -> [ATTHandleUUID] {
        let format = try r.u8("Format")
        let uuidSize: Int
        switch format {
        case 1: uuidSize = 2
        case 2: uuidSize = 16
        default: throw .malformed("Find Information Response: format \(format) is not defined")
        }
        let entrySize = 2 + uuidSize
        guard r.remaining > 0, r.remaining % entrySize == 0 else {
            throw .malformed("Find Information Response: \(r.remaining) bytes is not a list of \(entrySize)-byte entries")
        }
        var entries: [ATTHandleUUID] = []
        while !r.isAtEnd {
            let handle = try r.u16("Handle")
            entries.append(ATTHandleUUID(handle: handle, uuid: try r.uuid(byteCount: uuidSize, "UUID")))
        }
        return entries
    }

    private static func parseHandleValues(_ r: inout PacketReader) throws(HCIParseError) -> [ATTHandleValue] {
        let length = Int(try r.u8("Length"))
        guard length >= 2, r.remaining > 0, r.remaining % length == 0 else {
            throw .malformed("Read By Type Response: \(r.remaining) bytes is not a list of \(length)-byte entries")
        }
        var entries: [ATTHandleValue] = []
        while !r.isAtEnd {
            let handle = try r.u16("Attribute Handle")
            entries.append(ATTHandleValue(handle: handle, value: try r.bytes(length - 2, "Attribute Value")))
        }
        return entries
    }

    private static func parseGroupValues(_ r: inout PacketReader) throws(HCIParseError) -> [ATTGroupValue] {
        let length = Int(try r.u8("Length"))
        guard length >= 4, r.remaining > 0, r.remaining % length == 0 else {
            throw .malformed("Read By Group Type Response: \(r.remaining) bytes is not a list of \(length)-byte entries")
        }
        var entries: [ATTGroupValue] = []
        while !r.isAtEnd {
            let handle = try r.u16("Attribute Handle")
            let end = try r.u16("End Group Handle")
            entries.append(ATTGroupValue(handle: handle, endGroup: end, value: try r.bytes(length - 4, "Attribute Value")))
        }
        return entries
    }

    /// The PDU as sent. Response lists must be encodable: Read By Type / Read By Group Type
    /// entries must share one value length (at most 253 / 251 bytes); Find Information uses
    /// format 1 when every UUID has a 16-bit alias, else writes all of them in 128 bits.
    public var encoded: [UInt8] {
        let u16 = LittleEndian.u16
        let parameters: [UInt8]
        switch self {
        case .errorResponse(let request, let handle, let code): parameters = [request] + u16(handle) + [code]
        case .exchangeMTURequest(let mtu), .exchangeMTUResponse(let mtu): parameters = u16(mtu)
        case .findInformationRequest(let start, let end): parameters = u16(start) + u16(end)
        case .findInformationResponse(let entries):
            let short = entries.allSatisfy { $0.uuid.shortValue != nil }
            parameters = [short ? 1 : 2] + entries.flatMap { entry in
                u16(entry.handle) + (short ? entry.uuid.littleEndianBytes : entry.uuid.bytes.reversed())
            }
        case .findByTypeValueRequest(let start, let end, let type, let value):
            parameters = u16(start) + u16(end) + u16(type) + value
        case .findByTypeValueResponse(let ranges): parameters = ranges.flatMap { u16($0.start) + u16($0.end) }
        case .readByTypeRequest(let start, let end, let type), .readByGroupTypeRequest(let start, let end, let type):
            parameters = u16(start) + u16(end) + type.littleEndianBytes
        case .readByTypeResponse(let entries):
            let length = entries.first.map { $0.value.count + 2 } ?? 2
            precondition(length <= 255 && entries.allSatisfy { $0.value.count + 2 == length },
                         "Read By Type Response entries must share one value length of at most 253 bytes")
            parameters = [UInt8(length)] + entries.flatMap { u16($0.handle) + $0.value }
        case .readByGroupTypeResponse(let entries):
            let length = entries.first.map { $0.value.count + 4 } ?? 4
            precondition(length <= 255 && entries.allSatisfy { $0.value.count + 4 == length },
                         "Read By Group Type Response entries must share one value length of at most 251 bytes")
            parameters = [UInt8(length)] + entries.flatMap { u16($0.handle) + u16($0.endGroup) + $0.value }
        case .readRequest(let handle): parameters = u16(handle)
        case .readResponse(let value), .readBlobResponse(let value): parameters = value
        case .readBlobRequest(let handle, let offset): parameters = u16(handle) + u16(offset)
        case .writeRequest(let handle, let value), .writeCommand(let handle, let value),
             .handleValueNotification(let handle, let value), .handleValueIndication(let handle, let value):
            parameters = u16(handle) + value
        case .writeResponse, .handleValueConfirmation: parameters = []
        case .unknown(_, let rest): parameters = rest
        }
        return [opcode] + parameters
    }
}
