import Foundation
import HAL
import HALFakes
import LinuxIO
import Testing
@testable import Capture

/// A camera recorded frame by frame into a cassette's Y4M companion (`CameraFrameRecorder`), and
/// the cassette played back as a HAL `CameraSource` (`CassetteCameraSource`): the same pixels,
/// the recorded identity, and the recorded timing on a manual clock, or none.
@Suite struct CameraCassetteTests {
    /// Five 8x4 frames at 10 frames a second, each a different grey, as a pull-based file camera.
    func video(in directory: TemporaryDirectory) throws -> String {
        let path = directory.path("clip.y4m")
        let writer = try Y4MWriter(path: path, width: 8, height: 4, frameRateNumerator: 10, colorSpace: .c420jpeg)
        for k in 0..<5 {
            try writer.write(GrayFrame(width: 8, height: 4, pixels: [UInt8](repeating: UInt8(40 * k + 10), count: 32),
                                       timestamp: .zero, sequence: UInt64(k)))
        }
        writer.close()
        return path
    }

    func record(_ directory: TemporaryDirectory, take count: Int = 5) async throws -> (CameraCassette, [GrayFrame]) {
        let recorder = try CameraFrameRecorder(framesPath: directory.path("s.cassette.y4m"))
        let camera = recorder.recording(try FileCameraSource(path: try video(in: directory), paced: false))
        var seen: [GrayFrame] = []
        for try await frame in try await camera.start() {
            seen.append(frame)
            if seen.count == count { break }
        }
        await camera.stop()
        #expect(!FileManager.default.fileExists(atPath: directory.path("s.cassette.y4m")), "nothing named before it is finished")
        let cassette = try #require(try recorder.finish())
        return (cassette, seen)
    }

    @Test func onlyTheFramesTheConsumerTookAreRecordedAsTheyWere() async throws {
        let directory = try TemporaryDirectory()
        let (cassette, seen) = try await record(directory, take: 3)
        #expect(cassette.info.driver == "file" && cassette.info.card == "clip.y4m")
        #expect(cassette.times == [.init(at: .zero, sequence: 0), .init(at: .milliseconds(100), sequence: 1), .init(at: .milliseconds(200), sequence: 2)])
        let frames = try #require(cassette.frames)
        #expect(frames.name == "s.cassette.y4m" && frames.width == 8 && frames.height == 4)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.path("s.cassette.y4m")))
        #expect(bytes.count == frames.bytes)
        // Grey only: the header, then FRAME and the 32 bytes of the Y plane, three times.
        #expect(bytes.count == "YUV4MPEG2 W8 H4 F30:1 Ip A1:1 Cmono\n".utf8.count + 3 * (6 + 32))
        #expect(seen.map { $0.pixels[0] } == [10, 50, 90])
        #expect(try FileManager.default.attributesOfItem(atPath: directory.path("s.cassette.y4m"))[.posixPermissions] as? Int == 0o600)
    }

    @Test func aReplayIsThatCameraWithItsFramesAtTheirRecordedTimes() async throws {
        let directory = try TemporaryDirectory()
        let (cassette, seen) = try await record(directory)
        let clock = ManualClock()
        let replay = try CassetteCameraSource(cassette, directory: directory.url.path, clock: clock, timing: .recorded)
        #expect(replay.info == cassette.info)
        var frames = try await replay.start().makeAsyncIterator()
        let first = try #require(try await frames.next())
        #expect(first.pixels == seen[0].pixels && first.timestamp == .zero)
        for k in 1..<5 {
            // The next frame waits for its time on the injected clock.
            await clock.waitForSleepers(1)
            #expect(clock.nextDeadline?.offset == .milliseconds(100 * k))
            clock.advance(by: .milliseconds(100))
            let frame = try #require(try await frames.next())
            #expect(frame.pixels == seen[k].pixels)
            #expect(frame.timestamp == .milliseconds(100 * k) && frame.sequence == UInt64(k))
        }
        #expect(try await frames.next() == nil)
    }

