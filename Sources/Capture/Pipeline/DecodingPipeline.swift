import Dispatch
import HAL
import Synchronization

/// Frames from a camera, decoded into codes: what the import flow sees as its `CodeSource`.
///
/// - Decoding runs on the pipeline's own serial dispatch queue (one thread at a time), never on the
///   cooperative pool, so a slow decode does not hold up other tasks.
/// - Latest frame wins: the pipeline takes the next frame from the camera only when the decoder
///   is free. While a frame is being decoded, newer frames wait in the camera's stream, which keeps
///   only the newest one (the `CameraSource` contract), so stale frames are never queued. A
///   `file:…?pace=max` source produces frames on demand, so there every frame is decoded, in order.
/// - Every decoded frame is yielded, with or without symbols: an empty `symbols` array tells the
///   consumer the camera is alive and sees no code.
/// - The stream ends when the camera's stream ends, with the camera's error if it failed.
///
/// `stats` reports how many frames were decoded, how many the camera dropped in between (gaps in
/// `sequence`), and the latency from a frame reaching the pipeline to its decode being done,
/// measured on the injected clock.
public final class DecodingPipeline: CodeSource {
    public let camera: any CameraSource
    public let decoder: any CodeDecoder
    private let clock: any Clock<Duration>
    private let queue: DispatchQueue
    private let statistics = Mutex(Stats())

    public struct Stats: Sendable, Hashable {
        public var framesDecoded: UInt64 = 0
        public var framesWithSymbols: UInt64 = 0
        /// Frames the camera produced that were never decoded (newer ones replaced them).
        public var framesSkipped: UInt64 = 0
        public var lastLatency: Duration?
        public var maximumLatency: Duration = .zero
        public var totalLatency: Duration = .zero
        /// Latencies counted in `latencyStep` buckets (the last one holds everything longer), so
        /// percentiles cost a fixed 4 KiB however long the camera runs.
        public var latencyBuckets = [UInt32](repeating: 0, count: Stats.latencyBucketCount)

        public static let latencyStep: Duration = .microseconds(500)
        public static let latencyBucketCount = 1000

        public init() {}

        /// Mean frame-to-decode latency, nil before the first decode.
        public var meanLatency: Duration? {
            framesDecoded == 0 ? nil : totalLatency / Int(framesDecoded)
        }

        /// The latency that `fraction` of the decoded frames stayed within (nearest rank, to the
        /// upper edge of its 0.5 ms bucket; the maximum itself past the last bucket); nil before
        /// the first decode.
        public func latencyPercentile(_ fraction: Double) -> Duration? {
            let total = latencyBuckets.reduce(0) { $0 + UInt64($1) }
            guard total > 0 else { return nil }
            let rank = max(1, UInt64((min(max(fraction, 0), 1) * Double(total)).rounded(.up)))
            var seen: UInt64 = 0
            for (index, count) in latencyBuckets.enumerated() {
                seen += UInt64(count)
                if seen >= rank {
                    return index == latencyBuckets.count - 1 ? maximumLatency : min(maximumLatency, Self.latencyStep * (index + 1))
                }
            }
            return maximumLatency
        }

        mutating func count(_ latency: Duration) {
            let step = Self.latencyStep.components.attoseconds / 1_000_000_000 + Self.latencyStep.components.seconds * 1_000_000_000
            let nanoseconds = latency.components.seconds * 1_000_000_000 + latency.components.attoseconds / 1_000_000_000
            let index = Int(min(max(0, nanoseconds / max(1, step)), Int64(latencyBuckets.count - 1)))
            latencyBuckets[index] &+= 1
        }
    }

    public init(camera: any CameraSource, decoder: any CodeDecoder, clock: any Clock<Duration> = ContinuousClock()) {
        self.camera = camera
        self.decoder = decoder
        self.clock = clock
        queue = DispatchQueue(label: "capture.decode.\(decoder.name)", qos: .userInitiated)
    }

    public var description: String { "\(camera.info.uri) (\(decoder.name))" }

    /// What has been decoded so far (across every `codes()` stream of this pipeline).
    public var stats: Stats { statistics.withLock { $0 } }

    public func codes() -> AsyncThrowingStream<DecodedFrame, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: DecodedFrame.self)
        let camera = camera
        let clock = clock
        let task = Task { await self.run(camera: camera, clock: clock, into: continuation) }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    private func run<C: Clock<Duration>>(camera: any CameraSource, clock: C,
                                         into continuation: AsyncThrowingStream<DecodedFrame, any Error>.Continuation) async {
        let frames: AsyncThrowingStream<GrayFrame, any Error>
        do {
            frames = try await camera.start()
        } catch {
            continuation.finish(throwing: error)
            return
        }
        var previous: UInt64?
        do {
            for try await frame in frames {
                if Task.isCancelled { break }
                let arrived = clock.now
                let symbols = await decodeOnQueue(frame)
                let latency = arrived.duration(to: clock.now)
                record(frame: frame, previous: previous, symbols: symbols, latency: latency)
                previous = frame.sequence
                continuation.yield(DecodedFrame(sequence: frame.sequence, timestamp: frame.timestamp, symbols: symbols))
            }
            continuation.finish()
        } catch is CancellationError {
            continuation.finish()
        } catch {
            continuation.finish(throwing: error)
        }
        await camera.stop()
    }

    private func decodeOnQueue(_ frame: GrayFrame) async -> [DecodedSymbol] {
        let decoder = decoder
        return await withCheckedContinuation { (result: CheckedContinuation<[DecodedSymbol], Never>) in
            queue.async { result.resume(returning: decoder.decode(frame)) }
        }
    }

    private func record(frame: GrayFrame, previous: UInt64?, symbols: [DecodedSymbol], latency: Duration) {
        statistics.withLock { s in
            s.framesDecoded += 1
            if !symbols.isEmpty { s.framesWithSymbols += 1 }
            if let previous, frame.sequence > previous + 1 { s.framesSkipped += frame.sequence - previous - 1 }
            s.lastLatency = latency
            s.maximumLatency = max(s.maximumLatency, latency)
            s.totalLatency += latency
            s.count(latency)
        }
    }
}
