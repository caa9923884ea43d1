import Foundation

/// One packet of a btsnoop capture.
public struct BTSnoopRecord: Hashable, Sendable {
    public var originalLength: UInt32
    public var includedLength: UInt32
    public var flags: UInt32
    public var cumulativeDrops: UInt32
    /// Microseconds since 0000-01-01, as stored.
    public var timestamp: Int64
    /// For datalink 1002, starts with the H4 type byte.
    public var packet: [UInt8]

    public var sentByHost: Bool { flags & BTSnoopFormat.flagReceived == 0 }
    public var isCommandOrEvent: Bool { flags & BTSnoopFormat.flagCommandOrEvent != 0 }
    public var date: Date { BTSnoopFormat.date(timestamp) }
}

/// A parsed btsnoop file: for tests and tooling that check what was captured.
public struct BTSnoopCapture: Hashable, Sendable {
    public var version: UInt32
    public var datalink: UInt32
    public var records: [BTSnoopRecord]
}

/// Parses btsnoop files strictly: a damaged file is reported, never half-read silently.
public enum BTSnoopReader {
    public static func read(path: String) throws(BTSnoopError) -> BTSnoopCapture {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .cannotRead(path: path, reason: FileManager.default.fileExists(atPath: path) ? "unreadable" : "no such file")
        }
        return try parse([UInt8](data))
    }

    public static func parse(_ bytes: [UInt8]) throws(BTSnoopError) -> BTSnoopCapture {
        guard bytes.count >= BTSnoopFormat.headerSize else {
            throw .notBTSnoop("\(bytes.count) bytes is shorter than the 16-byte header")
        }
        guard Array(bytes[0..<8]) == BTSnoopFormat.magic else { throw .notBTSnoop("it does not start with \"btsnoop\\0\"") }
        let version = bytes.snoopRead(UInt32.self, at: 8)
        guard version == BTSnoopFormat.version else { throw .unsupportedVersion(version) }
        var capture = BTSnoopCapture(version: version, datalink: bytes.snoopRead(UInt32.self, at: 12), records: [])
        var offset = BTSnoopFormat.headerSize
        while offset < bytes.count {
            let index = capture.records.count
            guard bytes.count - offset >= BTSnoopFormat.recordHeaderSize else { throw .truncatedRecord(index: index, offset: offset) }
            let original = bytes.snoopRead(UInt32.self, at: offset)
            let included = bytes.snoopRead(UInt32.self, at: offset + 4)
            guard included <= original else {
                throw .inconsistentLengths(index: index, original: original, included: included)
            }
            let start = offset + BTSnoopFormat.recordHeaderSize
            guard bytes.count - start >= Int(included) else { throw .truncatedRecord(index: index, offset: offset) }
            capture.records.append(BTSnoopRecord(
                originalLength: original, includedLength: included,
                flags: bytes.snoopRead(UInt32.self, at: offset + 8),
                cumulativeDrops: bytes.snoopRead(UInt32.self, at: offset + 12),
                timestamp: bytes.snoopRead(Int64.self, at: offset + 16),
                packet: Array(bytes[start..<start + Int(included)])))
            offset = start + Int(included)
        }
        return capture
    }
}
