import HAL

/// The events a BLE host acts on, decoded; anything else is kept raw.
public enum HCIEvent: Hashable, Sendable {
    /// A command finished: the command credits the controller now grants, which opcode, and its return bytes.
    case commandComplete(numPackets: UInt8, opcode: UInt16, returnParameters: [UInt8])
    /// A command was accepted (status 0) and will finish in a later event, or was refused with this status.
    case commandStatus(status: UInt8, numPackets: UInt8, opcode: UInt16)
    /// A link went down, or our Disconnect failed; `reason` is the HCI error code that ended it.
    case disconnectionComplete(status: UInt8, handle: UInt16, reason: UInt8)
    /// ACL buffers the controller has sent and freed, per link: data credits to give back.
    case numberOfCompletedPackets([CompletedPackets])
    /// The controller failed in a way only a reset fixes; the host gives up on the transport.
    case hardwareError(UInt8)
    /// From LE Connection Complete and from LE Enhanced Connection Complete (v1 and v2).
    case leConnectionComplete(LEConnectionComplete)
    /// From LE Advertising Report and from LE Extended Advertising Report.
    case leAdvertisingReports([LEAdvertisingReport])
    /// A link's new parameters after an update (interval 1.25 ms units, timeout 10 ms units).
    case leConnectionUpdateComplete(status: UInt8, handle: UInt16, interval: UInt16, latency: UInt16,
                                    supervisionTimeout: UInt16)
    /// The peer asks for new connection parameters; the host replies or refuses with a negative reply.
    case leRemoteConnectionParameterRequest(handle: UInt16, minInterval: UInt16, maxInterval: UInt16,
                                            latency: UInt16, timeout: UInt16)
    /// Any other LE Meta subevent, parameters after the subevent code.
    case leMeta(subevent: UInt8, parameters: [UInt8])
    /// An event code the host does not decode, kept raw for logs.
    case other(code: UInt8, parameters: [UInt8])

    /// Event codes (Vol 4 Part E §7.7).
    public enum Code {
        /// A link ended, or a Disconnect failed (Core Vol 4 Part E §7.7.5).
        public static let disconnectionComplete: UInt8 = 0x05
        /// A command finished; carries its return parameters and the controller's new command credits.
        public static let commandComplete: UInt8 = 0x0E
        /// A command was accepted (or refused) and will finish later; also carries command credits.
        public static let commandStatus: UInt8 = 0x0F
        /// The controller hit a fault it cannot recover from; the host must reset it.
        public static let hardwareError: UInt8 = 0x10
        /// ACL buffers the controller freed, per link, giving the host its data credits back.
        public static let numberOfCompletedPackets: UInt8 = 0x13
        /// Wraps every LE event; the first parameter byte is the `LESubevent` code.
        public static let leMeta: UInt8 = 0x3E
    }

    /// LE Meta subevent codes (Vol 4 Part E §7.7.65).
    public enum LESubevent {
        /// A legacy LE connection was made or failed.
        public static let connectionComplete: UInt8 = 0x01
        /// Legacy advertisements and scan responses seen while scanning.
        public static let advertisingReport: UInt8 = 0x02
        /// A link's interval, latency or timeout changed.
        public static let connectionUpdateComplete: UInt8 = 0x03
        /// The peer asks for new connection parameters; the host must reply or refuse.
        public static let remoteConnectionParameterRequest: UInt8 = 0x06
        /// Like Connection Complete, with the resolvable private addresses; sent when privacy is in use.
        public static let enhancedConnectionComplete: UInt8 = 0x0A
        /// Advertisements seen with extended scanning, legacy ones included.
        public static let extendedAdvertisingReport: UInt8 = 0x0D
        /// Enhanced Connection Complete with advertising and sync handles appended (Core 5.4 and later).
        public static let enhancedConnectionCompleteV2: UInt8 = 0x29
    }

    /// Decodes the events above. Fixed layouts may carry extra trailing bytes (later versions of
    /// the specification append fields, and a host ignores what it does not know); counted
    /// lists must fill the event exactly.
    public init(parsing packet: HCIEventPacket) throws(HCIParseError) {
        switch packet.code {
        case Code.commandComplete:
            var r = PacketReader(packet.parameters, context: "Command Complete")
            let numPackets = try r.u8("Num_HCI_Command_Packets")
            let opcode = try r.u16("Command_Opcode")
            self = .commandComplete(numPackets: numPackets, opcode: opcode, returnParameters: r.rest())
        case Code.commandStatus:
            var r = PacketReader(packet.parameters, context: "Command Status")
            let status = try r.u8("Status")
            let numPackets = try r.u8("Num_HCI_Command_Packets")
            self = .commandStatus(status: status, numPackets: numPackets, opcode: try r.u16("Command_Opcode"))
        case Code.disconnectionComplete:
            var r = PacketReader(packet.parameters, context: "Disconnection Complete")
            let status = try r.u8("Status")
            let handle = try r.u16("Connection_Handle") & 0x0FFF
            self = .disconnectionComplete(status: status, handle: handle, reason: try r.u8("Reason"))
        case Code.numberOfCompletedPackets:
            self = .numberOfCompletedPackets(try Self.completedPackets(packet.parameters))
        case Code.hardwareError:
            var r = PacketReader(packet.parameters, context: "Hardware Error")
            self = .hardwareError(try r.u8("Hardware_Code"))
        case Code.leMeta:
            self = try Self.leMeta(packet.parameters)
        default:
            self = .other(code: packet.code, parameters: packet.parameters)
        }
    }

