import HAL
import Testing
@testable import Capture

/// Every decoder `CodeDecoders` offers, on real qrencode symbols: the exact bytes back, whether
/// the code is alphanumeric (VB1) or binary, clean, blurred, noisy or seen at an angle.
@Suite struct DecoderPayloadTests {
    /// 80 bytes that are not text: NUL, 0xFF, a lone UTF-8 continuation byte, CR/LF, and then a
    /// fixed pseudo-random tail.
    static let binaryPayload: [UInt8] = {
        var random = TestRandom(state: 77)
        return [0x00, 0xFF, 0x80, 0x0D, 0x0A, 0x00] + (0..<74).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }()

    enum Payload: String, CaseIterable, CustomTestStringConvertible {
        case vb1First, vb1Second, vb1Third, binary
        var bytes: [UInt8] {
            switch self {
            case .vb1First: Array(VB1Vector.codes[0].utf8)
            case .vb1Second: Array(VB1Vector.codes[1].utf8)
            case .vb1Third: Array(VB1Vector.codes[2].utf8)
            case .binary: DecoderPayloadTests.binaryPayload
            }
        }
        func modules() throws -> [[Bool]] {
            switch self {
            case .binary: try QRFixture.modules(bytes: bytes)
            default: try QRFixture.modules(String(decoding: bytes, as: UTF8.self))
            }
        }
        var testDescription: String { rawValue }
    }

    static func frame(_ modules: [[Bool]], scale: Int = 4) -> GrayFrame {
        var pixels = [UInt8](repeating: 140, count: 320 * 240)
        let side = (modules.count + 8) * scale
        QRFixture.draw(modules, scale: scale, at: (320 - side) / 2, (240 - side) / 2, into: &pixels, width: 320)
        return GrayFrame(width: 320, height: 240, pixels: pixels, timestamp: .zero, sequence: 0)
    }

    static let decoderNames = ["zbar", "zxing", "zxing+zbar"]

    @Test func theBinaryPayloadIsNotText() throws {
        #expect(String(validating: Self.binaryPayload, as: UTF8.self) == nil)
        // Byte mode at level M holds 84 bytes in version 5 (37 modules).
        #expect(try QRFixture.modules(bytes: Self.binaryPayload).count == 37)
    }

    @Test(arguments: decoderNames, Payload.allCases)
    func readsACleanCodeExactly(_ name: String, _ payload: Payload) throws {
        let decoder = try CodeDecoders.decoder(named: name)
        let symbols = decoder.decode(Self.frame(try payload.modules()))
        #expect(symbols == [DecodedSymbol(bytes: payload.bytes)])
    }

    @Test(arguments: decoderNames, Payload.allCases)
    func readsABlurredCodeExactly(_ name: String, _ payload: Payload) throws {
        let decoder = try CodeDecoders.decoder(named: name)
        let sharp = Self.frame(try payload.modules(), scale: 5)
        let blurred = ImageOps.boxBlurred(sharp, radius: 1)
        #expect(blurred != sharp)
        #expect(decoder.decode(blurred) == [DecodedSymbol(bytes: payload.bytes)])
    }

    @Test(arguments: decoderNames, Payload.allCases)
    func readsANoisyCodeExactly(_ name: String, _ payload: Payload) throws {
        let decoder = try CodeDecoders.decoder(named: name)
        let noisy = ImageOps.noisy(Self.frame(try payload.modules()), amplitude: 40, seed: 11)
        #expect(decoder.decode(noisy) == [DecodedSymbol(bytes: payload.bytes)])
    }

    /// Turned 20° and tilted a little: every decoder copes.
    @Test(arguments: decoderNames, Payload.allCases)
    func readsASlightlyTiltedCodeExactly(_ name: String, _ payload: Payload) throws {
        let decoder = try CodeDecoders.decoder(named: name)
        let corners = PerspectiveWarp.cardCorners(centreX: 160, centreY: 120, side: 200, degrees: 20, keystone: 0.1)
        let frame = QRFixture.frame(try payload.modules(), corners: corners, width: 320, height: 240)
        #expect(decoder.decode(frame) == [DecodedSymbol(bytes: payload.bytes)])
    }

    /// Turned 30°, its top leaning well away (30 % shorter than its bottom) and slid sideways: zbar
    /// loses it, zxing reads it, and so does the arrangement (zxing answers first).
    @Test(arguments: Payload.allCases)
    func onlyZXingReadsAStronglySkewedCode(_ payload: Payload) throws {
        let corners = PerspectiveWarp.cardCorners(centreX: 160, centreY: 120, side: 200, degrees: 30, keystone: 0.3, shear: 0.1)
        let frame = QRFixture.frame(try payload.modules(), corners: corners, width: 320, height: 240)
        #expect(ZBarDecoder().decode(frame) == [])
        #expect(ZXingDecoder().decode(frame) == [DecodedSymbol(bytes: payload.bytes)])
        #expect(ZXingThenZBarDecoder().decode(frame) == [DecodedSymbol(bytes: payload.bytes)])
    }
}
