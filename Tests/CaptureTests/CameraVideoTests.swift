import Capture
import HAL
@testable import MediaSupport
import Testing

/// The decode benchmark's camera-like videos (MediaSupport's CameraVideo): a story that shows
/// every code, the same pictures for the same seed, and codes a decoder can really read.
@Suite struct CameraVideoTests {
    static let codes = ["VB1:0011AABB:1/3:FIRST PART", "VB1:0011AABB:2/3:SECOND PART", "VB1:0011AABB:3/3:THIRD PART"]
    static let strays = ["https://example.com/menu"]

    @Test func everyCodeAndStrayIsShownAndTheDeskComesFirst() {
        for seed in 1...20 {
            let video = CameraVideo(codes: Self.codes, strays: Self.strays, width: 320, height: 240, framesPerSecond: 15, seed: UInt64(seed))
            let shown = Set(video.shots.compactMap(\.text))
            #expect(shown == Set(Self.codes + Self.strays), "seed \(seed)")
            #expect(video.shots.first?.text == nil, "a look at the desk before the first code")
            #expect(video.frameCount == video.shots.reduce(0) { $0 + $1.moveFrames + $1.holdFrames })
        }
    }

    /// Every code has an ordinary showing (the set can be completed from those alone); hard
    /// showings come on top, each kind in some seed, and are drawn as their kind says.
    @Test func hardShowingsComeOnTopOfOrdinaryOnes() throws {
        var kinds = Set<CameraVideo.Difficulty>()
        for seed in 1...20 {
            let video = CameraVideo(codes: Self.codes, strays: Self.strays, width: 320, height: 240, framesPerSecond: 15, seed: UInt64(seed))
            let plain = Set(video.shots.filter { $0.difficulty == .plain }.compactMap(\.text))
            #expect(plain == Set(Self.codes + Self.strays), "seed \(seed)")
            kinds.formUnion(video.shots.map(\.difficulty))
            #expect(video.shotOfEachFrame.count == video.frameCount)
        }
        #expect(kinds == Set(CameraVideo.Difficulty.allCases))
        // A glare saturates the middle of where it falls and leaves the rest alone.
        var frame = GrayFrame(width: 64, height: 64, pixels: [UInt8](repeating: 100, count: 64 * 64), timestamp: .zero, sequence: 0)
        CameraVideo.glare(&frame, centreX: 32, centreY: 32, radius: 16)
        #expect(frame.pixels[32 * 64 + 32] == 255)
        #expect(frame.pixels[0] == 100 && frame.pixels[32 * 64 + 50] == 100)
    }

    @Test func theSameSeedDrawsTheSamePicturesAndAnotherSeedOthers() throws {
        func fingerprint(_ seed: UInt64) throws -> [Int] {
            var sums: [Int] = []
            try CameraVideo(codes: Self.codes, strays: Self.strays, width: 96, height: 72, framesPerSecond: 5, seed: seed)
                .render { frame in sums.append(frame.pixels.enumerated().reduce(0) { $0 &+ Int($1.element) &* ($1.offset | 1) }) }
            return sums
        }
        let first = try fingerprint(7)
        #expect(try fingerprint(7) == first)
        #expect(try fingerprint(8) != first)
    }

    /// Not only noise: zxing reads each code from the frames where it is held still.
    @Test func theCodesCanBeReadFromTheVideo() throws {
        let video = CameraVideo(codes: Self.codes, strays: Self.strays, width: 400, height: 300, framesPerSecond: 5, seed: 3)
        let decoder = try CodeDecoders.decoder(named: "zxing")
        var read = Set<String>()
        try video.render { frame in
            for symbol in decoder.decode(frame) { read.insert(String(decoding: symbol.bytes, as: UTF8.self)) }
        }
        #expect(read == Set(Self.codes + Self.strays))
    }
}