    private static func completedPackets(_ parameters: [UInt8]) throws(HCIParseError) -> [CompletedPackets] {
        var r = PacketReader(parameters, context: "Number Of Completed Packets")
        let count = Int(try r.u8("Num_Handles"))
        // Each entry is a handle then its count (the arrays are interleaved).
        guard r.remaining == count * 4 else {
            throw .malformed("Number Of Completed Packets: \(count) handles need \(count * 4) bytes, got \(r.remaining)")
        }
        var entries: [CompletedPackets] = []
        for _ in 0..<count {
            let handle = try r.u16("Connection_Handle") & 0x0FFF
            entries.append(CompletedPackets(handle: handle, count: try r.u16("Num_Completed_Packets")))
        }
        return entries
    }

    private static func leMeta(_ parameters: [UInt8]) throws(HCIParseError) -> HCIEvent {
        guard let subevent = parameters.first else { throw .truncated("LE Meta event without a subevent code") }
        let body = Array(parameters.dropFirst())
        switch subevent {
        case LESubevent.connectionComplete:
            return .leConnectionComplete(try connectionComplete(body, enhanced: false))
        case LESubevent.enhancedConnectionComplete, LESubevent.enhancedConnectionCompleteV2:
            return .leConnectionComplete(try connectionComplete(body, enhanced: true))
        case LESubevent.advertisingReport:
            return .leAdvertisingReports(try legacyReports(body))
        case LESubevent.extendedAdvertisingReport:
            return .leAdvertisingReports(try extendedReports(body))
        case LESubevent.connectionUpdateComplete:
            var r = PacketReader(body, context: "LE Connection Update Complete")
            let status = try r.u8("Status")
            let handle = try r.u16("Connection_Handle") & 0x0FFF
            let interval = try r.u16("Connection_Interval")
            let latency = try r.u16("Peripheral_Latency")
            return .leConnectionUpdateComplete(status: status, handle: handle, interval: interval, latency: latency,
                                               supervisionTimeout: try r.u16("Supervision_Timeout"))
        case LESubevent.remoteConnectionParameterRequest:
            var r = PacketReader(body, context: "LE Remote Connection Parameter Request")
            let handle = try r.u16("Connection_Handle") & 0x0FFF
            let minInterval = try r.u16("Interval_Min")
            let maxInterval = try r.u16("Interval_Max")
            let latency = try r.u16("Max_Latency")
            return .leRemoteConnectionParameterRequest(handle: handle, minInterval: minInterval,
                                                       maxInterval: maxInterval, latency: latency,
                                                       timeout: try r.u16("Timeout"))
        default:
            return .leMeta(subevent: subevent, parameters: body)
        }
    }

    /// Legacy: status, handle, role, peer address type and address, interval, latency, timeout,
    /// clock accuracy. Enhanced inserts the local and peer resolvable private addresses after the
    /// peer address (v2 appends the advertising and sync handles, which we do not need).
    private static func connectionComplete(_ body: [UInt8], enhanced: Bool) throws(HCIParseError) -> LEConnectionComplete {
        var r = PacketReader(body, context: enhanced ? "LE Enhanced Connection Complete" : "LE Connection Complete")
        try r.require(enhanced ? 30 : 18, for: "parameters")
        let status = try r.u8("Status")
        let handle = try r.u16("Connection_Handle") & 0x0FFF
        let role = try r.u8("Role")
        let kind = try addressKind(try r.u8("Peer_Address_Type"), context: r.context)
        let peer = try r.address(kind: kind, "Peer_Address")
        if enhanced {
            _ = try r.bytes(12, "Local/Peer_Resolvable_Private_Address")
        }
        let interval = try r.u16("Connection_Interval")
        let latency = try r.u16("Peripheral_Latency")
        let timeout = try r.u16("Supervision_Timeout")
        return LEConnectionComplete(status: status, handle: handle, role: role, peer: peer, interval: interval,
                                    latency: latency, supervisionTimeout: timeout)
    }

