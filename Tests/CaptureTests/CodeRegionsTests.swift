import HAL
import Testing
@testable import Capture

/// The cheap "is there a code here" look that decides whether zbar runs after zxing.
@Suite struct CodeRegionsTests {
    static func contains(_ region: FrameRegion, _ x: Int, _ y: Int) -> Bool {
        region.x <= x && x < region.x + region.width && region.y <= y && y < region.y + region.height
    }

    @Test func findsTheCodeWhereItIs() throws {
        var pixels = [UInt8](repeating: 140, count: 640 * 480)
        // 45 modules with the quiet zone, 4 pixels each: 180 pixels from (400, 250); the modules span 16...164 of that.
        QRFixture.draw(try QRFixture.modules(VB1Vector.codes[0]), scale: 4, at: 400, 250, into: &pixels, width: 640)
        let frame = GrayFrame(width: 640, height: 480, pixels: pixels, timestamp: .zero, sequence: 0)
        let regions = CodeRegions.find(in: frame)
        let region = try #require(regions.first)
        #expect(regions.count == 1)
        #expect(Self.contains(region, 490, 340))
        // Within a cell (8 pixels) or two of the symbol's modules.
        #expect(abs(region.x - 416) <= 16 && abs(region.y - 266) <= 16)
        #expect(abs(region.width - 148) <= 24 && abs(region.height - 148) <= 24)
    }

    @Test(arguments: [0.0, 45, 130, 200])
    func findsATurnedAndTiltedCode(_ degrees: Double) throws {
        let corners = PerspectiveWarp.cardCorners(centreX: 160, centreY: 120, side: 190, degrees: degrees, keystone: 0.3, shear: 0.1)
        let frame = QRFixture.frame(try QRFixture.modules(VB1Vector.codes[2]), corners: corners, width: 320, height: 240)
        let region = try #require(CodeRegions.find(in: frame).first)
        #expect(Self.contains(region, 160, 120))
    }

    @Test func findsASmallBlurredCode() throws {
        let frame = try ZXingThenZBarDecoderTests.smallBlurredCode(VB1Vector.codes[1])
        let region = try #require(CodeRegions.find(in: frame).first)
        // Drawn at (40, 30), 45×3 pixels: its centre is at (107, 97).
        #expect(Self.contains(region, 107, 97))
    }

    @Test func findsTwoCodesLargestFirst() throws {
        var pixels = [UInt8](repeating: 140, count: 640 * 480)
        QRFixture.draw(try QRFixture.modules(VB1Vector.codes[0]), scale: 3, at: 20, 20, into: &pixels, width: 640)
        QRFixture.draw(try QRFixture.modules(VB1Vector.codes[1]), scale: 6, at: 300, 150, into: &pixels, width: 640)
        let regions = CodeRegions.find(in: GrayFrame(width: 640, height: 480, pixels: pixels, timestamp: .zero, sequence: 0), limit: 3)
        #expect(regions.count == 2)
        #expect(regions.first.map { Self.contains($0, 435, 285) } == true)
        #expect(regions.last.map { Self.contains($0, 87, 87) } == true)
        #expect(CodeRegions.find(in: GrayFrame(width: 640, height: 480, pixels: pixels, timestamp: .zero, sequence: 0), limit: 1).count == 1)
    }

    @Test func flatShapesNoiseAndGradientsAreNotCodes() {
        #expect(CodeRegions.find(in: QRFixture.blank()) == [])
        #expect(CodeRegions.find(in: ImageOps.noisy(QRFixture.blank(), amplitude: 40)) == [])
        #expect(CodeRegions.find(in: ZXingThenZBarDecoderTests.rectangles()) == [])
        var gradient = QRFixture.blank()
        for y in 0..<240 { for x in 0..<320 { gradient.pixels[y * 320 + x] = UInt8(x * 255 / 319) } }
        #expect(CodeRegions.find(in: gradient) == [])
    }

    /// A bar code-like pattern of stripes flips only one way: not a 2D code.
    @Test func stripesAreNotCodes() {
        var stripes = QRFixture.blank()
        for y in 40..<200 { for x in 60..<260 { stripes.pixels[y * 320 + x] = (x / 3) % 2 == 0 ? 20 : 230 } }
        #expect(CodeRegions.find(in: stripes) == [])
    }

    @Test func tinyAndMalformedFramesHaveNoRegions() {
        #expect(CodeRegions.find(in: GrayFrame(width: 16, height: 16, pixels: [UInt8](repeating: 0, count: 256), timestamp: .zero, sequence: 0)) == [])
        #expect(CodeRegions.find(in: GrayFrame(width: 100, height: 100, pixels: [1, 2, 3], timestamp: .zero, sequence: 0)) == [])
    }

    @Test func honoursStride() throws {
        let frame = ImageOps.padded(try QRFixture.frame(VB1Vector.codes[0]), padding: 13)
        let region = try #require(CodeRegions.find(in: frame).first)
        #expect(Self.contains(region, 160, 120))
    }
}
