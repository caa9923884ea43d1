import Dispatch
import Foundation
import HAL
import Synchronization
import Testing
@testable import Capture

/// The pipeline's second lane: a `TwoLaneDecoder`'s slow second opinion runs beside the next
/// frames' first answers instead of in front of them.
@Suite struct SecondLaneTests {
    /// First answers are the frame's number; frame 0 also asks for a second opinion, which holds
    /// until frame 2's first answer has been given (or 10 s pass) and then says "late".
    final class SlowSecondOpinion: TwoLaneDecoder {
        let name = "two-lane stub"
        private let frameTwoAnswered = DispatchSemaphore(value: 0)
        let waitedInVain = Mutex(false)

        func decode(_ frame: GrayFrame) -> [DecodedSymbol] {
            let answer = decodeFirst(frame)
            return answer.symbols + (answer.second?() ?? [])
        }

        func decodeFirst(_ frame: GrayFrame) -> FirstLaneAnswer {
            let first = [DecodedSymbol(text: "\(frame.sequence)")]
            if frame.sequence == 2 { frameTwoAnswered.signal() }
            guard frame.sequence == 0 else { return FirstLaneAnswer(symbols: first) }
            return FirstLaneAnswer(symbols: first, second: { [self] in
                if frameTwoAnswered.wait(timeout: .now() + 10) == .timedOut { waitedInVain.withLock { $0 = true } }
                return [DecodedSymbol(text: "late")]
            })
        }
    }

    @Test func theSecondOpinionComesAfterLaterFramesFirstAnswers() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("four.y4m")
        let writer = try Y4MWriter(path: path, width: 16, height: 16, frameRateNumerator: 30, colorSpace: .mono)
        for n in 0..<4 { try writer.write(GrayFrame(width: 16, height: 16, pixels: [UInt8](repeating: UInt8(n), count: 256), timestamp: .zero, sequence: UInt64(n))) }
        writer.close()
        let camera = try await CameraSources.open(try DeviceURI(parsing: "file:\(path)?pace=max"), clock: ContinuousClock())
        let decoder = SlowSecondOpinion()
        let pipeline = DecodingPipeline(camera: camera, decoder: decoder)
        var seen: [(UInt64, [String])] = []
        for try await frame in pipeline.codes() {
            seen.append((frame.sequence, frame.symbols.compactMap(\.text)))
            if seen.count == 5 { break }
        }
        #expect(decoder.waitedInVain.withLock { $0 } == false, "frame 2 was answered while frame 0's second opinion ran")
        let order = seen.map { $0.1 }
        let late = try #require(order.firstIndex(of: ["late"]))
        // Frame 1's answer went out before frame 2 was looked at, so before the second opinion
        // could end (frame 2's and the opinion's own order is a race between the lanes).
        let one = try #require(order.firstIndex(of: ["1"]))
        #expect(late > one)
        #expect(seen[late].0 == 0, "the second opinion is about frame 0")
        #expect(pipeline.stats.secondRuns == 1)
    }

    /// Without lanes (a plain decode) the same decoder would hold frame 1 behind frame 0's
    /// second opinion: the premise of the test above.
    @Test func aPlainDecodeRunsBothOneAfterTheOther() {
        let decoder = SlowSecondOpinion()
        let zero = GrayFrame(width: 1, height: 1, pixels: [0], timestamp: .zero, sequence: 0)
        let two = GrayFrame(width: 1, height: 1, pixels: [0], timestamp: .zero, sequence: 2)
        _ = decoder.decodeFirst(two)  // lets the second opinion go at once
        #expect(decoder.decode(zero).compactMap(\.text) == ["0", "late"])
    }
}