    /// 0 public, 1 random, 2 public identity, 3 random (static) identity — the last two come
    /// from a resolved private address. Extended reports use 0xFF for anonymous advertisers,
    /// which have no address of their own; they are reported as random.
    private static func addressKind(_ type: UInt8, context: String, allowAnonymous: Bool = false) throws(HCIParseError) -> BLEAddress.Kind {
        switch type {
        case 0x00, 0x02: return .public
        case 0x01, 0x03: return .random
        case 0xFF where allowAnonymous: return .random
        default: throw .malformed("\(context): address type 0x\(Hex.byte(type)) is not defined")
        }
    }

    /// Each report: event type, address type, address, data length, data, RSSI.
    private static func legacyReports(_ body: [UInt8]) throws(HCIParseError) -> [LEAdvertisingReport] {
        var r = PacketReader(body, context: "LE Advertising Report")
        let count = Int(try r.u8("Num_Reports"))
        guard count > 0 else { throw .malformed("LE Advertising Report with no reports") }
        // A report takes at least 10 bytes, so a hostile count cannot make us reserve much.
        guard count * 10 <= r.remaining else {
            throw .truncated("LE Advertising Report: \(count) reports cannot fit in \(r.remaining) bytes")
        }
        var reports: [LEAdvertisingReport] = []
        for _ in 0..<count {
            let eventType = try r.u8("Event_Type")
            let kind = try addressKind(try r.u8("Address_Type"), context: r.context)
            let address = try r.address(kind: kind, "Address")
            let length = Int(try r.u8("Data_Length"))
            guard length <= 31 else { throw .malformed("LE Advertising Report: legacy data of \(length) bytes (at most 31)") }
            let data = try r.bytes(length, "Data")
            let rssi = try r.i8("RSSI")
            let (connectable, scannable, scanResponse): (Bool, Bool, Bool)
            switch eventType {
            case 0x00: (connectable, scannable, scanResponse) = (true, true, false)    // ADV_IND
            case 0x01: (connectable, scannable, scanResponse) = (true, false, false)   // ADV_DIRECT_IND
            case 0x02: (connectable, scannable, scanResponse) = (false, true, false)   // ADV_SCAN_IND
            case 0x03: (connectable, scannable, scanResponse) = (false, false, false)  // ADV_NONCONN_IND
            // SCAN_RSP: the advertiser was scannable; whether it is connectable shows in its advertisement.
            case 0x04: (connectable, scannable, scanResponse) = (false, true, true)
            default: throw .malformed("LE Advertising Report: event type 0x\(Hex.byte(eventType)) is not defined")
            }
            reports.append(LEAdvertisingReport(address: address, rssi: rssi, data: data, connectable: connectable,
                                               scannable: scannable, isScanResponse: scanResponse, isLegacy: true))
        }
        try r.expectEnd()
        return reports
    }

    /// Each report: event type (u16 bits: 0 connectable, 1 scannable, 2 directed, 3 scan response,
    /// 4 legacy, 5–6 data status), address type, address, primary and secondary PHY, SID, TX power,
    /// RSSI, periodic interval, direct address type and address, data length, data.
    private static func extendedReports(_ body: [UInt8]) throws(HCIParseError) -> [LEAdvertisingReport] {
        var r = PacketReader(body, context: "LE Extended Advertising Report")
        let count = Int(try r.u8("Num_Reports"))
        guard count > 0 else { throw .malformed("LE Extended Advertising Report with no reports") }
        guard count * 24 <= r.remaining else {
            throw .truncated("LE Extended Advertising Report: \(count) reports cannot fit in \(r.remaining) bytes")
        }
        var reports: [LEAdvertisingReport] = []
        for _ in 0..<count {
            let eventType = try r.u16("Event_Type")
            let kind = try addressKind(try r.u8("Address_Type"), context: r.context, allowAnonymous: true)
            let address = try r.address(kind: kind, "Address")
            _ = try r.bytes(4, "Primary_PHY, Secondary_PHY, Advertising_SID, TX_Power")
            let rssi = try r.i8("RSSI")
            _ = try r.bytes(9, "Periodic_Advertising_Interval, Direct_Address_Type, Direct_Address")
            let length = Int(try r.u8("Data_Length"))
            let data = try r.bytes(length, "Data")
            reports.append(LEAdvertisingReport(address: address, rssi: rssi, data: data,
                                               connectable: eventType & 0x01 != 0,
                                               scannable: eventType & 0x02 != 0,
                                               isScanResponse: eventType & 0x08 != 0,
                                               isLegacy: eventType & 0x10 != 0))
        }
        try r.expectEnd()
        return reports
    }
}
