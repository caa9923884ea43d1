import HAL
import LinuxIO
import Synchronization

/// A cassette's camera played as that camera (`--camera replay:FILE`): it reports the identity
/// that was recorded (card, driver, formats, sizes) and hands over the recorded frames from the
/// cassette's Y4M companion file, each with its recorded time and sequence.
///
/// - `.recorded` timing: frame k is due at start + its recorded time on the injected clock, into
///   a stream that keeps only the newest frame, as a live camera does (the bench's `ScaledClock`
///   in the CLI; a `ManualClock` in tests, advanced by the test).
/// - `.ignored`: pull-based, the next frame is read only when the consumer asks, nothing is
///   dropped and no time passes (for tests that care about what was seen, not when).
///
/// The companion file is checked before a frame of it is trusted: its size is the one the
/// cassette says, its header the recorded picture size, and it holds exactly the recorded
/// frames (a frame missing or one too many ends the stream with `CameraError.badFile`).
package final class CassetteCameraSource: CameraSource {
    package enum Timing: Sendable, Hashable { case recorded, ignored }

    /// The identity as recorded (URI, card, driver, formats, sizes), so a replay lists like the real camera.
    public let info: CameraInfo
    /// The recorded camera: identity, frame times, and where its companion Y4M file is named.
    public let camera: CameraCassette
    package let framesPath: String?
    package let timing: Timing
    private let clock: any Clock<Duration>
    private let running = Mutex<(reader: SharedReader?, task: Task<Void, Never>?)>((nil, nil))

    /// `directory`: where the cassette is (its companion file is beside it).
    package init(_ camera: CameraCassette, directory: String, clock: any Clock<Duration> = ContinuousClock(),
                timing: Timing = .recorded) throws(CameraError) {
        self.camera = camera
        info = camera.info
        self.clock = clock
        self.timing = timing
        framesPath = camera.frames.map { (directory.hasSuffix("/") ? directory : directory + "/") + $0.name }
        if let framesPath { _ = try Self.open(framesPath, camera) }
    }

    /// Opens and checks the companion file.
    private static func open(_ path: String, _ camera: CameraCassette) throws(CameraError) -> Y4MReader {
        guard let frames = camera.frames else { throw .badFile("the cassette has no frames for \(camera.info.uri)") }
        let size: Int?
        // Checked without blocking: frames that are a FIFO would otherwise hang the open for ever.
        do {
            let fd = try FileDescriptor.openChecked(path, expecting: .regularFile(orPipe: false))
            defer { fd.close() }
            size = fd.bytesLeftInFile()
        } catch {
            if case .failed(_, let errno) = error, errno == .noEntry {
                throw .notFound("\(path) (the cassette's frames: was it copied without them?)")
            }
            throw error.isWrongKind ? .badFile("the cassette's frames: \(error)") : .io("cannot open the cassette's frames \(path): \(error)")
        }
        guard size == frames.bytes else {
            throw .badFile("\(path) is \(size.map(String.init) ?? "not a regular file of") bytes, the cassette says \(frames.bytes): "
                           + "the frames do not belong to this cassette or were cut short")
        }
        let reader = try Y4MReader(path: path)
        guard reader.header.width == frames.width, reader.header.height == frames.height else {
            reader.close()
            throw .badFile("\(path) holds \(reader.header.width)x\(reader.header.height) frames, the cassette says \(frames.width)x\(frames.height)")
        }
        return reader
    }

    /// Plays the companion file from its first frame, checking it again on each start; a camera
    /// recorded with no frames gives a stream that ends at once.
    public func start() async throws(CameraError) -> AsyncThrowingStream<GrayFrame, any Error> {
        guard let framesPath else {
            // A camera recorded with no frames: it opens, and its stream ends at once.
            return AsyncThrowingStream { $0.finish() }
        }
        let reader = SharedReader(try Self.open(framesPath, camera))
        let times = camera.times
        let path = framesPath
        if timing == .ignored {
            let index = Mutex(0)
            replace(reader, nil)
            return AsyncThrowingStream(unfolding: {
                let k = index.withLock { i in
                    defer { i += 1 }
                    return i
                }
                return try Self.frame(k, of: times, from: reader, path: path)
            })
        }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: GrayFrame.self, bufferingPolicy: .bufferingNewest(1))
        let timebase = Timebase(clock)
        let task = Task {
            await continuation.finish {
                var k = 0
                while !Task.isCancelled {
                    if k < times.count { try await timebase.sleep(until: times[k].at) }
                    guard let frame = try Self.frame(k, of: times, from: reader, path: path) else { break }
                    continuation.yield(frame)
                    k += 1
                }
            }
            reader.close()
        }
        continuation.onTermination = { _ in
            task.cancel()
            reader.close()
        }
        replace(reader, task)
        return stream
    }

    /// Frame `k` with its recorded time and sequence; nil after the last; `badFile` when the
    /// file and the cassette disagree on how many frames there are.
    private static func frame(_ k: Int, of times: [CameraCassette.FrameTime], from reader: SharedReader, path: String) throws(CameraError) -> GrayFrame? {
        let next = try reader.next()
        guard k < times.count else {
            if next != nil { throw .badFile("\(path) has more frames than the cassette's \(times.count)") }
            return nil
        }
        guard var frame = next else {
            throw .badFile("\(path) ends after \(k) frames, the cassette has \(times.count)")
        }
        frame.timestamp = times[k].at
        frame.sequence = times[k].sequence
        return frame
    }

    package func stop() async {
        replace(nil, nil)
    }

    private func replace(_ reader: SharedReader?, _ task: Task<Void, Never>?) {
        let old = running.withLock { state in
            defer { state = (reader, task) }
            return state
        }
        old.task?.cancel()
        old.reader?.close()
    }
}
