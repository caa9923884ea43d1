import Foundation
import HAL
import Testing
@testable import Capture

@Suite struct ZBarDecoderTests {
    @Test func qrencodeUsesAlphanumericModeForVB1Codes() throws {
        // 104 characters at level M: version 5 (37 modules) in alphanumeric mode; byte mode would need version 6.
        for code in VB1Vector.codes {
            #expect(try QRFixture.modules(code).count == 37)
        }
    }

    @Test(arguments: 0..<3)
    func decodesEachSpecCodeToItsExactBytes(_ index: Int) throws {
        let code = VB1Vector.codes[index]
        let symbols = ZBarDecoder().decode(try QRFixture.frame(code))
        #expect(symbols == [DecodedSymbol(bytes: Array(code.utf8))])
        #expect(symbols.first?.text == code)
    }

    @Test func spacesInsideTheThirdCodeAreData() throws {
        let code = VB1Vector.codes[2]
        let symbol = try #require(ZBarDecoder().decode(try QRFixture.frame(code)).first)
        #expect(symbol.bytes.filter { $0 == 0x20 }.count == 4)
        #expect(symbol.bytes.count == 104)
    }

    @Test func decodesThroughNoise() throws {
        let decoder = ZBarDecoder()
        for (index, code) in VB1Vector.codes.enumerated() {
            let frame = ImageOps.noisy(try QRFixture.frame(code), amplitude: 40, seed: UInt64(index + 1))
            #expect(decoder.decode(frame).map(\.text) == [code])
        }
    }

    @Test func decodesABlurredPicture() throws {
        let decoder = ZBarDecoder()
        for code in VB1Vector.codes {
            let frame = ImageOps.boxBlurred(try QRFixture.frame(code, scale: 5), radius: 1)
            #expect(frame != (try QRFixture.frame(code, scale: 5)))
            #expect(decoder.decode(frame).map(\.text) == [code])
        }
    }

    @Test func decodesBlurAndNoiseTogether() throws {
        let decoder = ZBarDecoder()
        for (index, code) in VB1Vector.codes.enumerated() {
            let frame = ImageOps.noisy(ImageOps.boxBlurred(try QRFixture.frame(code), radius: 1), amplitude: 15, seed: UInt64(index + 9))
            #expect(decoder.decode(frame).map(\.text) == [code])
        }
    }

    @Test func honoursStride() throws {
        let frame = ImageOps.padded(try QRFixture.frame(VB1Vector.codes[0]), padding: 13)
        #expect(frame.stride == 333)
        #expect(ZBarDecoder().decode(frame).map(\.text) == [VB1Vector.codes[0]])
    }

    @Test func findsTwoCodesInOneFrame() throws {
        var pixels = [UInt8](repeating: 140, count: 480 * 240)
        QRFixture.draw(try QRFixture.modules(VB1Vector.codes[0]), scale: 4, at: 10, 20, into: &pixels, width: 480)
        QRFixture.draw(try QRFixture.modules(VB1Vector.codes[1]), scale: 4, at: 260, 20, into: &pixels, width: 480)
        let symbols = ZBarDecoder().decode(GrayFrame(width: 480, height: 240, pixels: pixels, timestamp: .zero, sequence: 0))
        #expect(Set(symbols.compactMap(\.text)) == Set(VB1Vector.codes[0...1]))
    }

    @Test func aFrameWithoutACodeGivesNothing() {
        let decoder = ZBarDecoder()
        #expect(decoder.decode(QRFixture.blank()) == [])
        #expect(decoder.decode(ImageOps.noisy(QRFixture.blank(), amplitude: 120)) == [])
    }

    @Test func malformedFramesGiveNothingRatherThanCrash() {
        let decoder = ZBarDecoder()
        #expect(decoder.decode(GrayFrame(width: 10, height: 10, pixels: [1, 2, 3], timestamp: .zero, sequence: 0)) == [])
        #expect(decoder.decode(GrayFrame(width: 0, height: 0, pixels: [], timestamp: .zero, sequence: 0)) == [])
        #expect(decoder.decode(GrayFrame(width: 10, height: 2, stride: 5, pixels: [UInt8](repeating: 0, count: 20), timestamp: .zero, sequence: 0)) == [])
    }

    @Test func oneDecoderIsSafeFromManyTasks() async throws {
        let decoder = ZBarDecoder()
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
}
