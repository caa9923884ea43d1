import Foundation
import HAL
import HALFakes
import Synchronization
import Testing
@testable import Capture

@Suite struct FileCameraSourceTests {
    /// A Cmono video of `count` 4x2 frames whose pixels all equal the frame index.
    static func video(in dir: TemporaryDirectory, count: Int, rate: Int = 10, truncateLast: Bool = false) throws -> String {
        let path = dir.path("v.y4m")
        let writer = try Y4MWriter(path: path, width: 4, height: 2, frameRateNumerator: rate, colorSpace: .mono)
        for i in 0..<count {
            try writer.write(GrayFrame(width: 4, height: 2, pixels: [UInt8](repeating: UInt8(i), count: 8), timestamp: .zero, sequence: 0))
        }
        writer.close()
        if truncateLast {
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
            let size = try handle.seekToEnd()
            try handle.truncate(atOffset: size - 3)
            try handle.close()
        }
        return path
    }

    @Test func infoDescribesTheFile() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.video(in: dir, count: 1)
        let source = try FileCameraSource(path: path, paced: false, clock: ManualClock())
        #expect(source.info.uri == "file:\(path)?pace=max")
        #expect(source.info.driver == "file")
        #expect(source.info.card == "v.y4m")
        #expect(source.info.formats == [PixelFormatInfo(fourcc: "GREY", sizes: [.discrete(width: 4, height: 2)])])
    }

    @Test func pacedFramesArriveOnlyAsTimeAdvances() async throws {
        let dir = try TemporaryDirectory()
        let clock = ManualClock()
        let source = try FileCameraSource(path: try Self.video(in: dir, count: 3, rate: 10), paced: true, clock: clock)
        let stream = try await source.start()
        var frames = stream.makeAsyncIterator()

        // Frame 0 is due at once.
        let first = try await frames.next()
        #expect(first?.sequence == 0)
        #expect(first?.pixels.first == 0)

        // Frame 1 waits for 100 ms of clock time.
        await clock.waitForSleepers(1)
        #expect(clock.nextDeadline == ManualClock.Instant(offset: .milliseconds(100)))
        clock.advance(by: .milliseconds(99))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .milliseconds(1))
        let second = try await frames.next()
        #expect(second?.sequence == 1)
        #expect(second?.timestamp == .milliseconds(100))
        #expect(second?.pixels.first == 1)

        await clock.waitForSleepers(1)
        #expect(clock.nextDeadline == ManualClock.Instant(offset: .milliseconds(200)))
        clock.advance(by: .milliseconds(100))
        #expect(try await frames.next()?.sequence == 2)
        #expect(try await frames.next() == nil)
    }

    @Test func pacedSourceKeepsOnlyTheNewestFrameForASlowConsumer() async throws {
        let dir = try TemporaryDirectory()
        let clock = ManualClock()
        let source = try FileCameraSource(path: try Self.video(in: dir, count: 6, rate: 10), paced: true, clock: clock)
        let stream = try await source.start()
        // Nobody reads while frames 1...4 come due.
        for _ in 1..<5 {
            await clock.waitForSleepers(1)
            clock.advanceToNextDeadline()
        }
        // Once the player waits for frame 5, frame 4 has been handed over.
        await clock.waitForSleepers(1)
        var frames = stream.makeAsyncIterator()
        #expect(try await frames.next()?.sequence == 4)
        clock.advanceToNextDeadline()
        #expect(try await frames.next()?.sequence == 5)
        #expect(try await frames.next() == nil)
    }

    @Test func pacedTruncatedFileEndsWithBadFileWhenTheFrameIsDue() async throws {
        let dir = try TemporaryDirectory()
        let clock = ManualClock()
        let path = try Self.video(in: dir, count: 3, rate: 10, truncateLast: true)
        let source = try FileCameraSource(path: path, paced: true, clock: clock)
        var frames = try await source.start().makeAsyncIterator()
        #expect(try await frames.next()?.sequence == 0)
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(100))
        #expect(try await frames.next()?.sequence == 1)
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(100))
        do {
            _ = try await frames.next()
            Issue.record("expected the truncated frame to end the stream with an error")
        } catch let error as CameraError {
            #expect(error.badFileMessage.contains("frame 3 is truncated"))
        }
    }

    @Test func paceMaxDeliversEveryFrameInOrderToASlowConsumer() async throws {
        let dir = try TemporaryDirectory()
        let clock = ManualClock()
        let source = try FileCameraSource(path: try Self.video(in: dir, count: 40, rate: 30), paced: false, clock: clock)
        var seen: [GrayFrame] = []
        for try await frame in try await source.start() {
            seen.append(frame)
            // A slow consumer: let everything else run a while before asking for the next frame.
            for _ in 0..<50 { await Task.yield() }
        }
        #expect(seen.map(\.sequence) == Array(0..<40))
        #expect(seen.map { $0.pixels.first ?? 255 } == (0..<40).map { UInt8($0) })
        #expect(seen.last?.timestamp == .nanoseconds(1_300_000_000))
        // No clock time passed: pace=max never sleeps.
        #expect(clock.now == ManualClock.Instant(offset: .zero))
        #expect(clock.activity.started == 0)
    }

    @Test func paceMaxReadsOnlyWhatTheConsumerAsksFor() async throws {
        let dir = try TemporaryDirectory()
        let source = try FileCameraSource(path: try Self.video(in: dir, count: 10), paced: false, clock: ManualClock())
        let reader = SharedReader(try Y4MReader(path: source.path))
        let stream = AsyncThrowingStream<GrayFrame, any Error>(unfolding: { try reader.next() })
        // The same pull-based construction the source uses: nothing is read ahead of demand.
        var frames = stream.makeAsyncIterator()
        _ = try await frames.next()
        _ = try await frames.next()
        for _ in 0..<50 { await Task.yield() }
        #expect(reader.framesRead == 2)
    }

    @Test func paceMaxTruncatedFileEndsWithBadFileAfterTheGoodFrames() async throws {
        let dir = try TemporaryDirectory()
        let source = try FileCameraSource(path: try Self.video(in: dir, count: 4, truncateLast: true), paced: false, clock: ManualClock())
        var seen: [UInt64] = []
        do {
            for try await frame in try await source.start() { seen.append(frame.sequence) }
            Issue.record("expected an error")
        } catch let error as CameraError {
            #expect(error.badFileMessage.contains("frame 4 is truncated"))
        }
        #expect(seen == [0, 1, 2])
    }

    @Test func stopEndsAPaceMaxStream() async throws {
        let dir = try TemporaryDirectory()
        let source = try FileCameraSource(path: try Self.video(in: dir, count: 10), paced: false, clock: ManualClock())
        var frames = try await source.start().makeAsyncIterator()
        #expect(try await frames.next()?.sequence == 0)
        await source.stop()
        #expect(try await frames.next() == nil)
    }

    @Test func eachStartPlaysFromTheBeginning() async throws {
        let dir = try TemporaryDirectory()
        let source = try FileCameraSource(path: try Self.video(in: dir, count: 3), paced: false, clock: ManualClock())
        for _ in 0..<2 {
            var seen: [UInt64] = []
            for try await frame in try await source.start() { seen.append(frame.sequence) }
            #expect(seen == [0, 1, 2])
        }
    }

    @Test func cameraSourcesOpensFileURIs() async throws {
        let dir = try TemporaryDirectory()
        let path = try Self.video(in: dir, count: 2)
        let clock = ManualClock()
        let maxSource = try await CameraSources.open(try DeviceURI(parsing: "file:\(path)?pace=max"), clock: clock)
        #expect((maxSource as? FileCameraSource)?.paced == false)
        let paced = try await CameraSources.open(try DeviceURI(parsing: "file:\(path)"), clock: clock)
        #expect((paced as? FileCameraSource)?.paced == true)
        #expect(paced.info.uri == "file:\(path)")
    }

    @Test func cameraSourcesRefusesWhatItCannotOpen() async throws {
        let clock = ManualClock()
        await #expect(throws: CameraError.notFound("/dev/nonexistent-video9")) {
            _ = try await CameraSources.open(.v4l2(path: "/dev/nonexistent-video9"), clock: clock)
        }
        await #expect(throws: CameraError.notFound("/nonexistent.y4m")) {
            _ = try await CameraSources.open(.file(path: "/nonexistent.y4m", paced: true), clock: clock)
        }
        let error = await #expect(throws: CameraError.self) { _ = try await CameraSources.open(.simulatedBench, clock: clock) }
        #expect(error?.description.contains("sim: (cameras are v4l2:/dev/videoN or file:PATH.y4m)") == true)
    }
}
