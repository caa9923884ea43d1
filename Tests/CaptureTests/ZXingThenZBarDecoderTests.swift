import HAL
import Synchronization
import Testing
@testable import Capture

/// The arrangement `hwprobe import` uses: zxing first, zbar only when zxing read nothing and
/// `CodeRegions` sees a code. A stand-in for zbar counts when it is asked.
@Suite struct ZXingThenZBarDecoderTests {
    /// ZBarDecoder, counting its calls.
    final class CountingZBar: CodeDecoder {
        let name = "zbar (counted)"
        private let zbar = ZBarDecoder()
        private let count = Mutex(0)
        private let sizes = Mutex<[Int]>([])
        var calls: Int { count.withLock { $0 } }
        /// The width of each frame zbar was given, in order.
        var widths: [Int] { sizes.withLock { $0 } }

        func decode(_ frame: GrayFrame) -> [DecodedSymbol] {
            count.withLock { $0 += 1 }
            sizes.withLock { $0.append(frame.width) }
            return zbar.decode(frame)
        }
    }

    /// A small code (3 pixels a module) in the corner of the frame, out of focus by a pixel: zbar
    /// reads it, zxing does not.
    static func smallBlurredCode(_ text: String) throws -> GrayFrame {
        var pixels = [UInt8](repeating: 140, count: 320 * 240)
        QRFixture.draw(try QRFixture.modules(text), scale: 3, at: 40, 30, into: &pixels, width: 320)
        return ImageOps.boxBlurred(GrayFrame(width: 320, height: 240, pixels: pixels, timestamp: .zero, sequence: 0), radius: 1)
    }

    /// Flat shapes and nothing else: edges, but no code.
    static func rectangles() -> GrayFrame {
        var frame = QRFixture.blank()
        var random = TestRandom(state: 3)
        for _ in 0..<10 {
            let (w, h) = (random.next(in: 20...90), random.next(in: 20...70))
            let (x0, y0) = (random.next(in: 0...(320 - w)), random.next(in: 0...(240 - h)))
            let shade = UInt8(random.next(in: 20...235))
            for y in y0..<(y0 + h) { for x in x0..<(x0 + w) { frame.pixels[y * 320 + x] = shade } }
        }
        return ImageOps.noisy(frame, amplitude: 4)
    }

    @Test func zbarIsNotAskedWhenZXingReadsTheFrame() throws {
        let zbar = CountingZBar()
        let decoder = ZXingThenZBarDecoder(zbar: zbar)
        #expect(decoder.decode(try QRFixture.frame(VB1Vector.codes[0])).map(\.text) == [VB1Vector.codes[0]])
        #expect(zbar.calls == 0)
    }

    @Test func zbarIsNotAskedWhenNothingLooksLikeACode() {
        let zbar = CountingZBar()
        let decoder = ZXingThenZBarDecoder(zbar: zbar)
        #expect(decoder.decode(QRFixture.blank()) == [])
        #expect(decoder.decode(ImageOps.noisy(QRFixture.blank(), amplitude: 40)) == [])
        #expect(decoder.decode(Self.rectangles()) == [])
        #expect(zbar.calls == 0)
    }

    /// (The third code is lost to both at this size and blur.)
    @Test(arguments: 0..<2)
    func zbarReadsWhatZXingMisses(_ index: Int) throws {
        let code = VB1Vector.codes[index]
        let frame = try Self.smallBlurredCode(code)
        // The premise: this is a frame only zbar reads.
        #expect(ZXingDecoder().decode(frame) == [])
        #expect(ZBarDecoder().decode(frame).map(\.text) == [code])

        // By evidence: the region must persist, so the second frame of it is zbar's.
        let zbar = CountingZBar()
        let decoder = ZXingThenZBarDecoder(zbar: zbar)
        #expect(decoder.decode(frame) == [])
        #expect(decoder.decode(frame).map(\.text) == [code])
        #expect(zbar.calls == 1)
        // The hint alone (the arrangement before): the first frame.
        let hinted = CountingZBar()
        #expect(ZXingThenZBarDecoder(fallback: .whenHinted, zbar: hinted).decode(frame).map(\.text) == [code])
        #expect(hinted.calls == 1)
    }

