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
/// - A `TwoLaneDecoder`'s second opinion (zbar's turn in `zxing+zbar`) runs on a second queue,
///   one run at a time, beside the next frames' first answers; what it reads follows as another
///   `DecodedFrame` of the same frame (so frames can arrive out of order by sequence).
/// - The stream ends when the camera's stream ends (after a second opinion under way), with the
///   camera's error if it failed.
///
/// `latestGlimpse` is the newest decoded frame with where codes were seen and read, for a live
/// preview to draw when it has time.
///
/// `stats` reports how many frames were decoded, how many the camera dropped in between (gaps in
/// `sequence`), and the latency from a frame reaching the pipeline to its decode being done,
/// measured on the injected clock.
package final class DecodingPipeline: CodeSource {
    /// Where the frames come from; started afresh by each `codes()` stream.
    public let camera: any CameraSource
    /// What every frame is decoded with; a `TwoLaneDecoder` also gets the second lane.
    public let decoder: any CodeDecoder
    private let clock: any Clock<Duration>
    private let queue: BlockingWork.Queue
    /// The second lane of a `TwoLaneDecoder` (zbar's turn in the default arrangement).
    private let secondQueue: BlockingWork.Queue
    private let secondLane = Mutex<(busy: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))
    private let statistics = Mutex(Stats())
    private let glimpse = Mutex<PipelineGlimpse?>(nil)

    package struct Stats: Sendable, Hashable {
        package var framesDecoded: UInt64 = 0
        package var framesWithSymbols: UInt64 = 0
        /// Frames the camera produced that were never decoded (newer ones replaced them).
        package var framesSkipped: UInt64 = 0
        package var lastLatency: Duration?
        package var maximumLatency: Duration = .zero
        package var totalLatency: Duration = .zero
        /// Second-lane runs (zbar's turns), and the longest a run's answer took from its frame's
        /// arrival.
        package var secondRuns: UInt64 = 0
        package var secondMaximumLatency: Duration = .zero
        /// Latencies counted in `latencyStep` buckets (the last one holds everything longer), so
        /// percentiles cost a fixed 4 KiB however long the camera runs.
        package var latencyBuckets = [UInt32](repeating: 0, count: Stats.latencyBucketCount)

        package static let latencyStep: Duration = .microseconds(500)
        package static let latencyBucketCount = 1000

        package init() {}

        /// Mean frame-to-decode latency, nil before the first decode.
        package var meanLatency: Duration? {
            framesDecoded == 0 ? nil : totalLatency / Int(framesDecoded)
        }

        /// The latency that `fraction` of the decoded frames stayed within (nearest rank, to the
        /// upper edge of its 0.5 ms bucket; the maximum itself past the last bucket); nil before
        /// the first decode.
        package func latencyPercentile(_ fraction: Double) -> Duration? {
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
            let step = Self.latencyStep.wholeNanoseconds
            let nanoseconds = latency.wholeNanoseconds
            let index = Int(min(max(0, nanoseconds / max(1, step)), Int64(latencyBuckets.count - 1)))
            latencyBuckets[index] &+= 1
        }
    }

    package init(camera: any CameraSource, decoder: any CodeDecoder, clock: any Clock<Duration> = ContinuousClock()) {
        self.camera = camera
        self.decoder = decoder
        self.clock = clock
        queue = BlockingWork.Queue(label: "capture.decode.\(decoder.name)", priority: .interactive)
        secondQueue = BlockingWork.Queue(label: "capture.decode.\(decoder.name).second", priority: .background)
    }

    /// The camera's URI and the decoder's name, naming the pipeline in `hwprobe import`'s decode statistics.
    public var description: String { "\(camera.info.uri) (\(decoder.name))" }

    /// What has been decoded so far (across every `codes()` stream of this pipeline).
    package var stats: Stats { statistics.withLock { $0 } }

    /// The newest decoded frame and what came of it; nil before the first decode.
    package var latestGlimpse: PipelineGlimpse? { glimpse.withLock { $0 } }

    /// Starts the camera and decodes until its stream ends; cancelling the returned stream stops the work.
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
        await continuation.finish {
            var previous: UInt64?
            for try await frame in frames {
                if Task.isCancelled { break }
                let arrived = clock.now
                let (symbols, second, sighting) = await decodeOnQueue(frame)
                let latency = arrived.duration(to: clock.now)
                record(frame: frame, previous: previous, symbols: symbols, latency: latency)
                glimpse.withLock { latest in
                    latest = PipelineGlimpse(frame: frame, symbolCount: symbols.count, sighting: sighting,
                                             number: (latest?.number ?? 0) + 1)
                }
                previous = frame.sequence
                continuation.yield(DecodedFrame(sequence: frame.sequence, timestamp: frame.timestamp, symbols: symbols))
                if let second { await runSecond(second, of: frame, arrived: arrived, clock: clock, into: continuation) }
            }
            // A second opinion still under way belongs to this stream: the end waits for it.
            await secondLaneIdle()
        }
        await camera.stop()
    }

    private typealias FirstAnswer = ([DecodedSymbol], (@Sendable () -> [DecodedSymbol])?, Sighting?)

    private func decodeOnQueue(_ frame: GrayFrame) async -> FirstAnswer {
        let decoder = decoder
        return await queue.run { () -> FirstAnswer in
            if let laned = decoder as? any TwoLaneDecoder {
                let answer = laned.decodeFirst(frame)
                return (answer.symbols, answer.second, answer.sighting)
            }
            return (decoder.decode(frame), nil, nil)
        }
    }

    /// Returns once no second-lane run is under way (taking the lane, then giving it back).
    private func secondLaneIdle() async {
        await takeSecondLane()
        giveBackSecondLane()
    }

    /// The lane passes straight to a waiting run, or is free.
    private func giveBackSecondLane() {
        let next = secondLane.withLock { lane -> CheckedContinuation<Void, Never>? in
            defer { lane.waiter = nil }
            if lane.waiter == nil { lane.busy = false }
            return lane.waiter
        }
        next?.resume()
    }

    private func takeSecondLane() async {
        await withCheckedContinuation { (free: CheckedContinuation<Void, Never>) in
            let now = secondLane.withLock { lane -> Bool in
                if lane.busy {
                    lane.waiter = free
                    return false
                }
                lane.busy = true
                return true
            }
            if now { free.resume() }
        }
    }

    /// The second lane: `work` runs beside the next frames' first answers, one run at a time (a
    /// second run waits for the one before, so none is lost and at most one is outstanding); what
    /// it reads goes out as another `DecodedFrame` of the same frame.
    private func runSecond<C: Clock<Duration>>(_ work: @escaping @Sendable () -> [DecodedSymbol], of frame: GrayFrame,
                                               arrived: C.Instant, clock: C,
                                               into continuation: AsyncThrowingStream<DecodedFrame, any Error>.Continuation) async {
        await takeSecondLane()
        let (sequence, timestamp) = (frame.sequence, frame.timestamp)
        secondQueue.submit { [self] in
            let more = work()
            let latency = arrived.duration(to: clock.now)
            statistics.withLock { s in
                s.secondRuns += 1
                s.secondMaximumLatency = max(s.secondMaximumLatency, latency)
            }
            if !more.isEmpty {
                // Still the newest frame: the preview counts what the second lane read in it too.
                glimpse.withLock { latest in
                    if latest?.frame.sequence == sequence { latest?.symbolCount += more.count }
                }
                continuation.yield(DecodedFrame(sequence: sequence, timestamp: timestamp, symbols: more))
            }
            giveBackSecondLane()
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
