import Foundation
import HAL
import Testing
@testable import Capture

/// What the pipeline leaves for a preview: the newest frame, where codes were seen and read.
@Suite struct PipelineGlimpseTests {
    /// Blank, blank, then the first code of the VB1 test vector: the last frame shows a code.
    static func endingOnACode(in dir: TemporaryDirectory) throws -> String {
        let path = dir.path("ending.y4m")
        let writer = try Y4MWriter(path: path, width: 320, height: 240, frameRateNumerator: 30, colorSpace: .c420jpeg)
        for frame in [QRFixture.blank(), QRFixture.blank(), try QRFixture.frame(VB1Vector.codes[0])] { try writer.write(frame) }
        writer.close()
        return path
    }

    @Test func theNewestDecodedFrameWithWhereItsCodeWasRead() async throws {
        let dir = try TemporaryDirectory()
        let path = try Self.endingOnACode(in: dir)
        let camera = try await CameraSources.open(try DeviceURI(parsing: "file:\(path)?pace=max"), clock: ContinuousClock())
        let pipeline = DecodingPipeline(camera: camera, decoder: ZXingThenZBarDecoder())
        #expect(pipeline.latestGlimpse == nil)
        var read = 0
        for try await frame in pipeline.codes() { read += frame.symbols.count }
        #expect(read == 1)
        let glimpse = try #require(pipeline.latestGlimpse)
        #expect(glimpse.number == 3)
        #expect(glimpse.frame.sequence == 2)
        #expect(glimpse.symbolCount == 1)
        let sighting = try #require(glimpse.sighting)
        // The code's box: inside the 320×240 frame, across its middle.
        let box = try #require(sighting.read.first)
        #expect(sighting.read.count == 1)
        #expect(box.x > 0 && box.y > 0 && box.x + box.width < 320 && box.y + box.height < 240)
        #expect(box.x < 160 && box.x + box.width > 160 && box.y < 120 && box.y + box.height > 120)
    }

    @Test func aPlainDecoderLeavesTheSightingToTheViewer() async throws {
        let dir = try TemporaryDirectory()
        let (path, _) = try DecodingPipelineTests.codesVideo(in: dir)
        let camera = try await CameraSources.open(try DeviceURI(parsing: "file:\(path)?pace=max"), clock: ContinuousClock())
        let pipeline = DecodingPipeline(camera: camera, decoder: ZBarDecoder())
        for try await _ in pipeline.codes() {}
        let glimpse = try #require(pipeline.latestGlimpse)
        #expect(glimpse.sighting == nil)
    }
}
