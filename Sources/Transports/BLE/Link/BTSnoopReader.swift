import Foundation
import LinuxIO

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
