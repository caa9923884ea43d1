import Foundation
import HAL

/// A camera-like video of one printed page carrying several codes, held up to the camera for
/// the whole video: what a person does with a printed backup, and what `CameraVideo` (cards shown
/// one at a time, moving in and out) does not show. The codes stay in view in almost every frame,
/// so a decoder that reads every frame afresh pays for the same codes again and again.
///
/// The story: half a second of desk; the page comes in from below with motion blur; it is held
/// (focus hunting at first, light drifting) in one of three ways (`Motion`); at the end it leaves.
public struct PageVideo: Sendable {
    /// Changes whenever the same seed would draw other pictures: part of cached files' names.
    public static let version = 1

    /// How the page is held.
    public enum Motion: String, Sendable, CaseIterable {
        /// Propped up: only sensor noise and light change.
        case still
        /// Held steadily while slowly sliding and turning (a few pixels and a tenth of a degree a frame).
        case drift
        /// Held in a hand: every frame moves by up to ±3 pixels and ±1.5°, around a slow drift.
        case shake
    }

    public var codes: [String]
    public var motion: Motion
    public var width: Int
    public var height: Int
    public var framesPerSecond: Int
    public var seconds: Int
    public let seed: UInt64

    public init(codes: [String], motion: Motion, width: Int = 1280, height: Int = 720, framesPerSecond: Int = 20, seconds: Int = 10,
                seed: UInt64) {
        self.codes = codes
        self.motion = motion
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
        self.seconds = seconds
        self.seed = seed
    }

    public var frameCount: Int { seconds * framesPerSecond }

    /// The page: the codes in two rows (one for four or fewer) on white paper, each with its
    /// quiet zone and a line of text under it.
    func page() throws -> GrayFrame {
        let rows = codes.count <= 4 ? 1 : 2
        let columns = (codes.count + rows - 1) / rows
        let symbols = try codes.map { try QRFixture.modules($0) }
        let side = symbols.map(\.count).max() ?? 21
        let scale = 4
        let block = (side + 8) * scale
        let margin = 3 * scale
        let pitchX = block + scale, pitchY = block + 4 * scale
        let pageWidth = columns * pitchX + 2 * margin
        let pageHeight = rows * pitchY + 2 * margin
        var pixels = [UInt8](repeating: 228, count: pageWidth * pageHeight)
        var random = TestRandom(state: seed ^ 0xFA6E)
        for (index, modules) in symbols.enumerated() {
            let (row, column) = index.quotientAndRemainder(dividingBy: columns)
            let x = margin + column * pitchX + (side - modules.count) * scale / 2
            let y = margin + row * pitchY
            QRFixture.draw(modules, scale: scale, at: x, y, into: &pixels, width: pageWidth, dark: 30, light: 228)
            ImageOps.drawTextPage(into: &pixels, width: pageWidth, x0: x + 4 * scale, y0: y + (modules.count + 8) * scale,
                                  w: modules.count * scale, h: 3 * scale, glyph: 2, paper: 228, ink: 60,
                                  random: &random) { dx, _ in (dx / 2) % 3 != 0 }
        }
        return GrayFrame(width: pageWidth, height: pageHeight, pixels: pixels, timestamp: .zero, sequence: 0)
    }

    /// Draws every frame in order and hands each to `body`.
    public func render(_ body: (GrayFrame) throws -> Void) throws {
        var random = TestRandom(state: seed ^ 0x9A6E_F11E)
        let desk = CameraVideo.desk(width: width, height: height, random: &random)
        let picture = try page()
        // The page fills about 85 % of the frame's width or height, whichever it reaches first.
        let fit = min(Double(width) * 0.85 / Double(picture.width), Double(height) * 0.85 / Double(picture.height))
        let pageWidth = Double(picture.width) * fit, pageHeight = Double(picture.height) * fit
        let rest = PicturePoint(Double(width) / 2 + Double(random.next(in: -width / 16...width / 16)), Double(height) / 2)
        let arrive = framesPerSecond / 2, enter = max(2, framesPerSecond * 2 / 5)
        let leave = frameCount - framesPerSecond / 2
        var light = (gain: 0.8, offset: 10.0)
        let target = (gain: Double(random.next(in: 90...115)) / 100, offset: Double(random.next(in: -10...10)))
        let settle = framesPerSecond / 3
        for index in 0..<frameCount {
            light.gain += (target.gain - light.gain) * 0.05
            light.offset += (target.offset - light.offset) * 0.05
            var frame = desk
            frame.sequence = UInt64(index)
            frame.timestamp = .milliseconds(Int64(index) * 1000 / Int64(framesPerSecond))
            if index >= arrive && index < leave {
                let held = index - arrive
                let entering = held < enter
                let progress = entering ? Double(held + 1) / Double(enter) : 1
                let eased = 1 - (1 - progress) * (1 - progress)
                let startY = Double(height) + pageHeight / 2
                var x = rest.x, y = startY + (rest.y - startY) * eased, degrees = 2.0
                let t = Double(max(0, held - enter))
                switch motion {
                case .still: break
                case .drift:
                    x += 0.15 * t * Double(width) / 640
                    y += 0.05 * t * Double(height) / 480
                    degrees += 0.01 * t
                case .shake:
                    x += 0.05 * t + Double(random.next(in: -30...30)) / 10
                    y += Double(random.next(in: -30...30)) / 10
                    degrees += Double(random.next(in: -15...15)) / 10
                }
                let corners = Self.pageCorners(centreX: x, centreY: y, width: pageWidth, height: pageHeight, degrees: degrees)
                PerspectiveWarp.draw(picture, onto: &frame, corners: corners)
                if entering {
                    CameraVideo.motionBlur(&frame, length: max(1, Int(abs(startY - rest.y) / Double(enter) / 4)))
                } else if held - enter < settle {
                    CameraVideo.defocus(&frame, radius: max(1, (settle - (held - enter)) * max(2, height / 240) / max(1, settle)))
                }
            }
            CameraVideo.expose(&frame, gain: light.gain, offset: light.offset, noise: 5, random: &random)
            try body(frame)
        }
    }

    /// A rectangle's corners, turned by `degrees` about its centre (clockwise from top-left).
    static func pageCorners(centreX: Double, centreY: Double, width: Double, height: Double, degrees: Double) -> [PicturePoint] {
        let angle = degrees * .pi / 180
        let (c, s) = (cos(angle), sin(angle))
        return [(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)].map { dx, dy in
            let (px, py) = (dx * width, dy * height)
            return PicturePoint(centreX + px * c - py * s, centreY + px * s + py * c)
        }
    }
}
