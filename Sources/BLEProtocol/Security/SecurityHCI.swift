import HAL

/// The HCI half of the Security Manager's routing (Core Vol 4 Part E): the three commands its
/// effects become and the three events that become its events, so that the host's part is a
/// lookup. The codecs sit here, apart from `HCICommands.swift` and `HCIEvent.swift`, whose events
/// come through as ``HCIEvent/other(code:parameters:)`` and ``HCIEvent/leMeta(subevent:parameters:)``.
public enum SecurityHCI {
    /// LE Enable Encryption (§7.8.24): the central encrypts (or refreshes) a link.
    public static func enableEncryption(handle: UInt16, key: EncryptionKey) -> HCICommand {
        HCICommand(opcode: 0x2019, parameters: LittleEndian.u16(handle & 0x0FFF) + LittleEndian.u64(key.rand)
                   + LittleEndian.u16(key.ediv) + key.ltk.littleEndianBytes)
    }

    /// LE Long Term Key Request Reply (§7.8.25).
    public static func longTermKeyRequestReply(handle: UInt16, ltk: SecurityKey) -> HCICommand {
        HCICommand(opcode: 0x201A, parameters: LittleEndian.u16(handle & 0x0FFF) + ltk.littleEndianBytes)
    }

    /// LE Long Term Key Request Negative Reply (§7.8.26): no key for that EDIV and Rand.
    public static func longTermKeyRequestNegativeReply(handle: UInt16) -> HCICommand {
        HCICommand(opcode: 0x201B, parameters: LittleEndian.u16(handle & 0x0FFF))
    }

    /// The HCI command an effect asks for, on the link `handle`; nil for effects that are not
    /// HCI commands (PDUs, prompts, reports).
    public static func command(for effect: SecurityEffect, handle: UInt16) -> HCICommand? {
        switch effect {
        case .startEncryption(let key): enableEncryption(handle: handle, key: key)
        case .replyLTK(let ltk): longTermKeyRequestReply(handle: handle, ltk: ltk)
        case .rejectLTKRequest: longTermKeyRequestNegativeReply(handle: handle)
        default: nil
        }
    }

    /// The link and Security Manager event an HCI event means, or nil when it is none of
    /// Encryption Change (§7.7.8, and v2, §7.7.8.2), Encryption Key Refresh Complete (§7.7.39)
    /// and LE Long Term Key Request (§7.7.65.5). Short events are ignored.
    public static func event(from hci: HCIEvent) -> (handle: UInt16, event: SecurityEvent)? {
        switch hci {
        case .other(code: 0x08, let p) where p.count >= 4, .other(code: 0x59, let p) where p.count >= 4:
            // Status, handle, Encryption_Enabled (0x00 off; 0x01 AES-CCM for LE).
            return (handle(p, at: 1), .encryptionChanged(status: p[0], enabled: p[3] != 0))
        case .other(code: 0x30, let p) where p.count >= 3:
            return (handle(p, at: 1), .encryptionChanged(status: p[0], enabled: p[0] == 0))
        case .leMeta(subevent: 0x05, let p) where p.count >= 12:
            var rand: UInt64 = 0
            for index in 0..<8 { rand |= UInt64(p[2 + index]) << (8 * UInt64(index)) }
            return (handle(p, at: 0), .ltkRequested(ediv: UInt16(p[10]) | UInt16(p[11]) << 8, rand: rand))
        default:
            return nil
        }
    }

    private static func handle(_ p: [UInt8], at offset: Int) -> UInt16 {
        (UInt16(p[offset]) | UInt16(p[offset + 1]) << 8) & 0x0FFF
    }
}
