import HAL

/// The commands our host sends, with their opcodes and little-endian parameter layouts
/// (Core Specification Vol 4 Part E §7).
extension HCICommand {
    // MARK: Controller and baseband (OGF 0x03)

    /// Puts the controller in a known state; the host's first command on every open (Core Vol 4 Part E §7.3.2).
    public static let reset = HCICommand(opcode: 0x0C03)

    /// Which events the controller may send; bit 61 (LE Meta) must be set for any LE event.
    public static func setEventMask(_ mask: UInt64) -> HCICommand {
        HCICommand(opcode: 0x0C01, parameters: LittleEndian.u64(mask))
    }

    /// LE_Supported_Host, then Simultaneous_LE_Host (always 0: it is no longer used).
    public static func writeLEHostSupport(le: Bool) -> HCICommand {
        HCICommand(opcode: 0x0C6D, parameters: [le ? 1 : 0, 0])
    }

    // MARK: Informational (OGF 0x04)

    /// Asks the controller's HCI and LMP versions and manufacturer, for logs and probes.
    public static let readLocalVersionInformation = HCICommand(opcode: 0x1001)
    /// Asks the LMP feature bits; the host sends it during setup but does not rely on the answer.
    public static let readLocalSupportedFeatures = HCICommand(opcode: 0x1003)
    /// Asks the shared ACL buffer size, the fallback when the controller has no separate LE buffers.
    public static let readBufferSize = HCICommand(opcode: 0x1005)
    /// Asks the controller's public address; all zeros means it has none.
    public static let readBDADDR = HCICommand(opcode: 0x1009)

    // MARK: Link control (OGF 0x01)

    /// Ends a connection; the reason is an HCI error code such as 0x13 Remote User Terminated Connection.
    public static func disconnect(handle: UInt16, reason: UInt8) -> HCICommand {
        HCICommand(opcode: 0x0406, parameters: LittleEndian.u16(handle & 0x0FFF) + [reason])
    }

    // MARK: LE controller (OGF 0x08)

    /// Which LE Meta subevents the controller may send; the host enables only those it handles.
    public static func leSetEventMask(_ mask: UInt64) -> HCICommand {
        HCICommand(opcode: 0x2001, parameters: LittleEndian.u64(mask))
    }

    /// Asks the LE ACL buffer length and count, which size the ACL scheduler when non-zero.
    public static let leReadBufferSize = HCICommand(opcode: 0x2002)
    /// Asks the controller's LE feature bits (e.g. whether it supports the remote parameter request).
    public static let leReadLocalSupportedFeatures = HCICommand(opcode: 0x2003)

    /// Sets the random address the controller uses when own address type is 1 (random).
    public static func leSetRandomAddress(_ address: BLEAddress) -> HCICommand {
        HCICommand(opcode: 0x2005, parameters: address.littleEndianBytes)
    }

    /// Interval and window are in units of 0.625 ms; own address type 0 public, 1 random.
    public static func leSetScanParameters(active: Bool, interval: UInt16, window: UInt16,
                                           ownAddressType: UInt8, filterPolicy: UInt8) -> HCICommand {
        HCICommand(opcode: 0x200B, parameters: [active ? 1 : 0] + LittleEndian.u16(interval)
                   + LittleEndian.u16(window) + [ownAddressType, filterPolicy])
    }

    /// Starts or stops scanning; `filterDuplicates` asks the controller to report each advertiser once.
    public static func leSetScanEnable(_ enable: Bool, filterDuplicates: Bool) -> HCICommand {
        HCICommand(opcode: 0x200C, parameters: [enable ? 1 : 0, filterDuplicates ? 1 : 0])
    }

    /// Connects to one peer (initiator filter policy 0: use `peer`, not the accept list).
    /// Scan times are in 0.625 ms units, connection intervals in 1.25 ms, the timeout in 10 ms;
    /// the connection-event lengths are left at 0 (no preference).
    public static func leCreateConnection(peer: BLEAddress, scanInterval: UInt16, scanWindow: UInt16,
                                          ownAddressType: UInt8, minInterval: UInt16, maxInterval: UInt16,
                                          latency: UInt16, supervisionTimeout: UInt16) -> HCICommand {
        var p = LittleEndian.u16(scanInterval) + LittleEndian.u16(scanWindow)
        p += [0x00, peer.kind == .random ? 0x01 : 0x00]
        p += peer.littleEndianBytes
        p += [ownAddressType]
        p += LittleEndian.u16(minInterval) + LittleEndian.u16(maxInterval)
        p += LittleEndian.u16(latency) + LittleEndian.u16(supervisionTimeout)
        p += LittleEndian.u16(0) + LittleEndian.u16(0)
        return HCICommand(opcode: 0x200D, parameters: p)
    }

    /// Stops a pending LE Create Connection; the controller then reports it failed (Unknown Connection Identifier).
    public static let leCreateConnectionCancel = HCICommand(opcode: 0x200E)