    @Test func timingIgnoredHandsOverEveryFrameAtOnce() async throws {
        let directory = try TemporaryDirectory()
        let (cassette, seen) = try await record(directory)
        let replay = try CassetteCameraSource(cassette, directory: directory.url.path, clock: ManualClock(), timing: .ignored)
        var got: [GrayFrame] = []
        for try await frame in try await replay.start() { got.append(frame) }
        #expect(got.map(\.pixels) == seen.map(\.pixels))
        #expect(got.map(\.timestamp) == cassette.times.map(\.at))
    }

    @Test func aFrameFileThatDoesNotMatchIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let (cassette, _) = try await record(directory)
        var wrongSize = cassette
        wrongSize.frames?.bytes += 1
        #expect(throws: CameraError.self) { try CassetteCameraSource(wrongSize, directory: directory.url.path) }
        var moreFrames = cassette
        moreFrames.times.append(.init(at: .seconds(1), sequence: 9))
        let replay = try CassetteCameraSource(moreFrames, directory: directory.url.path, timing: .ignored)
        var error: (any Error)?
        do { for try await _ in try await replay.start() {} } catch let caught { error = caught }
        #expect((error as? CameraError)?.badFileMessage.contains("ends after 5 frames, the cassette has 6") == true, "\(String(describing: error))")
        var gone = cassette
        gone.frames?.name = "missing.y4m"
        #expect(throws: CameraError.notFound("\(directory.url.path)/missing.y4m (the cassette's frames: was it copied without them?)")) {
            try CassetteCameraSource(gone, directory: directory.url.path)
        }
    }

    @Test func anAbandonedRecordingLeavesNothing() async throws {
        let directory = try TemporaryDirectory()
        let recorder = try CameraFrameRecorder(framesPath: directory.path("a.y4m"))
        let camera = recorder.recording(try FileCameraSource(path: try video(in: directory), paced: false))
        for try await _ in try await camera.start() {}
        recorder.abandon()
        #expect(throws: PrivateFileError.self) { try recorder.finish() }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["clip.y4m"])
    }
}

/// `StreamingPrivateFile`: appended in pieces through a bounded buffer, there only once committed.
@Suite struct StreamingPrivateFileTests {
    @Test func piecesAppearWholeOnlyAtCommit() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("big.bin")
        let file = try StreamingPrivateFile(creating: path, bufferBytes: 4096)
        var expected: [UInt8] = []
        for k in 0..<100 {
            // Some pieces smaller than the buffer, some larger than it.
            let piece = [UInt8](repeating: UInt8(k), count: k % 10 == 0 ? 10_000 : 700)
            try file.append(piece)
            expected += piece
            #expect(!FileManager.default.fileExists(atPath: path))
        }
        #expect(file.count == expected.count)
        try file.commit()
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == expected)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
    }

    @Test func theLimitRefusesAPieceAndKeepsTheFileGood() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("capped.bin")
        let file = try StreamingPrivateFile(creating: path, limit: 1000)
        try file.append([UInt8](repeating: 1, count: 600))
        #expect(throws: StreamingPrivateFileError.full(limit: 1000)) { try file.append([UInt8](repeating: 2, count: 600)) }
        try file.append([UInt8](repeating: 3, count: 400))
        try file.commit()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count == 1000)
    }

    @Test func abandonedItLeavesNothingAndRefusesToCommit() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("gone.bin")
        let file = try StreamingPrivateFile(creating: path)
        try file.append([1, 2, 3])
        file.abandon()
        #expect(throws: PrivateFileError.self) { try file.commit() }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
        // And it is never written over something that is there.
        _ = try directory.write([9], to: "taken.bin")
        #expect(throws: PrivateFileError.self) { try StreamingPrivateFile(creating: directory.path("taken.bin")) }
    }
}
