import HAL

/// Decoded codes without a camera: each batch is what one frame showed. Lets import-flow tests
/// script any order, duplicates and strays, and a camera that vanishes part way.
public struct FakeCodeSource: CodeSource {
    /// What each frame shows, in order; an empty batch is a frame with no code in it.
    public let batches: [[DecodedSymbol]]
    /// The time between frames, slept on the clock before each one.
    public let interval: Duration
    /// The error the stream ends with after the last batch (a camera that vanished); nil ends it cleanly.
    public let endError: CameraError?
    private let clock: any Clock<Duration>

    /// One frame per text, each showing that one code.
    public init(texts: [String], interval: Duration = .milliseconds(100), clock: any Clock<Duration>, endError: CameraError? = nil) {
        self.init(batches: texts.map { [DecodedSymbol(text: $0)] }, interval: interval, clock: clock, endError: endError)
    }

    /// One frame per batch, each showing exactly those symbols.
    public init(batches: [[DecodedSymbol]], interval: Duration = .milliseconds(100), clock: any Clock<Duration>,
                endError: CameraError? = nil) {
        self.batches = batches
        self.interval = interval
        self.clock = clock
        self.endError = endError
    }

    /// The words a person reads in messages and reports.
    public var description: String { "simulated camera" }

    /// Plays the batches from the first, numbering frames from 0 and timing them from the start.
    public func codes() -> AsyncThrowingStream<DecodedFrame, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: DecodedFrame.self)
        let batches = batches
        let interval = interval
        let clock = clock
        let endError = endError
        let task = Task {
            var elapsed = Duration.zero
            for (index, symbols) in batches.enumerated() {
                guard (try? await clock.sleep(for: interval)) != nil else { return }
                elapsed += interval
                continuation.yield(DecodedFrame(sequence: UInt64(index), timestamp: elapsed, symbols: symbols))
            }
            continuation.finish(throwing: endError)
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}
