import Foundation
import LinuxIO

/// One packet of a btsnoop capture.
public struct BTSnoopRecord: Hashable, Sendable {
    /// The packet's length when captured; more than `includedLength` when the capture cut it.
    public var originalLength: UInt32
    /// How many bytes of the packet the record holds.
    public var includedLength: UInt32
    /// Direction and kind bits (`BTSnoopFormat.flagReceived`, `flagCommandOrEvent`).
    public var flags: UInt32
    /// Packets the capturing tool lost before this one; our writer always writes 0.
    public var cumulativeDrops: UInt32
    /// Microseconds since 0000-01-01, as stored.
    public var timestamp: Int64
    /// For datalink 1002, starts with the H4 type byte.
    public var packet: [UInt8]

    /// Whether the host sent it (flag bit 0 clear), for telling the two directions apart.
    public var sentByHost: Bool { flags & BTSnoopFormat.flagReceived == 0 }
    /// Whether it is a command or an event rather than data, as the flags say.
    public var isCommandOrEvent: Bool { flags & BTSnoopFormat.flagCommandOrEvent != 0 }
    /// The timestamp as a `Date`, for showing when a packet was seen.
    public var date: Date { BTSnoopFormat.date(timestamp) }
}

/// A parsed btsnoop file: for tests and tooling that check what was captured.
public struct BTSnoopCapture: Hashable, Sendable {
    /// The format version from the header (always 1 once parsed).
    public var version: UInt32
    /// What each packet is framed as; 1002 means every packet starts with its H4 type byte.
    public var datalink: UInt32
    /// The packets in capture order.
    public var records: [BTSnoopRecord]
}

/// Parses btsnoop files strictly: a damaged file is reported, never half-read silently.
public enum BTSnoopReader {
    /// The largest capture read: hours of a busy controller's traffic are a few MiB, so a file
    /// larger than this is not a capture to load into memory whole.
    public static let fileSizeLimit = 256 << 20

    /// Reads a capture file whole, after checking what it is: only a regular file of at most
    /// ``fileSizeLimit`` bytes (a device such as /dev/zero, a FIFO or a huge file would otherwise
    /// be read until memory runs out). The size is read before anything is allocated, and
    /// reading stops there even if the file grows meanwhile.
    public static func read(path: String) throws(BTSnoopError) -> BTSnoopCapture {
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(path, .readOnly, nonBlocking: true) } catch {
            throw .cannotRead(path: path, reason: error.description)
        }
        defer { fd.close() }
        guard let size = fd.bytesLeftInFile() else {
            throw .cannotRead(path: path, reason: "not a regular file: give the path of a btsnoop capture")
        }
        guard size <= fileSizeLimit else {
            throw .cannotRead(path: path, reason: "\(size) bytes is more than the \(fileSizeLimit >> 20) MiB a capture may have")
        }
        var bytes = [UInt8](repeating: 0, count: size)
        var filled = 0
        while filled < size {
            let read = bytes.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) in try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[filled...])) }
            }
            let count: Int
            switch read {
            case .success(let n): count = n
            case .failure(let error): throw .cannotRead(path: path, reason: error.description)
            }
            if count == 0 { break } // shrank meanwhile: parse what is there, strictly
            filled += count
        }
        bytes.removeLast(size - filled)
        return try parse(bytes)
    }

    /// Parses a whole capture held in memory; throws on the first damaged or inconsistent record.
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