    /// Asks the controller to change a link's parameters; same units as `leCreateConnection`.
    public static func leConnectionUpdate(handle: UInt16, minInterval: UInt16, maxInterval: UInt16,
                                          latency: UInt16, supervisionTimeout: UInt16) -> HCICommand {
        HCICommand(opcode: 0x2013, parameters: connectionParameters(handle, minInterval, maxInterval,
                                                                    latency, supervisionTimeout))
    }

    /// Accepts a peer's request (LE Remote Connection Parameter Request event) with these values.
    public static func leRemoteConnectionParameterRequestReply(handle: UInt16, minInterval: UInt16,
                                                               maxInterval: UInt16, latency: UInt16,
                                                               timeout: UInt16) -> HCICommand {
        HCICommand(opcode: 0x2020, parameters: connectionParameters(handle, minInterval, maxInterval,
                                                                    latency, timeout))
    }

    /// Refuses a peer's request; the reason is usually 0x3B Unacceptable Connection Parameters.
    public static func leRemoteConnectionParameterRequestNegativeReply(handle: UInt16, reason: UInt8) -> HCICommand {
        HCICommand(opcode: 0x2021, parameters: LittleEndian.u16(handle & 0x0FFF) + [reason])
    }

    /// Handle, interval range, latency, timeout, then the two connection-event lengths (0: no preference).
    private static func connectionParameters(_ handle: UInt16, _ minInterval: UInt16, _ maxInterval: UInt16,
                                             _ latency: UInt16, _ timeout: UInt16) -> [UInt8] {
        [handle & 0x0FFF, minInterval, maxInterval, latency, timeout, 0, 0].flatMap(LittleEndian.u16)
    }
}

extension HCICommand {
    /// The specification's name for an opcode, or its hex spelling (`0xFC01`) when unknown.
    public static func name(ofOpcode opcode: UInt16) -> String {
        knownNames[opcode] ?? "0x" + Hex.word(opcode)
    }

    private static let knownNames: [UInt16: String] = [
        0x0000: "No Operation",
        0x0406: "Disconnect",
        0x041D: "Read Remote Version Information",
        0x0C01: "Set Event Mask",
        0x0C03: "Reset",
        0x0C14: "Read Local Name",
        0x0C63: "Set Event Mask Page 2",
        0x0C6D: "Write LE Host Support",
        0x1001: "Read Local Version Information",
        0x1002: "Read Local Supported Commands",
        0x1003: "Read Local Supported Features",
        0x1005: "Read Buffer Size",
        0x1009: "Read BD_ADDR",
        0x1405: "Read RSSI",
        0x2001: "LE Set Event Mask",
        0x2002: "LE Read Buffer Size",
        0x2003: "LE Read Local Supported Features",
        0x2005: "LE Set Random Address",
        0x2006: "LE Set Advertising Parameters",
        0x2007: "LE Read Advertising Physical Channel Tx Power",
        0x2008: "LE Set Advertising Data",
        0x2009: "LE Set Scan Response Data",
        0x200A: "LE Set Advertising Enable",
        0x200B: "LE Set Scan Parameters",
        0x200C: "LE Set Scan Enable",
        0x200D: "LE Create Connection",
        0x200E: "LE Create Connection Cancel",
        0x200F: "LE Read Filter Accept List Size",
        0x2010: "LE Clear Filter Accept List",
        0x2011: "LE Add Device To Filter Accept List",
        0x2012: "LE Remove Device From Filter Accept List",
        0x2013: "LE Connection Update",
        0x2016: "LE Read Remote Features",
        0x2017: "LE Encrypt",
        0x2018: "LE Rand",
        0x2019: "LE Enable Encryption",
        0x201A: "LE Long Term Key Request Reply",
        0x201B: "LE Long Term Key Request Negative Reply",
        0x201C: "LE Read Supported States",
        0x2020: "LE Remote Connection Parameter Request Reply",
        0x2021: "LE Remote Connection Parameter Request Negative Reply",
        0x2022: "LE Set Data Length",
        0x2023: "LE Read Suggested Default Data Length",
        0x2024: "LE Write Suggested Default Data Length",
        0x202F: "LE Read Maximum Data Length",
        0x2030: "LE Read PHY",
        0x2031: "LE Set Default PHY",
        0x2032: "LE Set PHY",
        0x2035: "LE Set Advertising Set Random Address",
        0x2036: "LE Set Extended Advertising Parameters",
        0x2037: "LE Set Extended Advertising Data",
        0x2038: "LE Set Extended Scan Response Data",
        0x2039: "LE Set Extended Advertising Enable",
        0x203A: "LE Read Maximum Advertising Data Length",
        0x203B: "LE Read Number of Supported Advertising Sets",
        0x203C: "LE Remove Advertising Set",
        0x203D: "LE Clear Advertising Sets",
        0x2041: "LE Set Extended Scan Parameters",
        0x2042: "LE Set Extended Scan Enable",
        0x2043: "LE Extended Create Connection",
    ]
}
