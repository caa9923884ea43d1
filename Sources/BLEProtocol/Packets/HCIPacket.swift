import HAL

/// The one-byte indicator that precedes every packet on an H4 (UART or TCP) stream.
public enum HCIPacketType: UInt8, Sendable {
    /// Host to controller: a command.
    case command = 0x01
    /// Connection data in either direction; on LE, the L2CAP traffic that carries ATT.
    case acl = 0x02
    /// Classic voice audio; framed and passed through, never used on LE.
    case sco = 0x03
    /// Controller to host: an event.
    case event = 0x04
    /// LE Audio isochronous data; framed and passed through, never decoded.
    case iso = 0x05
}

/// A command from host to controller: opcode (OGF in the top 6 bits, OCF in the low 10) and
/// at most 255 parameter bytes.
public struct HCICommand: Hashable, Sendable {
    /// Says which command this is; also how Command Complete and Status are matched to it.
    public var opcode: UInt16
    /// The command's parameters, little-endian, at most 255 bytes.
    public var parameters: [UInt8]

    /// Builds a command from an opcode, e.g. `0x0C03` Reset; no parameters by default.
    public init(opcode: UInt16, parameters: [UInt8] = []) {
        self.opcode = opcode
        self.parameters = parameters
    }

    /// Builds a command from its group and command fields, for vendor commands (OGF 0x3F).
    public init(ogf: UInt8, ocf: UInt16, parameters: [UInt8] = []) {
        self.init(opcode: UInt16(ogf & 0x3F) << 10 | (ocf & 0x03FF), parameters: parameters)
    }

    /// The opcode group (6 bits): 0x01 link control, 0x03 controller, 0x08 LE, 0x3F vendor.
    public var ogf: UInt8 { UInt8(opcode >> 10) }
    /// The command within its group (10 bits).
    public var ocf: UInt16 { opcode & 0x03FF }

    /// The specification's name for the opcode, or `0xFC01` for one we do not know.
    public var name: String { HCICommand.name(ofOpcode: opcode) }

    /// Opcode, length and parameters, without the H4 indicator.
    public var encoded: [UInt8] {
        precondition(parameters.count <= 255, "HCI command parameters are limited to 255 bytes")
        return LittleEndian.u16(opcode) + [UInt8(parameters.count)] + parameters
    }
}

/// An event from controller to host, not yet interpreted (see `HCIEvent`).
public struct HCIEventPacket: Hashable, Sendable {
    /// The event code; `HCIEvent.Code` names the ones the host acts on.
    public var code: UInt8
    /// The event's parameters, at most 255 bytes.
    public var parameters: [UInt8]

    /// Builds an event packet; the framer and simulated controllers use it.
    public init(code: UInt8, parameters: [UInt8]) {
        self.code = code
        self.parameters = parameters
    }

    /// Code, length and parameters, without the H4 indicator.
    public var encoded: [UInt8] {
        precondition(parameters.count <= 255, "HCI event parameters are limited to 255 bytes")
        return [code, UInt8(parameters.count)] + parameters
    }
}

/// One packet of an H4 stream.
public enum HCIPacket: Hashable, Sendable {
    /// A command the host sends; seen in captures and by simulated controllers.
    case command(HCICommand)
    /// A chunk of connection data, to be reassembled into L2CAP PDUs.
    case acl(ACLPacket)
    /// An event from the controller, still raw; `HCIEvent` decodes it.
    case event(HCIEventPacket)
    /// SCO, ISO or anything else we carry without looking inside: `payload` is everything after
    /// the indicator byte, header included.
    case other(type: UInt8, payload: [UInt8])

    /// The indicator byte followed by the packet, as written to an H4 transport.
    public var h4Bytes: [UInt8] {
        switch self {
        case .command(let command): [HCIPacketType.command.rawValue] + command.encoded
        case .acl(let acl): [HCIPacketType.acl.rawValue] + acl.encoded
        case .event(let event): [HCIPacketType.event.rawValue] + event.encoded
        case .other(let type, let payload): [type] + payload
        }
    }
}