    /// A code zbar cannot read either, held in view: after each vain try the place waits twice as
    /// long (8, 16, 32 frames), so zbar is asked 3 times in 30 frames, not on every one (it was,
    /// under the hint alone).
    @Test func aStubbornRegionCostsZBarOneFrameInEveryFew() throws {
        let frame = try Self.smallBlurredCode(VB1Vector.codes[2])
        #expect(ZBarDecoder().decode(frame) == [] && ZXingDecoder().decode(frame) == [], "the premise: neither reads it")
        // The schedule of turns is the same whether a turn looks at crops first or not; with the
        // whole frame alone each turn is one call, which is what is counted here.
        let zbar = CountingZBar()
        let decoder = ZXingThenZBarDecoder(fallback: .byEvidenceWholeFrame, zbar: zbar)
        for _ in 0..<30 { _ = decoder.decode(frame) }
        #expect(zbar.calls == 3, "frames 2, 10 and 26")
        let hinted = CountingZBar()
        let before = ZXingThenZBarDecoder(fallback: .whenHinted, zbar: hinted)
        for _ in 0..<30 { _ = before.decode(frame) }
        #expect(hinted.calls == 30)
    }

    /// Crop first: zbar looks at the region (a frame a fraction of the whole) and reads the small
    /// code there; where the crop reads nothing, every other turn looks at the whole frame too.
    @Test func cropFirstLooksAtTheRegionThenAtTheWholeFrameEveryOtherTurn() throws {
        let code = VB1Vector.codes[0]
        let frame = try Self.smallBlurredCode(code)
        let zbar = CountingZBar()
        let decoder = ZXingThenZBarDecoder(zbar: zbar)
        #expect(decoder.name == CodeDecoders.defaultName)
        #expect(decoder.decode(frame) == [])
        #expect(decoder.decode(frame).map(\.text) == [code])
        #expect(zbar.calls == 1)
        #expect(zbar.widths.allSatisfy { $0 < 320 }, "only the crop: \(zbar.widths)")

        // A code neither reads: turns at frames 2, 10 and 26 (as for the whole frame); the first
        // and third of them look at the whole frame after the crop.
        let stubborn = try Self.smallBlurredCode(VB1Vector.codes[2])
        let counted = CountingZBar()
        let again = ZXingThenZBarDecoder(zbar: counted)
        for _ in 0..<30 { _ = again.decode(stubborn) }
        #expect(counted.widths.filter { $0 == 320 }.count == 2, "\(counted.widths)")
        #expect(counted.widths.filter { $0 < 320 }.count >= 3, "\(counted.widths)")
    }

    @Test func aCropStaysInsideTheFrame() {
        var frame = QRFixture.blank()
        for index in frame.pixels.indices { frame.pixels[index] = UInt8(index % 251) }
        let corner = ZXingThenZBarDecoder.crop(frame, FrameRegion(x: 300, y: 220, width: 40, height: 40), margin: 0.5)
        #expect(corner.width == 40 && corner.height == 40)
        #expect(corner.pixels.first == frame.pixels[200 * 320 + 280])
        #expect(corner.pixels.count == 40 * 40)
        // A region wholly outside: the whole frame rather than nothing.
        #expect(ZXingThenZBarDecoder.crop(frame, FrameRegion(x: 400, y: 0, width: 8, height: 8), margin: 0).width == 320)
    }

    /// Where zxing just read a code, a blurred or moving view of the same card is not zbar's.
    @Test func zbarIsNotAskedWhereZXingJustReadACode() throws {
        let sharp = try QRFixture.frame(VB1Vector.codes[0])
        let blurred = ImageOps.boxBlurred(sharp, radius: 3)
        #expect(ZXingDecoder().decode(blurred) == [], "the premise: zxing cannot read the blurred frame")
        #expect(!CodeRegions.find(in: blurred).isEmpty, "…though it looks like a code")
        let zbar = CountingZBar()
        let decoder = ZXingThenZBarDecoder(fallback: .byEvidenceWholeFrame, zbar: zbar)  // one call a turn
        _ = decoder.decode(sharp)
        for _ in 0..<ZXingThenZBarDecoder.recentReadWindow - 1 { _ = decoder.decode(blurred) }
        #expect(zbar.calls == 0)
        // Past the window it is a code still in view and unread: zbar's turn.
        for _ in 0..<3 { _ = decoder.decode(blurred) }
        #expect(zbar.calls == 1)
    }

