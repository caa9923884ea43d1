import HAL
import MediaSupport

/// What a benchmark frame shows.
enum Condition: String, CaseIterable {
    case clean, blurred, noisy, skewed, empty
}

struct Resolution: Hashable, CustomStringConvertible {
    var width: Int
    var height: Int
    var description: String { "\(width)x\(height)" }

    static let all = [Resolution(width: 640, height: 480), Resolution(width: 1280, height: 720),
                      Resolution(width: 1920, height: 1080)]
}

/// One frame of the fixed set and the payload it carries (nil for an empty frame).
struct BenchFrame {
    var resolution: Resolution
    var condition: Condition
    var frame: GrayFrame
    var payload: [UInt8]?
    var label: String
}

/// The benchmark's frames: the same every run for a given seed, so figures from two runs (or two
/// machines) are about the same pictures.
///
/// Each code is a real QR symbol from qrencode: even-numbered ones are VB1-shaped alphanumeric
/// codes (104 characters, as a backup shows them), odd-numbered ones 80 random bytes in byte mode.
/// Codes fill 25–60 % of the frame's height, printed dark on light under varied light (dark 15–80,
/// light 140–240), on a textured background (gradient, rectangles, sensor noise) so that empty
/// frames give the decoders something to look at, as a camera would.
enum FrameSet {
    static func make(seed: UInt64, perCondition: Int, resolutions: [Resolution] = Resolution.all) throws -> [BenchFrame] {
        var random = TestRandom(state: seed)
        var frames: [BenchFrame] = []
        var codeNumber = 0
        for resolution in resolutions {
            for condition in Condition.allCases {
                for index in 0..<perCondition {
                    var frame = background(resolution, random: &random)
                    frame.sequence = UInt64(frames.count)
                    var payload: [UInt8]?
                    if condition != .empty {
                        let (bytes, modules) = try code(number: codeNumber, random: &random)
                        codeNumber += 1
                        payload = bytes
                        frame = draw(modules, condition: condition, into: frame, random: &random)
                    }
                    // Every picture gets a little sensor noise; `noisy` gets a lot (in `draw`).
                    frame = ImageOps.noisy(frame, amplitude: 4, seed: random.next())
                    frames.append(BenchFrame(resolution: resolution, condition: condition, frame: frame, payload: payload,
                                             label: "\(resolution)-\(condition)-\(index)"))
                }
            }
        }
        return frames
    }

    static let hexDigits = Array("0123456789ABCDEF")
    static let alphanumeric = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:")

    static func code(number: Int, random: inout TestRandom) throws -> ([UInt8], [[Bool]]) {
        if number % 2 == 0 {
            let id = String((0..<8).map { _ in hexDigits[random.next(in: 0...15)] })
            let body = String((0..<87).map { _ in alphanumeric[random.next(in: 0...(alphanumeric.count - 1))] })
            let text = "VB1:\(id):1/1:" + body
            return (Array(text.utf8), try QRFixture.modules(text))
        } else {
            let bytes = (0..<80).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            return (bytes, try QRFixture.modules(bytes: bytes))
        }
    }

    /// A horizontal gradient with a dozen flat rectangles on it, and on every other frame a page
    /// of text (lines of dark dashes of random lengths): the kind of busy texture that looks a bit
    /// like a code to a cheap detector.
    static func background(_ resolution: Resolution, random: inout TestRandom) -> GrayFrame {
        let (width, height) = (resolution.width, resolution.height)
        let left = random.next(in: 90...170), right = random.next(in: 90...170)
        var pixels = [UInt8](repeating: 0, count: width * height)
        for x in 0..<width {
            let value = UInt8(left + (right - left) * x / width)
            for y in 0..<height { pixels[y * width + x] = value }
        }
        for _ in 0..<12 {
            let w = random.next(in: (width / 20)...(width / 4)), h = random.next(in: (height / 20)...(height / 4))
            let x0 = random.next(in: 0...(width - w)), y0 = random.next(in: 0...(height - h))
            let shade = UInt8(random.next(in: 40...220))
            for y in y0..<(y0 + h) {
                for x in x0..<(x0 + w) { pixels[y * width + x] = shade }
            }
        }
        if random.next() % 2 == 0 {
            let glyph = max(2, height / 160)  // letters a few pixels high, as a page across a room
            let w = random.next(in: (width / 6)...(width / 3)), h = random.next(in: (height / 6)...(height / 3))
            let x0 = random.next(in: 0...(width - w)), y0 = random.next(in: 0...(height - h))
            ImageOps.drawTextPage(into: &pixels, width: width, x0: x0, y0: y0, w: w, h: h, glyph: glyph, paper: 225, ink: 40,
                                  random: &random) { dx, random in (dx / glyph) % 2 == 0 || random.next() % 3 == 0 }
        }
        return GrayFrame(width: width, height: height, pixels: pixels, timestamp: .zero, sequence: 0)
    }

    static func draw(_ modules: [[Bool]], condition: Condition, into frame: GrayFrame, random: inout TestRandom) -> GrayFrame {
        var frame = frame
        let cardModules = modules.count + 8
        let targetSide = Double(frame.height) * Double(random.next(in: 25...60)) / 100
        let scale = max(2, Int(targetSide) / cardModules)
        let side = cardModules * scale
        let dark = UInt8(random.next(in: 15...80)), light = UInt8(random.next(in: 140...240))
        switch condition {
        case .skewed:
            // A card turned any way and tilted 25–45 % away from the camera, its top slid sideways.
            let corners = PerspectiveWarp.cardCorners(
                centreX: Double(frame.width) / 2 + Double(random.next(in: -frame.width / 8...frame.width / 8)),
                centreY: Double(frame.height) / 2 + Double(random.next(in: -frame.height / 16...frame.height / 16)),
                side: Double(side), degrees: Double(random.next(in: 0...359)),
                keystone: Double(random.next(in: 25...45)) / 100, shear: Double(random.next(in: -15...15)) / 100)
            PerspectiveWarp.draw(QRFixture.picture(modules, scale: scale, dark: dark, light: light), onto: &frame, corners: corners)
        default:
            let x = random.next(in: 0...(frame.width - side)), y = random.next(in: 0...(frame.height - side))
            QRFixture.draw(modules, scale: scale, at: x, y, into: &frame.pixels, width: frame.width, dark: dark, light: light)
        }
        switch condition {
        case .blurred:
            // Out of focus by a third to a half of a module.
            let radius = max(1, scale * random.next(in: 33...50) / 100)
            frame = ImageOps.boxBlurred(frame, radius: radius)
        case .noisy:
            frame = ImageOps.noisy(frame, amplitude: random.next(in: 35...55), seed: random.next())
        default:
            break
        }
        return frame
    }
}
