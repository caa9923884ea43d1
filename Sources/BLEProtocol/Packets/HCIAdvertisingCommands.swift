import HAL

/// The commands of the peripheral role: legacy and extended advertising (Core Specification
/// Vol 4 Part E §7.8.5–§7.8.9, §7.8.52–§7.8.56), with their little-endian parameter layouts.
extension HCICommand {
    /// Legacy advertising PDU types (Advertising_Type, §7.8.5).
    public enum LegacyAdvertisingType: UInt8, Sendable {
        /// ADV_IND: connectable and scannable undirected.
        case connectable = 0x00
        /// ADV_SCAN_IND: scannable, not connectable.
        case scannable = 0x02
        /// ADV_NONCONN_IND: neither.
        case nonConnectable = 0x03
    }

    /// Interval in 0.625 ms units (0x0020…0x4000); own address type 0 public, 1 random; all three
    /// primary channels, no filter accept list.
    public static func leSetAdvertisingParameters(interval: UInt16, type: LegacyAdvertisingType, ownAddressType: UInt8) -> HCICommand {
        HCICommand(opcode: 0x2006, parameters: LittleEndian.u16(interval) + LittleEndian.u16(interval)
                   + [type.rawValue, ownAddressType, 0x00] + [UInt8](repeating: 0, count: 6) + [0x07, 0x00])
    }

    /// Up to 31 bytes of advertising data; the command always carries 31 (zero-padded).
    public static func leSetAdvertisingData(_ data: [UInt8]) -> HCICommand {
        let data = Array(data.prefix(31))
        return HCICommand(opcode: 0x2008, parameters: [UInt8(data.count)] + data + [UInt8](repeating: 0, count: 31 - data.count))
    }

    /// Up to 31 bytes of scan response data, laid out as `leSetAdvertisingData`.
    public static func leSetScanResponseData(_ data: [UInt8]) -> HCICommand {
        let data = Array(data.prefix(31))
        return HCICommand(opcode: 0x2009, parameters: [UInt8(data.count)] + data + [UInt8](repeating: 0, count: 31 - data.count))
    }

    /// Starts or stops legacy advertising.
    public static func leSetAdvertisingEnable(_ enable: Bool) -> HCICommand {
        HCICommand(opcode: 0x200A, parameters: [enable ? 1 : 0])
    }

    /// Advertising_Event_Properties bits of an extended advertising set (§7.8.53).
    public struct ExtendedAdvertisingProperties: OptionSet, Hashable, Sendable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        public static let connectable = Self(rawValue: 1 << 0)
        public static let scannable = Self(rawValue: 1 << 1)
        public static let legacy = Self(rawValue: 1 << 4)
    }

    /// LE Set Extended Advertising Parameters (v1): the set's PDU properties, interval (0.625 ms
    /// units, 24 bits), own address type, all primary channels, no preference for transmit power,
    /// LE 1M on both primary and secondary channels, advertising SID 0, no scan request events.
    public static func leSetExtendedAdvertisingParameters(handle: UInt8, properties: ExtendedAdvertisingProperties,
                                                          interval: UInt32, ownAddressType: UInt8) -> HCICommand {
        let interval = min(max(interval, 0x20), 0xFF_FFFF)
        let interval3 = [UInt8(interval & 0xFF), UInt8(interval >> 8 & 0xFF), UInt8(interval >> 16 & 0xFF)]
        var p: [UInt8] = [handle] + LittleEndian.u16(properties.rawValue) + interval3 + interval3
        p += [0x07, ownAddressType, 0x00] + [UInt8](repeating: 0, count: 6)
        p += [0x00, 0x7F, 0x01, 0x00, 0x01, 0x00, 0x00]
        return HCICommand(opcode: 0x2036, parameters: p)
    }

    /// The random address an advertising set uses when its own address type is random; a
    /// controller may need it before the set is enabled (bumble's stops advertising without it).
    public static func leSetAdvertisingSetRandomAddress(handle: UInt8, address: BLEAddress) -> HCICommand {
        HCICommand(opcode: 0x2035, parameters: [handle] + address.littleEndianBytes)
    }

    /// The most advertising data one LE Set Extended Advertising Data command carries.
    public static let extendedAdvertisingFragment = 251

    /// LE Set Extended Advertising Data for a whole set's data, cut into the commands it takes
    /// (operation 3 complete, or 1 first, 0 intermediate, 2 last), with no fragmentation
    /// preference on air left to the controller (Fragment_Preference 1: none wanted).
    public static func leSetExtendedAdvertisingData(handle: UInt8, _ data: [UInt8]) -> [HCICommand] {
        let size = extendedAdvertisingFragment
        guard data.count > size else {
            return [HCICommand(opcode: 0x2037, parameters: [handle, 0x03, 0x01, UInt8(data.count)] + data)]
        }
        var commands: [HCICommand] = []
        var offset = 0
        while offset < data.count {
            let piece = Array(data[offset..<min(offset + size, data.count)])
            let operation: UInt8 = offset == 0 ? 0x01 : (offset + piece.count >= data.count ? 0x02 : 0x00)
            commands.append(HCICommand(opcode: 0x2037, parameters: [handle, operation, 0x01, UInt8(piece.count)] + piece))
            offset += piece.count
        }
        return commands
    }

    /// Enables or disables one set, with no duration and no event limit.
    public static func leSetExtendedAdvertisingEnable(_ enable: Bool, handle: UInt8) -> HCICommand {
        HCICommand(opcode: 0x2039, parameters: [enable ? 1 : 0, 0x01, handle, 0x00, 0x00, 0x00])
    }

    /// Removes every advertising set (so a set's parameters can be given again).
    public static let leClearAdvertisingSets = HCICommand(opcode: 0x203D)
}

/// LE Advertising Set Terminated (LE Meta subevent 0x12, Core Vol 4 Part E §7.7.65.18): a set
/// stopped, on a connection (status 0, with its handle) or at its duration or event limit.
public struct LEAdvertisingSetTerminated: Hashable, Sendable {
    public static let subevent: UInt8 = 0x12
    public var status: UInt8
    public var advertisingHandle: UInt8
    public var connectionHandle: UInt16
    public var completedEvents: UInt8

    /// Parses the subevent's parameters (after the subevent code); nil when they are short.
    public init?(parameters: [UInt8]) {
        guard parameters.count >= 5 else { return nil }
        status = parameters[0]
        advertisingHandle = parameters[1]
        connectionHandle = (UInt16(parameters[2]) | UInt16(parameters[3]) << 8) & 0x0FFF
        completedEvents = parameters[4]
    }
}