    /// Two codes in one frame, one only zbar reads: both are read (zxing's one alone used to be
    /// the answer, and zbar was not asked).
    @Test func aSecondCodeOnlyZBarReadsIsNotLost() throws {
        var pixels = [UInt8](repeating: 140, count: 640 * 240)
        QRFixture.draw(try QRFixture.modules(VB1Vector.codes[0]), scale: 4, at: 360, 20, into: &pixels, width: 640)
        var small = [UInt8](repeating: 140, count: 320 * 240)
        QRFixture.draw(try QRFixture.modules(VB1Vector.codes[1]), scale: 3, at: 40, 30, into: &small, width: 320)
        let blurredSmall = ImageOps.boxBlurred(GrayFrame(width: 320, height: 240, pixels: small, timestamp: .zero, sequence: 0), radius: 1)
        for y in 0..<240 { for x in 0..<320 { pixels[y * 640 + x] = blurredSmall.pixels[y * 320 + x] } }
        let frame = GrayFrame(width: 640, height: 240, pixels: pixels, timestamp: .zero, sequence: 0)
        #expect(ZXingDecoder().decode(frame).map(\.text) == [VB1Vector.codes[0]], "the premise: zxing reads one")
        let decoder = ZXingThenZBarDecoder()
        var read = Set<String>()
        for _ in 0..<2 { for symbol in decoder.decode(frame) { if let text = symbol.text { read.insert(text) } } }
        #expect(read == [VB1Vector.codes[0], VB1Vector.codes[1]])
        let hinted = ZXingThenZBarDecoder(fallback: .whenHinted)
        #expect(Set((0..<2).flatMap { _ in hinted.decode(frame).compactMap(\.text) }) == [VB1Vector.codes[0]])
    }

    @Test func withoutTheHintZBarIsAskedOnEveryFrameZXingCannotRead() {
        let zbar = CountingZBar()
        let decoder = ZXingThenZBarDecoder(fallback: .always, zbar: zbar)
        #expect(decoder.name == "zxing+zbar/always")
        #expect(decoder.decode(QRFixture.blank()) == [])
        #expect(decoder.decode(Self.rectangles()) == [])
        #expect(zbar.calls == 2)
    }

    @Test func aMalformedFrameGivesNothing() {
        let decoder = ZXingThenZBarDecoder()
        #expect(decoder.decode(GrayFrame(width: 10, height: 10, pixels: [1, 2, 3], timestamp: .zero, sequence: 0)) == [])
        #expect(decoder.decode(GrayFrame(width: 0, height: 0, pixels: [], timestamp: .zero, sequence: 0)) == [])
    }

    @Test func theRegistryNamesEachDecoder() throws {
        #expect(CodeDecoders.names == ["zxing+zbar", "zxing", "zbar"])
        #expect(try CodeDecoders.decoder(named: CodeDecoders.wholeFrameName).name == "zxing+zbar/whole")
        #expect(CodeDecoders.defaultName == "zxing+zbar")
        for name in CodeDecoders.names {
            let decoder = try CodeDecoders.decoder(named: name)
            #expect(decoder.name == name)
            #expect(decoder.decode(try QRFixture.frame(VB1Vector.codes[1])).map(\.text) == [VB1Vector.codes[1]])
        }
        #expect(try CodeDecoders.decoder(named: "zxing+zbar") is ZXingThenZBarDecoder)
        #expect(try CodeDecoders.decoder(named: "zxing") is ZXingDecoder)
        #expect(try CodeDecoders.decoder(named: "zbar") is ZBarDecoder)
    }

    @Test func anUnknownNameSaysWhichNamesThereAre() {
        #expect(throws: UnknownDecoder(name: "quirc")) { try CodeDecoders.decoder(named: "quirc") }
        #expect(UnknownDecoder(name: "quirc").description == "no QR decoder called 'quirc' (choose one of zxing+zbar, zxing, zbar)")
    }
}
