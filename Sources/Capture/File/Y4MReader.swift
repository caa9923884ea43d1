import HAL
import LinuxIO

/// Reads a YUV4MPEG2 file frame by frame, in chunks: only one frame (and a small read buffer) is
/// ever in memory. The grey picture is the Y plane; chroma planes are skipped.
///
/// Not thread-safe: one reader belongs to one task at a time.
public final class Y4MReader {
    /// The file being read, named in every error.
    public let path: String
    /// The stream header, parsed and size-checked before any frame is read.
    public let header: Y4MHeader
    /// Frames returned so far.
    public private(set) var framesRead: UInt64 = 0
    private let file: ChunkedFile
    private var finished = false
    /// Read from a pipe (`file:/dev/stdin`, `file:<(…)`): its bytes can be read once only, so the
    /// reader that read the header must be the one that plays it.
    public let isPipe: Bool

    /// Header lines (and `FRAME` lines) longer than this are treated as damage, not read forever.
    static let maximumLineLength = 4096

    /// Opens the file and reads its header.
    public init(path: String) throws(CameraError) {
        self.path = path
        let file = try ChunkedFile(path: path)
        self.file = file
        isPipe = file.isPipe
        let line = try file.readLine(limit: Self.maximumLineLength, source: path)
        switch line {
        case .line(let bytes):
            header = try Y4MHeader(parsing: bytes, source: path)
        case .end(let bytes):
            if bytes.isEmpty { throw .badFile("\(path) is empty: expected a YUV4MPEG2 header") }
            _ = try Y4MHeader(parsing: bytes, source: path) // a wrong magic says so first
            throw .badFile("\(path): the file ends inside its header (no newline after it)")
        case .tooLong:
            throw .badFile("\(path): the header line is longer than \(Self.maximumLineLength) bytes or not a YUV4MPEG2 header")
        }
    }

    /// The next frame, or nil at a clean end of file. A damaged or truncated frame throws
    /// `CameraError.badFile` naming the frame (counted from 1) and what was wrong; after that the
    /// reader only returns nil.
    public func nextFrame() throws(CameraError) -> GrayFrame? {
        guard !finished else { return nil }
        do {
            return try readFrame()
        } catch {
            finished = true
            file.close()
            throw error
        }
    }

    /// Stops reading and releases the file.
    public func close() {
        finished = true
        file.close()
    }

    private func readFrame() throws(CameraError) -> GrayFrame? {
        let number = framesRead + 1
        let line = try file.readLine(limit: Self.maximumLineLength, source: path)
        let marker = Array("FRAME".utf8)
        switch line {
        case .end(let bytes):
            if bytes.isEmpty {
                finished = true
                file.close()
                return nil
            }
            throw .badFile("\(path): frame \(number) is truncated: the file ends inside its FRAME line")
        case .tooLong:
            throw .badFile("\(path): frame \(number) does not start with a FRAME line (no newline within \(Self.maximumLineLength) bytes)")
        case .line(let bytes):
            guard bytes.count >= marker.count, Array(bytes[0..<marker.count]) == marker,
                  bytes.count == marker.count || bytes[marker.count] == 0x20
            else {
                let seen = String(decoding: bytes.prefix(16).map { (0x20...0x7E).contains($0) ? $0 : 0x3F }, as: UTF8.self)
                throw .badFile("\(path): frame \(number) does not start with 'FRAME' (found '\(seen)'); the file is damaged or its header has the wrong size or colour space")
            }
        }
        let lumaBytes = header.width * header.height
        // The header's size came from outside: a 45-byte file may claim a 256 MiB picture. What a
        // regular file still holds is known, so a frame it cannot hold is refused before anything
        // is allocated; from a pipe the plane grows only as its bytes really arrive.
        if let left = file.bytesLeft(), left < header.frameBytes {
            throw truncated(number, after: left)
        }
        let (pixels, got) = try file.readPlane(lumaBytes, source: path)
        var total = got
        if got == lumaBytes {
            total += try file.skip(header.colorSpace.extraPlaneBytes(width: header.width, height: header.height), source: path)
        }
        guard total == header.frameBytes else { throw truncated(number, after: total) }
        let sequence = framesRead
        framesRead += 1
        return GrayFrame(width: header.width, height: header.height, pixels: pixels,
                         timestamp: header.timestamp(ofFrame: sequence), sequence: sequence)
    }
}

extension Y4MReader {
    private func truncated(_ number: UInt64, after bytes: Int) -> CameraError {
        .badFile("\(path): frame \(number) is truncated: expected \(header.frameBytes) bytes of picture (\(header.width)x\(header.height) C\(header.colorSpace.rawValue)), the file ends after \(bytes)")
    }
}

