import Synchronization

/// A ``PrivateFile`` written as a stream, for files too big to build in memory first (a
/// camera cassette's frames): bytes are appended as they come, through a buffer of a fixed size,
/// and the file gets its name only at ``commit()``.
///
/// What it adds to ``PrivateFile`` is the bound: at most `bufferBytes` are ever held (a chunk
/// larger than that goes to the file at once), and `limit` caps the whole file, so a recording
/// that runs for hours neither eats memory nor fills a disk unasked. Until ``commit()`` nothing
/// named exists (``PrivateFile/Publication/whenCommitted``: an unnamed `O_TMPFILE`, or a 0600
/// temporary that ``abandon()`` removes), so an error, a signal or SIGKILL never leaves half a
/// file behind. Safe to share: appends, commit and abandon are serialised.
package final class StreamingPrivateFile: Sendable {
    package let path: String
    /// The most bytes the file may have; ``append(_:)`` past it throws ``StreamingPrivateFileError/full(limit:)``.
    package let limit: Int
    private let file: PrivateFile
    private let state: Mutex<State>

    private struct State {
        var buffer: [UInt8] = []
        var written = 0
        var failed: PrivateFileError?
    }

    package init(creating path: String, existing: PrivateFile.Existing = .refuse, bufferBytes: Int = 1 << 20,
                limit: Int = Int.max) throws(PrivateFileError) {
        file = try PrivateFile(creating: path, existing: existing, publication: .whenCommitted)
        self.path = path
        self.limit = limit
        self.bufferBytes = max(4096, bufferBytes)
        var initial = State()
        initial.buffer.reserveCapacity(self.bufferBytes)
        state = Mutex(initial)
    }

    private let bufferBytes: Int

    /// Bytes appended so far (buffered or on disk).
    package var count: Int { state.withLock { $0.written } }

    /// Appends `bytes`. A write error (a full disk) is thrown here and again at ``commit()``:
    /// a file that lost bytes is never published. Past `limit`, throws `.full` and keeps nothing (the file stays good).
    package func append(_ bytes: [UInt8]) throws(StreamingPrivateFileError) {
        try state.withLock { s throws(StreamingPrivateFileError) in
            if let failed = s.failed { throw .file(failed) }
            guard bytes.count <= limit - s.written else { throw .full(limit: limit) }
            s.written += bytes.count
            if s.buffer.count + bytes.count > bufferBytes {
                do throws(PrivateFileError) {
                    try flush(&s)
                    if bytes.count > bufferBytes {
                        try file.write(bytes)
                        return
                    }
                } catch {
                    s.failed = error
                    file.abandon()
                    throw .file(error)
                }
            }
            s.buffer.append(contentsOf: bytes)
        }
    }

    /// Writes what is buffered, syncs, and gives the file its name. After a write error or
    /// ``abandon()`` it publishes nothing and throws.
    package func commit() throws(PrivateFileError) {
        try state.withLock { s throws(PrivateFileError) in
            if let failed = s.failed { throw failed }
            do throws(PrivateFileError) {
                try flush(&s)
                try file.commit()
            } catch {
                s.failed = error
                file.abandon()
                throw error
            }
        }
    }

    /// Nothing of this file is kept (an interrupt, a failed command). Idempotent; callable from
    /// a signal's cleanup on another thread.
    package func abandon() {
        file.abandon()
    }

    /// The file is closed; if it was not committed, it is abandoned.
    package func close() {
        file.close()
    }

    private func flush(_ s: inout State) throws(PrivateFileError) {
        guard !s.buffer.isEmpty else { return }
        try file.write(s.buffer)
        s.buffer.removeAll(keepingCapacity: true)
    }
}

package enum StreamingPrivateFileError: Error, Hashable, Sendable, CustomStringConvertible {
    case file(PrivateFileError)
    /// The file reached its limit; it is still good up to there.
    case full(limit: Int)

    package var description: String {
        switch self {
        case .file(let error): error.description
        case .full(let limit): "the file reached its limit of \(limit) bytes"
        }
    }
}
