import HAL

/// Reading the return parameters of a Command Complete event. They start with the status byte;
/// when it is not Success the rest may be missing, so the parsers refuse to read on.
public enum ReturnParameters {
    /// The status byte. Empty return parameters count as Unspecified Error (0x1F), so a missing
    /// status is never taken for success.
    public static func status(_ rp: [UInt8]) -> UInt8 { rp.first ?? 0x1F }

    /// Read BD_ADDR: status, then the controller's public address.
    public static func bdAddress(_ rp: [UInt8]) throws(HCIParseError) -> BLEAddress {
        var r = try reader(rp, "Read BD_ADDR")
        return try r.address(kind: .public, "BD_ADDR")
    }

    /// Read Local Supported Features or LE Read Local Supported Features: status, then 8 bytes of bits.
    public static func features(_ rp: [UInt8]) throws(HCIParseError) -> UInt64 {
        var r = try reader(rp, "features")
        return try r.u64("feature bits")
    }

    /// A reader positioned after a Success status byte.
    static func reader(_ rp: [UInt8], _ context: String) throws(HCIParseError) -> PacketReader {
        var r = PacketReader(rp, context: context)
        let status = try r.u8("Status")
        guard status == HCIStatus.success else {
            throw .malformed("\(context) failed with status 0x\(Hex.byte(status)) \(HCIStatus.describe(status))")
        }
        return r
    }
}

/// Read Local Version Information's answer: which controller and firmware we talk to.
public struct LocalVersion: Hashable, Sendable {
    /// The Core specification version the controller's HCI implements (e.g. 0x0C for 5.3).
    public var hciVersion: UInt8
    /// The maker's HCI revision, a firmware identifier only meaningful with `manufacturer`.
    public var hciRevision: UInt16
    /// The Core specification version of the controller's link layer.
    public var lmpVersion: UInt8
    /// Company identifier of the controller's maker.
    public var manufacturer: UInt16
    /// The maker's link-layer subversion; with `manufacturer`, names a firmware build.
    public var lmpSubversion: UInt16

    /// Builds the values directly, without a Command Complete to parse.
    public init(hciVersion: UInt8, hciRevision: UInt16, lmpVersion: UInt8, manufacturer: UInt16, lmpSubversion: UInt16) {
        self.hciVersion = hciVersion
        self.hciRevision = hciRevision
        self.lmpVersion = lmpVersion
        self.manufacturer = manufacturer
        self.lmpSubversion = lmpSubversion
    }

    /// Status, HCI version, HCI revision, LMP version, manufacturer, LMP subversion.
    public init(returnParameters rp: [UInt8]) throws(HCIParseError) {
        var r = try ReturnParameters.reader(rp, "Read Local Version Information")
        hciVersion = try r.u8("HCI_Version")
        hciRevision = try r.u16("HCI_Subversion")
        lmpVersion = try r.u8("LMP_Version")
        manufacturer = try r.u16("Company_Identifier")
        lmpSubversion = try r.u16("LMP_Subversion")
    }
}

/// How big and how many ACL packets the controller buffers: the host fragments to `length` and
/// keeps at most `count` packets in flight.
public struct ACLBufferSize: Hashable, Sendable {
    /// Most ACL data bytes per packet the controller accepts; the host fragments L2CAP PDUs to it.
    public var length: UInt16
    /// How many ACL packets the controller holds at once; the host's data credits.
    public var count: UInt16

    /// Builds a size from its two numbers; the host starts from 27 bytes × 1 before asking.
    public init(length: UInt16, count: UInt16) {
        self.length = length
        self.count = count
    }

    /// LE Read Buffer Size answers zero when LE shares the BR/EDR buffers: then ask Read Buffer Size.
    public var isShared: Bool { length == 0 || count == 0 }

    /// Read Buffer Size: status, ACL length u16, SCO length u8, ACL count u16, SCO count u16.
    public static func fromReadBufferSize(_ rp: [UInt8]) throws(HCIParseError) -> ACLBufferSize {
        var r = try ReturnParameters.reader(rp, "Read Buffer Size")
        let length = try r.u16("ACL_Data_Packet_Length")
        _ = try r.u8("Synchronous_Data_Packet_Length")
        let count = try r.u16("Total_Num_ACL_Data_Packets")
        _ = try r.u16("Total_Num_Synchronous_Data_Packets")
        return ACLBufferSize(length: length, count: count)
    }

    /// LE Read Buffer Size (v1): status, LE ACL length u16, LE ACL count u8.
    public static func fromLEReadBufferSize(_ rp: [UInt8]) throws(HCIParseError) -> ACLBufferSize {
        var r = try ReturnParameters.reader(rp, "LE Read Buffer Size")
        let length = try r.u16("LE_ACL_Data_Packet_Length")
        return ACLBufferSize(length: length, count: UInt16(try r.u8("Total_Num_LE_ACL_Data_Packets")))
    }
}