/// A read-only file read through a fixed buffer: lines for headers, direct reads for planes.
final class ChunkedFile {
    enum Line {
        case line([UInt8])
        /// End of file before a newline, with the bytes that came first (none at a clean end).
        case end([UInt8])
        case tooLong
    }

    private var fd: FileDescriptor?
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    private var start = 0
    private var end = 0

    /// Opened so that it cannot hang (a FIFO would wait for a writer for ever) and taken only as a
    /// regular file or an anonymous pipe (`file:/dev/stdin` behind a shell's `|`).
    init(path: String) throws(CameraError) {
        do {
            fd = try FileDescriptor.openChecked(path, expecting: .regularFile(orPipe: true))
        } catch {
            throw CameraError(opening: error)
        }
    }

    deinit { fd?.close() }

    var isPipe: Bool { fd?.kind == .fifo }

    func close() {
        fd?.close()
        fd = nil
    }

    /// Refills the buffer when it is empty; false at end of file.
    private func fill(source: String) throws(CameraError) -> Bool {
        if start < end { return true }
        guard let fd else { return false }
        start = 0
        do {
            end = try buffer.withUnsafeMutableBytes { raw throws(Errno) in try fd.read(into: raw) }
        } catch {
            end = 0
            throw .io("reading \(source) failed: \(error)")
        }
        return end > 0
    }

    func readLine(limit: Int, source: String) throws(CameraError) -> Line {
        var line: [UInt8] = []
        while true {
            guard try fill(source: source) else { return .end(line) }
            if let newline = buffer[start..<end].firstIndex(of: 0x0A) {
                line.append(contentsOf: buffer[start..<newline])
                start = newline + 1
                return line.count > limit ? .tooLong : .line(line)
            }
            line.append(contentsOf: buffer[start..<end])
            start = end
            if line.count > limit { return .tooLong }
        }
    }

    /// Fills `destination` as far as the file allows; returns the bytes read.
    func read(into destination: UnsafeMutableRawBufferPointer, source: String) throws(CameraError) -> Int {
        var done = 0
        let buffered = min(end - start, destination.count)
        if buffered > 0 {
            buffer.withUnsafeBytes { raw in
                UnsafeMutableRawBufferPointer(rebasing: destination[0..<buffered])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[start..<(start + buffered)]))
            }
            start += buffered
            done = buffered
        }
        // Large planes go straight from the file into the destination.
        while done < destination.count {
            guard let fd else { break }
            let n: Int
            do {
                n = try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: destination[done...]))
            } catch {
                throw .io("reading \(source) failed: \(error)")
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Bytes left to read, buffered ones included, when the file is a regular file.
    func bytesLeft() -> Int? {
        guard let fd, let unread = fd.bytesLeftInFile() else { return nil }
        return unread + (end - start)
    }

    /// Reads up to `count` bytes into a new array. From a regular file that holds them (checked
    /// before), the array is made at its full size at once and the file read straight into it;
    /// from a pipe it grows by at most a mebibyte beyond what has really been read (so a pipe that
    /// stops early costs what it sent, not what was claimed). Nothing is zero-filled or copied
    /// element by element: the unoptimised build reads a 720p frame at the speed of memcpy too.
    func readPlane(_ count: Int, source: String) throws(CameraError) -> (bytes: [UInt8], read: Int) {
        let step = 1 << 20
        var done = 0
        var bytes: [UInt8] = []
        var failure: CameraError?
        while done < count, failure == nil {
            let known = bytesLeft().map { min($0, count) } ?? 0
            let target = max(min(count, done + step), known)
            let previous = bytes
            let start = done
            bytes = [UInt8](unsafeUninitializedCapacity: target) { buffer, initialized in
                let raw = UnsafeMutableRawBufferPointer(buffer)
                previous.withUnsafeBytes { raw.copyMemory(from: $0) }
                do throws(CameraError) {
                    done += try read(into: UnsafeMutableRawBufferPointer(rebasing: raw[start..<target]), source: source)
                } catch { failure = error }
                initialized = done
            }
            // Fewer bytes than asked for: the file (or pipe) has ended.
            if done < target { break }
        }
        if let failure { throw failure }
        return (bytes, done)
    }

    /// Reads past `count` bytes; returns how many there were.
    func skip(_ count: Int, source: String) throws(CameraError) -> Int {
        var skipped = 0
        while skipped < count {
            guard try fill(source: source) else { break }
            let n = min(end - start, count - skipped)
            start += n
            skipped += n
        }
        return skipped
    }
}

extension CameraError {
    /// A video file that could not be opened as one: missing, not permitted, or not a file.
    init(opening error: CheckedOpenError) {
        switch error {
        case .failed(let path, let errno) where errno == .noEntry: self = .notFound(path)
        case .failed(let path, let errno) where errno.meansPermission: self = .permissionDenied(path)
        case .failed: self = .io(error.description)
        case .wrongKind: self = .badFile(error.description)
        }
    }
}
