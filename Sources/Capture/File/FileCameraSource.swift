import HAL
import Synchronization

/// A YUV4MPEG2 file played as a camera (`file:PATH`, `file:PATH?pace=max`).
///
/// - Paced (the default): frame k is handed over at start + k / rate on the injected clock, into a
///   stream that keeps only the newest frame, exactly like a live camera: a slow consumer misses
///   frames.
/// - `pace=max` (`paced: false`): pull-based. The next frame is read from the file only when the
///   consumer asks for it, so nothing is ever dropped or buffered, and no time passes on any clock.
///
/// Each `start()` plays the file from its beginning. A damaged or truncated frame ends the stream
/// with `CameraError.badFile` after the good frames before it.
package final class FileCameraSource: CameraSource {
    /// A `file:` URI, the file's name as the card and one GREY format of the file's size.
    public let info: CameraInfo
    /// The file played, reopened by each `start()`.
    public let path: String
    package let paced: Bool
    /// The header read at init; `start()` refuses the file if it has changed since.
    public let header: Y4MHeader
    private let clock: any Clock<Duration>
    private let running = Mutex<Playback?>(nil)
    /// A pipe's reader, kept from init (its header is already read) for the one `start()` a pipe
    /// allows; opening the path again would read on from where the first reader stopped.
    private let pipeReader: Mutex<SharedReader?>
    /// True once a pipe has been handed to a playback: it cannot be played again.
    private let pipePlayed = Mutex(false)

    private struct Playback: Sendable {
        var reader: SharedReader
        var task: Task<Void, Never>?

        func cancel() {
            task?.cancel()
            reader.close()
        }
    }

    /// Opens the file to check it and read its header (`notFound`, `permissionDenied`, `badFile`).
    package init(path: String, paced: Bool = true, clock: any Clock<Duration> = ContinuousClock()) throws(CameraError) {
        let reader = try Y4MReader(path: path)
        let isPipe = reader.isPipe
        header = reader.header
        if isPipe {
            pipeReader = Mutex(SharedReader(reader))
        } else {
            reader.close()
            pipeReader = Mutex(nil)
        }
        self.path = path
        self.paced = paced
        self.clock = clock
        let name = path.split(separator: "/").last.map(String.init) ?? path
        info = CameraInfo(uri: DeviceURI.file(path: path, paced: paced).description, card: name, driver: "file",
                          formats: [PixelFormatInfo(fourcc: "GREY", sizes: [.discrete(width: header.width, height: header.height)])])
    }

    /// Reopens the file and plays it from the first frame, paced or pull-based as configured.
    public func start() async throws(CameraError) -> AsyncThrowingStream<GrayFrame, any Error> {
        let reader: SharedReader
        if let kept = pipeReader.withLock({ kept -> SharedReader? in defer { kept = nil }; return kept }) {
            pipePlayed.withLock { $0 = true }
            reader = kept
        } else if pipePlayed.withLock({ $0 }) {
            throw .badFile("\(path) is a pipe and has been played once already: give a file to play it again")
        } else {
            reader = SharedReader(try Y4MReader(path: path))
        }
        guard reader.header == header else {
            reader.close()
            throw .badFile("\(path) changed while in use: its header is now '\(reader.header.line)'")
        }
        if !paced {
            let stream = AsyncThrowingStream<GrayFrame, any Error>(unfolding: { try reader.next() })
            replace(with: Playback(reader: reader, task: nil))
            return stream
        }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: GrayFrame.self, bufferingPolicy: .bufferingNewest(1))
        let clock = clock
        let task = Task { await Self.play(reader, on: clock, into: continuation) }
        continuation.onTermination = { _ in
            task.cancel()
            reader.close()
        }
        replace(with: Playback(reader: reader, task: task))
        return stream
    }

    package func stop() async {
        replace(with: nil)
    }

    private func replace(with playback: Playback?) {
        let old = running.withLock { state -> Playback? in
            let old = state
            state = playback
            return old
        }
        old?.cancel()
    }

    private static func play<C: Clock<Duration>>(_ reader: SharedReader, on clock: C,
                                                 into continuation: AsyncThrowingStream<GrayFrame, any Error>.Continuation) async {
        let origin = clock.now
        await continuation.finish {
            while !Task.isCancelled {
                let due = reader.header.timestamp(ofFrame: reader.framesRead)
                let frame: GrayFrame
                do {
                    guard let next = try reader.next() else { break }
                    frame = next
                } catch {
                    // A live camera would fail when the frame was due, not ahead of time.
                    try await clock.sleep(until: origin.advanced(by: due), tolerance: nil)
                    throw error
                }
                try await clock.sleep(until: origin.advanced(by: frame.timestamp), tolerance: nil)
                continuation.yield(frame)
            }
        }
        reader.close()
    }
}

/// A reader shared between the stream and `stop()`; the lock keeps one read at a time.
final class SharedReader: Sendable {
    let header: Y4MHeader
    private let state: Mutex<Y4MReader?>

    init(_ reader: sending Y4MReader) {
        header = reader.header
        state = Mutex(reader)
    }

    var framesRead: UInt64 { state.withLock { $0?.framesRead ?? 0 } }

    /// The next frame; nil at the end or once closed.
    func next() throws(CameraError) -> GrayFrame? {
        try state.withLock { (reader: inout Y4MReader?) throws(CameraError) -> GrayFrame? in
            guard let current = reader else { return nil }
            return try current.nextFrame()
        }
    }

    func close() {
        state.withLock { reader in
            reader?.close()
            reader = nil
        }
    }
}
