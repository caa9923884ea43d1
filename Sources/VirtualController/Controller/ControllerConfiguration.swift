import HAL

/// What the virtual controller says about itself, and the sizes that bound it. The defaults are
/// those of a plain Bluetooth 5.3 LE-only controller without data length extension: 27-byte LE
/// ACL buffers (so a full-MTU ATT PDU travels as ten fragments, as on many real dongles), eight of them.
package struct ControllerConfiguration: Hashable, Sendable {
    /// The controller's public address (Read BD_ADDR).
    package var address = BLEAddress.literal([0x5A, 0x11, 0xC0, 0x00, 0x00, 0x01], .public)
    /// 0x0C: Core Specification 5.3 (Assigned Numbers, "Core Specification Version").
    package var hciVersion: UInt8 = 0x0C
    package var hciRevision: UInt16 = 0x0001
    package var lmpVersion: UInt8 = 0x0C
    /// 0xFFFF: the company identifier reserved for tests (Assigned Numbers), which this is.
    package var manufacturer: UInt16 = 0xFFFF
    package var lmpSubversion: UInt16 = 0x0001

    /// LE Read Buffer Size: the largest ACL packet the host may send, and how many at once.
    package var leBufferLength: UInt16 = 27
    package var leBufferCount: UInt8 = 8
    /// The data of one link-layer PDU: each becomes one ACL packet to the host, so a longer L2CAP
    /// frame reaches the host in fragments of this size.
    package var airPayloadLength = 27
    /// How long a packet the host sent waits for its connection event before it is sent and its
    /// buffer freed (Number Of Completed Packets). Zero: at once.
    package var airDelay: Duration = .zero

    /// Controllers hand out handles from a base and reuse a freed one for the next link.
    package var firstConnectionHandle: UInt16 = 0x0040
    package var maximumConnections = 4
    package var acceptListSize: UInt8 = 8
    /// Num_HCI_Command_Packets in every Command Complete and Command Status.
    package var commandCredits: UInt8 = 1
    /// LE feature bit 12: the host may use the extended scanning and initiating commands.
    package var supportsExtendedAdvertising = true
    /// Whether a host using the legacy scanning and initiating commands still hears extended
    /// advertisements (as LE Extended Advertising Reports) and connects to them, as bumble's
    /// controller does. Off by default, as on real controllers; a cassette recorded through such a
    /// controller is replayed with it on, so the host hears what it heard then.
    package var legacyCommandsSeeExtendedAdvertising = false

    /// Bytes waiting for the host beyond which advertising reports are dropped and peripherals
    /// are held back, as a controller whose buffers are full does.
    package var hostQueueSoftLimit = 64 * 1024
    /// Beyond this nothing more is queued at all (only a host that writes without ever reading gets here).
    package var hostQueueHardLimit = 512 * 1024
    /// L2CAP frames a link keeps for a host that is not reading, beyond which it drops them.
    package var linkBacklogLimit = 64

    /// Seeds LE Rand, so a run repeats exactly.
    package var randomSeed: UInt64 = 0x5EED_0BAD_C0DE_F00D

    package init() {}

    /// LE features (Core Vol 6 Part B §4.6): bit 1 Connection Parameters Request Procedure, bit 12
    /// LE Extended Advertising when enabled.
    var leFeatures: UInt64 {
        var bits: UInt64 = 1 << 1
        if supportsExtendedAdvertising { bits |= 1 << 12 }
        return bits
    }

    /// LMP features page 0: byte 4 bit 5 BR/EDR Not Supported, bit 6 LE Supported (Controller).
    var lmpFeatures: [UInt8] { [0, 0, 0, 0, 0x60, 0, 0, 0] }
}

/// Read Local Supported Commands' bitmap: octet and bit of each command this controller
/// implements (Core Vol 4 Part E §6.27; positions as in bumble's HCI_SUPPORTED_COMMANDS_MASKS).
enum SupportedCommands {
    static let positions: [UInt16: (octet: Int, bit: Int)] = [
        0x0406: (0, 5),   // Disconnect
        0x041D: (2, 7),   // Read Remote Version Information
        0x0C01: (5, 6),   // Set Event Mask
        0x0C03: (5, 7),   // Reset
        0x0C63: (22, 2),  // Set Event Mask Page 2
        0x0C6C: (24, 5),  // Read LE Host Support
        0x0C6D: (24, 6),  // Write LE Host Support
        0x1001: (14, 3),  // Read Local Version Information
        0x1003: (14, 5),  // Read Local Supported Features
        0x1005: (14, 7),  // Read Buffer Size
        0x1009: (15, 1),  // Read BD_ADDR
        0x1405: (15, 5),  // Read RSSI
        0x2001: (25, 0),  // LE Set Event Mask
        0x2002: (25, 1),  // LE Read Buffer Size
        0x2003: (25, 2),  // LE Read Local Supported Features
        0x2005: (25, 4),  // LE Set Random Address
        0x200B: (26, 2),  // LE Set Scan Parameters
        0x200C: (26, 3),  // LE Set Scan Enable
        0x200D: (26, 4),  // LE Create Connection
        0x200E: (26, 5),  // LE Create Connection Cancel
        0x200F: (26, 6),  // LE Read Filter Accept List Size
        0x2010: (26, 7),  // LE Clear Filter Accept List
        0x2011: (27, 0),  // LE Add Device To Filter Accept List
        0x2012: (27, 1),  // LE Remove Device From Filter Accept List
        0x2013: (27, 2),  // LE Connection Update
        0x2016: (27, 5),  // LE Read Remote Features
        0x2018: (27, 7),  // LE Rand
        0x2019: (28, 0),  // LE Enable Encryption
        0x2020: (33, 4),  // LE Remote Connection Parameter Request Reply
        0x2021: (33, 5),  // LE Remote Connection Parameter Request Negative Reply
        0x2041: (37, 5),  // LE Set Extended Scan Parameters
        0x2042: (37, 6),  // LE Set Extended Scan Enable
        0x2043: (37, 7),  // LE Extended Create Connection
    ]

    static let extendedOnly: Set<UInt16> = [0x2041, 0x2042, 0x2043]

    static func bitmap(extended: Bool) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 64)
        for (opcode, position) in positions where extended || !extendedOnly.contains(opcode) {
            bytes[position.octet] |= 1 << UInt8(position.bit)
        }
        return bytes
    }
}

extension BLEAddress {
    /// An address written out in code. Six bytes always make an address, so this cannot fail at
    /// run time; a literal of the wrong length is a programming error the tests meet first.
    static func literal(_ bytes: [UInt8], _ kind: Kind) -> BLEAddress {
        guard let address = BLEAddress(bytes: bytes, kind: kind) else { preconditionFailure("a BLE address has six bytes, not \(bytes.count)") }
        return address
    }
}
