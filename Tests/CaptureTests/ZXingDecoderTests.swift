import HAL
import Testing
@testable import Capture

/// zxing through the C bridge: exact bytes, strides, several codes, and frames it must refuse.
@Suite struct ZXingDecoderTests {
    @Test func spacesInsideTheThirdCodeAreData() throws {
        let code = VB1Vector.codes[2]
        let symbols = ZXingDecoder().decode(try QRFixture.frame(code))
        #expect(symbols.first?.bytes.filter { $0 == 0x20 }.count == 4)
        #expect(symbols.first?.text == code)
    }

    /// zxing says where each code is: the bounding box of its corners, inside the drawn symbol
    /// (quiet zone excluded) and covering most of it.
    @Test func saysWhereEachCodeIs() throws {
        var pixels = [UInt8](repeating: 200, count: 640 * 480)
        let modules = try QRFixture.modules(VB1Vector.codes[0])
        QRFixture.draw(modules, scale: 4, at: 300, 120, into: &pixels, width: 640)
        let frame = GrayFrame(width: 640, height: 480, pixels: pixels, timestamp: .zero, sequence: 0)
        let found = try ZXingDecoder().located(in: frame)
        #expect(found.map(\.symbol.text) == [VB1Vector.codes[0]])
        let region = try #require(found.first?.region)
        // The symbol's modules start 4 modules (16 pixels) inside the drawn card.
        let (left, top, side) = (300 + 16, 120 + 16, modules.count * 4)
        #expect(abs(region.x - left) <= 4 && abs(region.y - top) <= 4, "\(region)")
        #expect(abs(region.width - side) <= 8 && abs(region.height - side) <= 8, "\(region)")
    }

    @Test func honoursStride() throws {
        let frame = ImageOps.padded(try QRFixture.frame(VB1Vector.codes[0]), padding: 13)
        #expect(frame.stride == 333)
        #expect(ZXingDecoder().decode(frame).map(\.text) == [VB1Vector.codes[0]])
    }

    @Test func findsTwoCodesInOneFrame() throws {
        var pixels = [UInt8](repeating: 140, count: 480 * 240)
        QRFixture.draw(try QRFixture.modules(VB1Vector.codes[0]), scale: 4, at: 10, 20, into: &pixels, width: 480)
        QRFixture.draw(try QRFixture.modules(VB1Vector.codes[1]), scale: 4, at: 260, 20, into: &pixels, width: 480)
        let symbols = ZXingDecoder().decode(GrayFrame(width: 480, height: 240, pixels: pixels, timestamp: .zero, sequence: 0))
        #expect(Set(symbols.compactMap(\.text)) == Set(VB1Vector.codes[0...1]))
    }

    @Test func maximumSymbolsStopsTheSearch() throws {
        var pixels = [UInt8](repeating: 140, count: 480 * 240)
        QRFixture.draw(try QRFixture.modules(VB1Vector.codes[0]), scale: 4, at: 10, 20, into: &pixels, width: 480)
        QRFixture.draw(try QRFixture.modules(VB1Vector.codes[1]), scale: 4, at: 260, 20, into: &pixels, width: 480)
        let frame = GrayFrame(width: 480, height: 240, pixels: pixels, timestamp: .zero, sequence: 0)
        #expect(ZXingDecoder(options: .init(maximumSymbols: 1)).decode(frame).count == 1)
    }

    /// Every option reaches zxing and still reads a plain code (nothing in the bridge drops or
    /// mangles one).
    @Test(arguments: [
        ZXingDecoder.Options(),
        ZXingDecoder.Options(tryHarder: true),
        ZXingDecoder.Options(tryDownscale: false),
        ZXingDecoder.Options(downscaleThreshold: 100, downscaleFactor: 2),
        ZXingDecoder.Options(binarizer: .globalHistogram),
        ZXingDecoder.Options(binarizer: .fixedThreshold),
    ])
    func eachOptionStillReadsAPlainCode(_ options: ZXingDecoder.Options) throws {
        let frame = try QRFixture.frame(VB1Vector.codes[1])
        #expect(ZXingDecoder(options: options).decode(frame).map(\.text) == [VB1Vector.codes[1]])
    }

    @Test func aFrameWithoutACodeGivesNothing() throws {
        let decoder = ZXingDecoder()
        #expect(try decoder.symbols(in: QRFixture.blank()) == [])
        #expect(try decoder.symbols(in: ImageOps.noisy(QRFixture.blank(), amplitude: 120)) == [])
    }

    @Test func malformedFramesAreRefusedBeforeZXingReadsThem() {
        let decoder = ZXingDecoder()
        let short = GrayFrame(width: 10, height: 10, pixels: [1, 2, 3], timestamp: .zero, sequence: 0)
        let empty = GrayFrame(width: 0, height: 0, pixels: [], timestamp: .zero, sequence: 0)
        let narrowStride = GrayFrame(width: 10, height: 2, stride: 5, pixels: [UInt8](repeating: 0, count: 20), timestamp: .zero, sequence: 0)
        for frame in [short, empty, narrowStride] {
            #expect(decoder.decode(frame) == [])
            #expect(throws: ZXingError.self) { try decoder.symbols(in: frame) }
        }
        #expect(throws: ZXingError.badFrame("10x10, stride 10, 3 bytes")) { try decoder.symbols(in: short) }
    }

    /// The last row needs only `width` bytes, not a whole stride: such a frame is fine.
    @Test func theLastRowMayBeShortOfAStride() throws {
        let padded = ImageOps.padded(try QRFixture.frame(VB1Vector.codes[0]), padding: 7)
        var trimmed = padded
        trimmed.pixels.removeLast(7)
        #expect(ZXingDecoder().decode(trimmed).map(\.text) == [VB1Vector.codes[0]])
        trimmed.pixels.removeLast()
        #expect(throws: ZXingError.self) { try ZXingDecoder().symbols(in: trimmed) }
    }

    @Test func oneDecoderIsSafeFromManyTasks() async throws {
        let decoder = ZXingDecoder()
        let frames = try VB1Vector.codes.map { try QRFixture.frame($0) }
        let results = await withTaskGroup(of: (Int, [String?]).self) { group in
            for i in 0..<12 {
                group.addTask { (i, decoder.decode(frames[i % 3]).map(\.text)) }
            }
            var all: [(Int, [String?])] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 12)
        for (i, texts) in results { #expect(texts == [VB1Vector.codes[i % 3]]) }
    }

    @Test func zbarGivesTheSameAnswerForTheSameFrameEveryTime() throws {
        // zbar's QR reader draws random numbers; with a scanner per decode the answer depends on
        // the frame alone. A small blurred code is where a kept scanner's answers used to wander.
        let frame = try ZXingThenZBarDecoderTests.smallBlurredCode(VB1Vector.codes[0])
        let decoder = ZBarDecoder()
        let answers = (0..<6).map { _ in decoder.decode(frame).map(\.text) }
        #expect(answers.allSatisfy { $0 == [VB1Vector.codes[0]] })
    }
}
