import Foundation
import Glibc
import LinuxIO
import Synchronization

/// Writes HCI traffic as a btsnoop file (`--btsnoop FILE`) for Wireshark and btmon.
///
/// The packet layer calls ``record(_:sentByHost:at:)`` with whole H4 packets: only it knows where
/// packets begin and end. Each record goes to the kernel in one write(2), so a crash leaves a
/// readable file. A write failure (disk full) stops the capture but never the Bluetooth link:
/// ``failure`` says why.
public final class BTSnoopWriter: Sendable {
    public let path: String
    private let state: Mutex<State>

    private struct State {
        var fd: Int32?
        var failure: BTSnoopError?
    }

    /// Creates (or truncates) `path` and writes the header, failing right away rather than at the first packet.
    public init(path: String) throws(BTSnoopError) {
        self.path = path
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .cannotCreate(path: path, reason: Errno.current.description) }
        var header = BTSnoopFormat.magic
        header.snoopAppend(BTSnoopFormat.version)
        header.snoopAppend(BTSnoopFormat.datalinkH4)
        if let reason = Self.write(header, to: fd) {
            _ = Glibc.close(fd)
            throw .cannotCreate(path: path, reason: reason)
        }
        state = Mutex(State(fd: fd))
    }

    deinit { close() }

    /// Why capturing stopped, if it did.
    public var failure: BTSnoopError? { state.withLock { $0.failure } }

    /// Appends one packet, H4 type byte included (datalink 1002 expects it).
    public func record(_ h4Packet: [UInt8], sentByHost: Bool, at date: Date = Date()) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(BTSnoopFormat.recordHeaderSize + h4Packet.count)
        bytes.snoopAppend(UInt32(h4Packet.count))   // original length
        bytes.snoopAppend(UInt32(h4Packet.count))   // included length: we never truncate
        bytes.snoopAppend(BTSnoopFormat.flags(for: h4Packet, sentByHost: sentByHost))
        bytes.snoopAppend(UInt32(0))                // cumulative drops
        bytes.snoopAppend(BTSnoopFormat.timestamp(date))
        bytes.append(contentsOf: h4Packet)
        state.withLock { state in
            guard let fd = state.fd else { return }
            if let reason = Self.write(bytes, to: fd) {
                state.failure = .writeFailed(path: path, reason: reason)
                _ = Glibc.close(fd)
                state.fd = nil
            }
        }
    }

    /// Closes the file; later records are ignored. Idempotent.
    public func close() {
        state.withLock { state in
            if let fd = state.fd { _ = Glibc.close(fd) }
            state.fd = nil
        }
    }

    /// Returns nil on success, else the reason.
    private static func write(_ bytes: [UInt8], to fd: Int32) -> String? {
        do {
            try FileDescriptor(rawValue: fd).writeAll(bytes)
            return nil
        } catch {
            return error.description
        }
    }
}
