import HAL
import Testing
@testable import Capture

/// The hints a person aiming the camera gets, from what the region finder saw.
@Suite struct AimingAdvisorTests {
    static let size = (width: 640, height: 480)

    static func frame(_ level: UInt8 = 200) -> GrayFrame {
        GrayFrame(width: size.width, height: size.height, pixels: [UInt8](repeating: level, count: size.width * size.height),
                  timestamp: .zero, sequence: 0)
    }

    /// A frame with a checkerboard (4-pixel squares, dark 20 and light `light`) over `region`.
    static func patterned(_ region: FrameRegion, light: UInt8 = 220, background: UInt8 = 200) -> GrayFrame {
        var frame = frame(background)
        for y in region.y..<(region.y + region.height) {
            for x in region.x..<(region.x + region.width) {
                frame.pixels[y * size.width + x] = ((x / 4) + (y / 4)) % 2 == 0 ? 20 : light
            }
        }
        return frame
    }

    static let small = FrameRegion(x: 100, y: 100, width: 64, height: 64)
    static let large = FrameRegion(x: 160, y: 100, width: 280, height: 280)

    @Test func eachHintFromOneGlimpse() {
        #expect(AimingAdvisor.judge(Self.frame(30), regions: []) == .moreLight)
        #expect(AimingAdvisor.judge(Self.frame(30), regions: [Self.large]) == .moreLight)
        #expect(AimingAdvisor.judge(Self.frame(), regions: []) == .aimAtCode)
        #expect(AimingAdvisor.judge(Self.patterned(Self.small), regions: [Self.small]) == .moveCloser)
        #expect(AimingAdvisor.judge(Self.patterned(Self.large), regions: [Self.large]) == .holdStill)
        // A region the finder reports over a flat patch (a faint print): too flat to read.
        #expect(AimingAdvisor.judge(Self.frame(), regions: [Self.large]) == .moreLight)
        // The largest region decides.
        #expect(AimingAdvisor.judge(Self.patterned(Self.large), regions: [Self.small, Self.large]) == .holdStill)
    }

    @Test func aHintMustHoldForTwoGlimpsesAndAReadClearsItAtOnce() {
        var advisor = AimingAdvisor()
        let nothing = Sighting(regions: [], read: [])
        #expect(advisor.observe(Self.frame(), sighting: nothing, symbolCount: 0) == nil)
        #expect(advisor.observe(Self.frame(), sighting: nothing, symbolCount: 0) == .aimAtCode)
        // One odd glimpse does not change it.
        let small = Self.patterned(Self.small)
        let seen = Sighting(regions: [Self.small], read: [])
        #expect(advisor.observe(small, sighting: seen, symbolCount: 0) == .aimAtCode)
        #expect(advisor.observe(Self.frame(), sighting: nothing, symbolCount: 0) == .aimAtCode)
        #expect(advisor.observe(small, sighting: seen, symbolCount: 0) == .aimAtCode)
        #expect(advisor.observe(small, sighting: seen, symbolCount: 0) == .moveCloser)
        // A code read: no hint, straight away.
        #expect(advisor.observe(small, sighting: Sighting(regions: [Self.small], read: [Self.small]), symbolCount: 1) == nil)
        #expect(advisor.hint == nil)
        #expect(advisor.observe(Self.frame(30), sighting: nothing, symbolCount: 0) == nil)
        #expect(advisor.observe(Self.frame(30), sighting: nothing, symbolCount: 0) == .moreLight)
    }

    @Test func lightLevelsSampleTheFrameOrARegion() {
        let levels = LightLevels.measure(Self.patterned(Self.large))
        #expect(levels.low == 20 || levels.low == 200)
        let region = LightLevels.measure(Self.patterned(Self.large), in: Self.large)
        #expect(region.low == 20 && region.high == 220 && region.spread == 200)
        #expect((110...130).contains(region.mean))
        // Outside the frame, or a malformed frame: nothing to measure, no crash.
        #expect(LightLevels.measure(Self.frame(), in: FrameRegion(x: 700, y: 0, width: 10, height: 10)) == LightLevels(mean: 0, low: 0, high: 0))
        let broken = GrayFrame(width: 640, height: 480, pixels: [1, 2, 3], timestamp: .zero, sequence: 0)
        #expect(LightLevels.measure(broken) == LightLevels(mean: 0, low: 0, high: 0))
    }

    @Test func thumbnailsAverageTheirBoxes() throws {
        // Left half black, right half white: the thumbnail's halves are too.
        var frame = Self.frame(255)
        for y in 0..<Self.size.height { for x in 0..<(Self.size.width / 2) { frame.pixels[y * Self.size.width + x] = 0 } }
        let thumbnail = try #require(FrameThumbnail(frame: frame, width: 8, height: 4))
        #expect(thumbnail.pixels == Array([[UInt8]](repeating: [0, 0, 0, 0, 255, 255, 255, 255], count: 4).joined()))
        // A thumbnail larger than its frame repeats pixels rather than reading past the end.
        let tiny = GrayFrame(width: 2, height: 1, pixels: [10, 250], timestamp: .zero, sequence: 0)
        #expect(FrameThumbnail(frame: tiny, width: 4, height: 2)?.pixels == [10, 10, 250, 250, 10, 10, 250, 250])
        #expect(FrameThumbnail(frame: GrayFrame(width: 4, height: 4, pixels: [0], timestamp: .zero, sequence: 0), width: 2, height: 2) == nil)
        #expect(FrameThumbnail(frame: tiny, width: 0, height: 2) == nil)
    }
}
