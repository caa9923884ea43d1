import Foundation
import LinuxIO
import Synchronization

/// Writes HCI traffic as a btsnoop file (`--btsnoop FILE`) for Wireshark and btmon.
///
/// The packet layer calls ``record(_:sentByHost:at:)`` with whole H4 packets: only it knows where
/// packets begin and end. Each record goes to the kernel in one write(2), so a crash leaves a
/// readable file. A write failure (disk full) stops the capture but never the Bluetooth link:
/// ``failure`` says why.
///
/// A capture carries addresses, names and readings, so it is written as a ``PrivateFile``
/// (issue 15): mode 0600, never through a symbolic link, never over an existing file (a
/// capture of an earlier session is not silently truncated). It is there, readable, from its
/// header on, and synced when closed.
public final class BTSnoopWriter: Sendable {
    /// The capture file's path, for messages.
    public let path: String
    private let state: Mutex<State>

    private struct State {
        var file: PrivateFile?
        var failure: BTSnoopError?
        /// Bytes of whole records (and the header) in the file: where a failed write is cut back to.
        var written = 0
    }

    /// Captures that stopped, by path, until the command that asked for one collects the
    /// failure (``takeFailure(path:)``): the writer lives deep in the host stack, and whoever ran
    /// the command must still learn that its `--btsnoop` file is not the whole session.
    private static let stopped = Mutex<[String: BTSnoopError]>([:])

    /// Why the capture at `path` stopped during this process, once; nil if it never did.
    public static func takeFailure(path: String) -> BTSnoopError? {
        stopped.withLock { $0.removeValue(forKey: path) }
    }

    /// Creates `path` (which must not exist) and writes the header, failing right away rather
    /// than at the first packet.
    public convenience init(path: String) throws(BTSnoopError) {
        let file: PrivateFile
        do { file = try PrivateFile(creating: path, existing: .refuse, publication: .atOnce) } catch {
            throw .cannotCreate(path: path, reason: Self.reason(error))
        }
        try self.init(file: file)
    }

    /// Writes into a file the caller created (the CLI's choice of what may be replaced).
    package init(file: PrivateFile) throws(BTSnoopError) {
        path = file.path
        var header = BTSnoopFormat.magic
        header.snoopAppend(BTSnoopFormat.version)
        header.snoopAppend(BTSnoopFormat.datalinkH4)
        do { try file.write(header) } catch {
            // Not even the header fitted (a full disk): nothing is left behind, not an empty file.
            file.unpublish()
            file.close()
            throw .cannotCreate(path: file.path, reason: Self.reason(error))
        }
        state = Mutex(State(file: file, written: header.count))
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
            guard let file = state.file else { return }
            do throws(PrivateFileError) {
                try file.write(bytes)
                state.written += bytes.count
            } catch {
                // A record the disk took only part of is cut off: the capture ends on a whole
                // record, readable to its end, and the failure is said instead of a silent cut.
                try? file.truncate(to: state.written)
                let failure = BTSnoopError.writeFailed(path: path, reason: Self.reason(error))
                state.failure = failure
                Self.stopped.withLock { $0[path] = failure }
                file.close()
                state.file = nil
            }
        }
    }

    /// Syncs and closes the file; later records are ignored. Idempotent.
    public func close() {
        state.withLock { state in
            state.file?.close()
            state.file = nil
        }
    }

    /// The words the old open(2)-based writer used where they still fit ("No such file or
    /// directory"), else what the private file says.
    private static func reason(_ error: PrivateFileError) -> String {
        switch error {
        case .missingDirectory: Errno.noEntry.description
        case .failed(_, let errno): errno.description
        default: error.description
        }
    }
}
