import HAL
import Synchronization

/// A camera that plays the frames it was given at a fixed interval on the injected clock, keeping
/// only the newest frame for a slow consumer, as a real camera source must.
public final class FakeCamera: CameraSource {
    /// What the camera says it is; by default a 640x480 greyscale `sim:camera`.
    public let info: CameraInfo
    private let frames: [GrayFrame]
    private let interval: Duration
    private let clock: any Clock<Duration>
    /// Fail with this error after the last frame (e.g. `.disappeared`); nil ends the stream cleanly.
    private let endError: CameraError?
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Builds a camera that plays `frames` once, one per `interval` (about 30 a second by default).
    public init(info: CameraInfo = CameraInfo(uri: "sim:camera", card: "Simulated camera", driver: "fake",
                                              formats: [PixelFormatInfo(fourcc: "GREY", sizes: [.discrete(width: 640, height: 480)])]),
                frames: [GrayFrame], interval: Duration = .milliseconds(33), clock: any Clock<Duration>,
                endError: CameraError? = nil) {
        self.info = info
        self.frames = frames
        self.interval = interval
        self.clock = clock
        self.endError = endError
    }

    /// Starts playing the frames from the first; a second start replaces the first stream's player.
    public func start() async throws(CameraError) -> AsyncThrowingStream<GrayFrame, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: GrayFrame.self, bufferingPolicy: .bufferingNewest(1))
        let frames = frames
        let interval = interval
        let clock = clock
        let endError = endError
        let player = Task {
            for frame in frames {
                guard (try? await clock.sleep(for: interval)) != nil else { return }
                continuation.yield(frame)
            }
            continuation.finish(throwing: endError)
        }
        continuation.onTermination = { _ in player.cancel() }
        task.withLock { $0?.cancel(); $0 = player }
        return stream
    }

    /// Stops the player; the stream in hand gets no more frames.
    public func stop() async {
        task.withLock { $0?.cancel(); $0 = nil }
    }
}
