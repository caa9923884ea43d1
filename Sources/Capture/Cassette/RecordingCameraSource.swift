import HAL
import LinuxIO
import Synchronization

/// `import --record FILE` for a camera: the frames the command took from the camera, written as
/// they come to the cassette's Y4M companion file (through a `StreamingPrivateFile`: bounded
/// memory, no file at all unless the recording is committed), with each frame's time and
/// sequence kept for the cassette's text.
///
/// Only what the consumer (the decoding pipeline) actually pulled is recorded, not every frame
/// the camera offered: that is what the command saw, it bounds the rate to the decoder's, and a
/// replay fed those frames decodes the same codes. Limits (`CameraCassette.Limits`): past them,
/// frames are counted in `dropped` and not kept; the command goes on unchanged.
package final class CameraFrameRecorder: Sendable {
    /// The companion file's name (beside the cassette).
    package let framesName: String
    private let file: StreamingPrivateFile
    private let state: Mutex<State>

    private struct State {
        var info: CameraInfo?
        var busInfo: String?
        var size: (width: Int, height: Int)?
        var times: [CameraCassette.FrameTime] = []
        var dropped = 0
        /// Where the current stream's times start: after the previous stream's last frame.
        var base: Duration = .zero
        var sequenceBase: UInt64 = 0
        var failure: String?
    }

    /// Creates the companion file at `framesPath` (nothing named until `finish`).
    package init(framesPath: String) throws(PrivateFileError) {
        file = try StreamingPrivateFile(creating: framesPath, limit: CameraCassette.Limits.frameFileBytes)
        framesName = framesPath.split(separator: "/").last.map(String.init) ?? framesPath
        state = Mutex(State())
    }

    /// `camera` with every frame its consumer takes recorded here.
    package func recording(_ camera: any CameraSource) -> any CameraSource {
        let bus: String? = if case .v4l2(let path)? = try? DeviceURI(parsing: camera.info.uri) { V4L2Probe.busInfo(path: path) } else { nil }
        state.withLock { s in
            if s.info == nil {
                s.info = camera.info
                s.busInfo = bus
            }
        }
        return RecordingCameraSource(inner: camera, recorder: self)
    }

    /// Frames not kept (past a limit, another size than the first, a write that failed).
    package var dropped: Int { state.withLock { $0.dropped } }
    /// Why the recording stopped keeping frames, if it did because of the file (a full disk).
    public var failure: String? { state.withLock { $0.failure } }

    func streamStarted() {
        state.withLock { s in
            if let last = s.times.last {
                s.base = last.at + .milliseconds(1)
                s.sequenceBase = last.sequence + 1
            }
        }
    }

    func record(_ frame: GrayFrame) {
        state.withLock { s in
            guard s.failure == nil, s.times.count < CameraCassette.Limits.frames,
                  frame.width > 0, frame.height > 0, frame.stride >= frame.width,
                  frame.pixels.count >= frame.stride * (frame.height - 1) + frame.width else {
                s.dropped += 1
                return
            }
            if let size = s.size, size != (frame.width, frame.height) {
                s.dropped += 1
                return
            }
            var bytes: [UInt8] = []
            if s.size == nil {
                // Grey only (Cmono): the pipeline only ever sees the Y plane.
                bytes = Array((Y4MHeader(width: frame.width, height: frame.height, colorSpace: .mono).line + "\n").utf8)
            }
            bytes.reserveCapacity(bytes.count + 6 + frame.width * frame.height)
            bytes.append(contentsOf: Array("FRAME\n".utf8))
            if frame.stride == frame.width {
                bytes.append(contentsOf: frame.pixels[0..<(frame.width * frame.height)])
            } else {
                for row in 0..<frame.height {
                    bytes.append(contentsOf: frame.pixels[(row * frame.stride)..<(row * frame.stride + frame.width)])
                }
            }
            do throws(StreamingPrivateFileError) {
                try file.append(bytes)
            } catch {
                if case .file(let why) = error { s.failure = why.description }
                s.dropped += 1
                return
            }
            s.size = (frame.width, frame.height)
            // Times and sequences only ever go forward, whatever the device's clock did.
            var at = s.base + max(.zero, frame.timestamp)
            var sequence = s.sequenceBase + frame.sequence
            if let last = s.times.last {
                at = max(at, last.at)
                sequence = max(sequence, last.sequence + 1)
            }
            s.times.append(CameraCassette.FrameTime(at: min(at, .seconds(86_399)), sequence: sequence))
        }
    }

    /// Publishes the companion file (when any frame was recorded) and returns the camera's
    /// cassette section. Nothing is published when it throws.
    package func finish() throws(PrivateFileError) -> CameraCassette? {
        let (info, bus, size, times) = state.withLock { ($0.info, $0.busInfo, $0.size, $0.times) }
        guard let info else {
            file.abandon()
            return nil
        }
        guard let size, !times.isEmpty else {
            file.abandon()
            return CameraCassette(info: info, busInfo: bus)
        }
        let bytes = file.count
        try file.commit()
        return CameraCassette(info: info, busInfo: bus,
                              frames: CameraCassette.FrameFile(name: framesName, bytes: bytes, width: size.width, height: size.height),
                              times: times)
    }

    /// Nothing is kept (the cassette will not be written).
    public func abandon() { file.abandon() }
}

/// A camera whose frames are recorded as its consumer takes them. Pull-based: the next frame is
/// asked of the camera only when the consumer asks for one, so the camera's own buffering (the
/// newest frame only) is what the consumer sees, recorded or not.
final class RecordingCameraSource: CameraSource {
    let inner: any CameraSource
    let recorder: CameraFrameRecorder
    var info: CameraInfo { inner.info }

    init(inner: any CameraSource, recorder: CameraFrameRecorder) {
        self.inner = inner
        self.recorder = recorder
    }

    func start() async throws(CameraError) -> AsyncThrowingStream<GrayFrame, any Error> {
        let stream = try await inner.start()
        recorder.streamStarted()
        let frames = FrameIterator(stream)
        let recorder = recorder
        return AsyncThrowingStream(unfolding: {
            guard let frame = try await frames.next() else { return nil }
            recorder.record(frame)
            return frame
        })
    }

    func stop() async { await inner.stop() }
}

/// The camera stream's iterator, held for the one consumer of the recording stream. An
/// `AsyncThrowingStream(unfolding:)` calls its closure for one element at a time, never two at
/// once, so the iterator is never used concurrently (hence `@unchecked`).
final class FrameIterator: @unchecked Sendable {
    private var iterator: AsyncThrowingStream<GrayFrame, any Error>.AsyncIterator

    init(_ stream: AsyncThrowingStream<GrayFrame, any Error>) {
        iterator = stream.makeAsyncIterator()
    }

    func next() async throws -> GrayFrame? {
        try await iterator.next()
    }
}

extension V4L2Probe {
    /// QUERYCAP's bus info (`usb-0000:00:14.0-1`, `platform:vivid-000`), or nil when the node
    /// will not say. For a cassette's camera identity.
    package static func busInfo(path: String) -> String? {
        try? FileDescriptor.withOpened(path, .readWrite, nonBlocking: true) { fd throws(Errno) -> String? in
            let text = cText(try fd.videoCapabilities().busInfo)
            return text.isEmpty ? nil : text
        }
    }
}
