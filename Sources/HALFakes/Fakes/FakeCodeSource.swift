import HAL

/// Decoded codes without a camera: each batch is what one frame showed. Lets import-flow tests
/// script any order, duplicates and strays, and a camera that vanishes part way.
public struct FakeCodeSource: CodeSource {
    public let batches: [[DecodedSymbol]]
    public let interval: Duration
    public let endError: CameraError?
    private let clock: any Clock<Duration>

    public init(texts: [String], interval: Duration = .milliseconds(100), clock: any Clock<Duration>, endError: CameraError? = nil) {
        self.init(batches: texts.map { [DecodedSymbol(text: $0)] }, interval: interval, clock: clock, endError: endError)
    }

    public init(batches: [[DecodedSymbol]], interval: Duration = .milliseconds(100), clock: any Clock<Duration>,
                endError: CameraError? = nil) {
        self.batches = batches
        self.interval = interval
        self.clock = clock
        self.endError = endError
    }

    public var description: String { "simulated camera" }

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
