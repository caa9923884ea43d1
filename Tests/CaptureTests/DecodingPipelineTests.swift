import Dispatch
import Foundation
import HAL
import HALFakes
import Synchronization
import Testing
@testable import Capture

/// Decodes a frame into its sequence number as text; holds frame 0 until `release()`.
final class GatedDecoder: CodeDecoder {
    let name = "gated"
    private let gate = DispatchSemaphore(value: 0)
    let started: AsyncStream<UInt64>
    private let startedContinuation: AsyncStream<UInt64>.Continuation

    init() {
        (started, startedContinuation) = AsyncStream.makeStream(of: UInt64.self)
    }

    func release() { gate.signal() }

    func decode(_ frame: GrayFrame) -> [DecodedSymbol] {
        startedContinuation.yield(frame.sequence)
        if frame.sequence == 0 { gate.wait() }
        return [DecodedSymbol(text: "\(frame.sequence)")]
    }
}

@Suite struct DecodingPipelineTests {
    /// A C420jpeg video: blank, code 1 ×3, blank, code 2 ×3, code 3 ×3, blank.
    static func codesVideo(in dir: TemporaryDirectory) throws -> (path: String, frames: Int) {
        let path = dir.path("codes.y4m")
        let writer = try Y4MWriter(path: path, width: 320, height: 240, frameRateNumerator: 30, colorSpace: .c420jpeg)
        let shows = try VB1Vector.codes.map { try QRFixture.frame($0) }
        let script: [GrayFrame] = [QRFixture.blank()] + Array(repeating: shows[0], count: 3) + [QRFixture.blank()]
            + Array(repeating: shows[1], count: 3) + Array(repeating: shows[2], count: 3) + [QRFixture.blank()]
        for (index, frame) in script.enumerated() {
            // A little noise that differs from frame to frame, as a real sensor has.
            try writer.write(ImageOps.noisy(frame, amplitude: 20, seed: UInt64(index + 7)))
        }
        writer.close()
        return (path, script.count)
    }

    @Test func fileVideoOfSeveralCodesGivesTheirTexts() async throws {
        let dir = try TemporaryDirectory()
        let (path, count) = try Self.codesVideo(in: dir)
        let camera = try await CameraSources.open(try DeviceURI(parsing: "file:\(path)?pace=max"), clock: ContinuousClock())
        let pipeline = DecodingPipeline(camera: camera, decoder: ZBarDecoder())
        #expect(pipeline.description == "file:\(path)?pace=max (zbar)")
        var frames: [DecodedFrame] = []
        for try await frame in pipeline.codes() { frames.append(frame) }

        // pace=max: every frame is decoded, in order, empty ones included.
        #expect(frames.map(\.sequence) == Array(0..<UInt64(count)))
        let texts = frames.map { $0.symbols.compactMap(\.text) }
        let expected: [[String]] = [[]] + Array(repeating: [VB1Vector.codes[0]], count: 3) + [[]]
            + Array(repeating: [VB1Vector.codes[1]], count: 3) + Array(repeating: [VB1Vector.codes[2]], count: 3) + [[]]
        #expect(texts == expected)
        #expect(frames[4].timestamp == .nanoseconds(133_333_333))

        let stats = pipeline.stats
        #expect(stats.framesDecoded == UInt64(count))
        #expect(stats.framesWithSymbols == 9)
        #expect(stats.framesSkipped == 0)
        #expect((stats.lastLatency ?? .zero) > .zero)
        #expect(stats.maximumLatency >= (stats.meanLatency ?? .seconds(1000)))
    }

    @Test func latestFrameWinsWhileTheDecoderIsBusy() async throws {
        let clock = ManualClock()
        let frames = (0..<5).map { GrayFrame(width: 2, height: 2, pixels: [0, 0, 0, 0], timestamp: .milliseconds(10 * $0), sequence: UInt64($0)) }
        let camera = FakeCamera(frames: frames, interval: .milliseconds(10), clock: clock)
        let decoder = GatedDecoder()
        let pipeline = DecodingPipeline(camera: camera, decoder: decoder, clock: clock)
        let collected = Task {
            var seen: [DecodedFrame] = []
            for try await frame in pipeline.codes() { seen.append(frame) }
            return seen
        }
        var started = decoder.started.makeAsyncIterator()
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(10))
        #expect(await started.next() == 0)
        // Frames 1...4 arrive while frame 0 is still being decoded.
        for _ in 1..<5 {
            await clock.waitForSleepers(1)
            clock.advance(by: .milliseconds(10))
        }
        decoder.release()
        let seen = try await collected.value
        #expect(seen.map(\.sequence) == [0, 4])
        #expect(seen.map { $0.symbols.compactMap(\.text) } == [["0"], ["4"]])
        #expect(pipeline.stats.framesSkipped == 3)
        #expect(pipeline.stats.framesDecoded == 2)
    }

    @Test func streamEndsWithTheCamerasError() async throws {
        let clock = ManualClock()
        let frame = try QRFixture.frame(VB1Vector.codes[1])
        let camera = FakeCamera(frames: [frame], interval: .milliseconds(10), clock: clock,
                                endError: .disappeared("/dev/video0"))
        let pipeline = DecodingPipeline(camera: camera, decoder: ZBarDecoder(), clock: clock)
        let collected = Task {
            var texts: [String] = []
            do {
                for try await decoded in pipeline.codes() { texts += decoded.symbols.compactMap(\.text) }
                return (texts, nil as CameraError?)
            } catch let error as CameraError {
                return (texts, error)
            }
        }
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(10))
        let (texts, error) = try await collected.value
        #expect(texts == [VB1Vector.codes[1]])
        #expect(error == .disappeared("/dev/video0"))
    }

    @Test func aCameraThatCannotStartEndsTheStreamAtOnce() async throws {
        let dir = try TemporaryDirectory()
        let path = try FileCameraSourceTests.video(in: dir, count: 2)
        let camera = try FileCameraSource(path: path, paced: false, clock: ManualClock())
        try FileManager.default.removeItem(atPath: path)
        let pipeline = DecodingPipeline(camera: camera, decoder: ZBarDecoder())
        await #expect(throws: CameraError.notFound(path)) {
            for try await _ in pipeline.codes() {}
        }
    }

    @Test func truncatedVideoEndsTheCodesWithBadFile() async throws {
        let dir = try TemporaryDirectory()
        let path = try FileCameraSourceTests.video(in: dir, count: 3, truncateLast: true)
        let camera = try FileCameraSource(path: path, paced: false, clock: ManualClock())
        let pipeline = DecodingPipeline(camera: camera, decoder: ZBarDecoder())
        var count = 0
        do {
            for try await _ in pipeline.codes() { count += 1 }
            Issue.record("expected an error")
        } catch let error as CameraError {
            #expect(error.badFileMessage.contains("frame 3 is truncated"))
        }
        #expect(count == 2)
    }
}
