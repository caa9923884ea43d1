import Foundation

/// The btsnoop capture format (RFC 1761's snoop, as Wireshark and btmon read it) for H4 packets.
public enum BTSnoopFormat {
    /// "btsnoop" and a NUL.
    public static let magic: [UInt8] = Array("btsnoop".utf8) + [0]
    /// The only btsnoop version there is; the reader refuses others.
    public static let version: UInt32 = 1
    /// Datalink 1002: HCI UART (H4), i.e. every packet starts with its H4 type indicator byte.
    public static let datalinkH4: UInt32 = 1002
    /// Bytes before the first record: magic, version and datalink.
    public static let headerSize = 16
    /// Bytes before each record's packet: lengths, flags, drops and timestamp.
    public static let recordHeaderSize = 24
    /// Microseconds from 0000-01-01 (proleptic Gregorian, as btsnoop counts) to 1970-01-01.
    public static let epochOffsetMicroseconds: Int64 = 0x00DC_DDB3_0F2F_8000

    /// Packet flag bit 0: set when the controller sent it (the host received it).
    public static let flagReceived: UInt32 = 1 << 0
    /// Packet flag bit 1: set for commands and events, clear for data (ACL, SCO, ISO).
    public static let flagCommandOrEvent: UInt32 = 1 << 1

    /// A time as btsnoop records it: microseconds since year 0.
    static func timestamp(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded()) + epochOffsetMicroseconds
    }

    /// The wall-clock time a btsnoop record's timestamp stands for.
    static func date(_ timestamp: Int64) -> Date {
        Date(timeIntervalSince1970: Double(timestamp - epochOffsetMicroseconds) / 1_000_000)
    }

    /// H4 types 0x01 (command) and 0x04 (event) are "command or event"; the rest are data.
    static func flags(for h4Packet: [UInt8], sentByHost: Bool) -> UInt32 {
        var flags: UInt32 = sentByHost ? 0 : flagReceived
        if let type = h4Packet.first, type == 0x01 || type == 0x04 { flags |= flagCommandOrEvent }
        return flags
    }
}

/// Why a btsnoop file could not be written or read.
public enum BTSnoopError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The capture file could not be opened for writing; nothing was captured.
    case cannotCreate(path: String, reason: String)
    /// A write to the capture failed mid-run; the capture stops, the session does not.
    case writeFailed(path: String, reason: String)
    /// The file could not be read: missing, not a regular file, too large, or a read failed.
    case cannotRead(path: String, reason: String)
    /// Too short for a header, or no btsnoop magic at the start: some other kind of file.
    case notBTSnoop(String)
    /// A btsnoop version other than 1.
    case unsupportedVersion(UInt32)
    /// The file ends inside a record, as when a capture was cut off.
    case truncatedRecord(index: Int, offset: Int)
    /// A record claims to include more bytes than the packet had.
    case inconsistentLengths(index: Int, original: UInt32, included: UInt32)

    /// The words a person reads in messages and logs.
    public var description: String {
        switch self {
        case .cannotCreate(let path, let reason): "cannot create btsnoop file \(path): \(reason)"
        case .writeFailed(let path, let reason): "writing btsnoop file \(path) failed: \(reason); capture stopped"
        case .cannotRead(let path, let reason): "cannot read \(path): \(reason)"
        case .notBTSnoop(let why): "not a btsnoop file: \(why)"
        case .unsupportedVersion(let version): "btsnoop version \(version) is not supported (only version 1)"
        case .truncatedRecord(let index, let offset): "record \(index) at byte \(offset) is cut short (file truncated?)"
        case .inconsistentLengths(let index, let original, let included):
            "record \(index) includes \(included) bytes of a \(original)-byte packet (more than the packet)"
        }
    }
}

extension Array where Element == UInt8 {
    mutating func snoopAppend<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }

    func snoopRead<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        self[offset..<offset + MemoryLayout<T>.size].reduce(T.zero) { $0 << 8 | T($1) }
    }
}
