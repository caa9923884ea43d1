import Foundation
import HAL

/// A camera-like video of a printed backup, the same for the same seed: what a person pointing a
/// camera at a page of codes gives the decoders, for the decode benchmark's `--video` mode and
/// for tests of the decoder arrangement.
///
/// The story, shot by shot: a few seconds of desk (texture, a page of text, no code); then each
/// code of the set in a shuffled order, some shown twice and a stray non-backup code or two among
/// them. Each shot has a *move* (the card slides in from the side with motion blur along the
/// move, the exposure settling) and a *hold* (hand shake of a few pixels and a degree or two, the
/// card tilted away from the camera, focus hunting at first, light drifting); between some shots
/// the camera looks at the desk again. Every frame has a little sensor noise.
///
/// Besides every code's ordinary showing, some codes are shown once more in a hard way
/// (`Difficulty`): far from the camera (small), printed faintly (low contrast), or under a glare
/// that washes out part of the card. So the set can always be completed from the ordinary
/// showings, and what each decoder makes of the hard ones is counted apart.
public struct CameraVideo: Sendable {
    /// Changes whenever the same seed would draw other pictures: part of cached files' names.
    public static let version = 3

    /// How hard a showing is to read.
    public enum Difficulty: String, Sendable, Hashable, CaseIterable {
        case plain
        /// 12–22 % of the frame's height (2–3 pixels a module at 720p for a VB1 code).
        case far
        /// Ink and paper 30–75 levels apart instead of 80–220.
        case faint
        /// A bright reflection over a third to a half of the card, saturating at its middle.
        case glare
    }

    public struct Shot: Sendable, Hashable {
        /// What the card carries, or nil for a look at the desk.
        public var text: String?
        public var moveFrames: Int
        public var holdFrames: Int
        public var difficulty: Difficulty = .plain
    }

    public var width: Int
    public var height: Int
    public var framesPerSecond: Int
    public var shots: [Shot]
    public let seed: UInt64

    /// Every frame of the video in order.
    public var frameCount: Int { shots.reduce(0) { $0 + $1.moveFrames + $1.holdFrames } }

    /// Plans the story for `codes` (each shown at least once) and `strays`.
    public init(codes: [String], strays: [String], width: Int, height: Int, framesPerSecond: Int, seed: UInt64) {
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
        self.seed = seed
        var random = TestRandom(state: seed)
        func frames(_ seconds: ClosedRange<Int>) -> Int {
            // Tenths of a second.
            max(1, random.next(in: seconds) * framesPerSecond / 10)
        }
        var order = codes
        for code in codes where random.next(in: 0...99) < 30 { order.append(code) }
        order.append(contentsOf: strays)
        var showings = order.map { ($0, Difficulty.plain) }
        // About half the codes once more, the hard kinds in turn so that each comes up.
        let hard: [Difficulty] = [.far, .faint, .glare]
        var turn = random.next(in: 0...2)
        for code in codes where random.next(in: 0...99) < 50 {
            showings.append((code, hard[turn % hard.count]))
            turn += 1
        }
        for index in showings.indices.reversed() {
            let other = random.next(in: 0...index)
            showings.swapAt(index, other)
        }
        var shots = [Shot(text: nil, moveFrames: 0, holdFrames: frames(10...20))]
        for (text, difficulty) in showings {
            shots.append(Shot(text: text, moveFrames: frames(3...6), holdFrames: frames(6...12), difficulty: difficulty))
            if random.next(in: 0...99) < 25 { shots.append(Shot(text: nil, moveFrames: 0, holdFrames: frames(3...8))) }
        }
        self.shots = shots
    }

    /// Draws the frames one after the other and hands each to `body` (a 1080p video is about two
    /// megabytes a frame: nothing is kept).
    public func render(_ body: (GrayFrame) throws -> Void) throws {
        var random = TestRandom(state: seed ^ 0x5EED_F00D)
        let desk = Self.desk(width: width, height: height, random: &random)
        var symbols: [String: [[Bool]]] = [:]
        var sequence: UInt64 = 0
        var light = (gain: 1.0, offset: 0.0)
        for shot in shots {
            let modules: [[Bool]]?
            if let text = shot.text {
                if symbols[text] == nil { symbols[text] = try QRFixture.modules(text) }
                modules = symbols[text]
            } else {
                modules = nil
            }
            // Where the card rests, how big, how tilted, in what light.
            let side = Double(height) * Double(shot.difficulty == .far ? random.next(in: 12...22) : random.next(in: 30...70)) / 100
            let rest = PicturePoint(Double(width) / 2 + Double(random.next(in: -width / 8...width / 8)),
                                    Double(height) / 2 + Double(random.next(in: -height / 12...height / 12)))
            let turn = Double(random.next(in: -12...12))
            let keystone = Double(random.next(in: 0...30)) / 100
            let shear = Double(random.next(in: -8...8)) / 100
            let fromLeft = random.next() % 2 == 0
            var dark = UInt8(random.next(in: 15...70)), paper = UInt8(random.next(in: 150...235))
            if shot.difficulty == .faint {
                paper = UInt8(random.next(in: 150...200))
                dark = paper - UInt8(random.next(in: 30...75))
            }
            // Where on the card a glare sits (a fraction of the side from its centre) and how wide it is.
            let glare = shot.difficulty == .glare
                ? (dx: Double(random.next(in: -25...25)) / 100, dy: Double(random.next(in: -25...25)) / 100,
                   radius: Double(random.next(in: 30...50)) / 100) : nil
            let card = modules.map { modules in
                QRFixture.picture(modules, scale: max(2, Int(side) / (modules.count + 8) + 1), dark: dark, light: paper)
            }
            let targetLight = (gain: Double(random.next(in: 70...125)) / 100, offset: Double(random.next(in: -20...20)))
            let total = shot.moveFrames + shot.holdFrames
            for index in 0..<total {
                // Light drifts a tenth of the way to its target each frame.
                light.gain += (targetLight.gain - light.gain) * 0.1
                light.offset += (targetLight.offset - light.offset) * 0.1
                var frame = desk
                frame.sequence = sequence
                frame.timestamp = .milliseconds(Int64(sequence) * 1000 / Int64(framesPerSecond))
                if let card {
                    let moving = index < shot.moveFrames
                    // The move: from off-frame to the rest position, eased; then shake about it.
                    let progress = moving ? Double(index + 1) / Double(shot.moveFrames) : 1
                    let eased = 1 - (1 - progress) * (1 - progress)
                    let start = fromLeft ? -side : Double(width) + side
                    let shakeX = moving ? 0 : Double(random.next(in: -30...30)) / 10
                    let shakeY = moving ? 0 : Double(random.next(in: -30...30)) / 10
                    let x = start + (rest.x - start) * eased + shakeX
                    let corners = PerspectiveWarp.cardCorners(centreX: x, centreY: rest.y + shakeY, side: side,
                                                              degrees: turn + Double(random.next(in: -15...15)) / 10,
                                                              keystone: keystone, shear: shear)
                    PerspectiveWarp.draw(card, onto: &frame, corners: corners)
                    if let glare {
                        Self.glare(&frame, centreX: x + glare.dx * side, centreY: rest.y + shakeY + glare.dy * side, radius: glare.radius * side)
                    }
                    if moving {
                        // The distance moved during the exposure (half the frame interval).
                        let speed = abs(rest.x - start) * 2 * (1 - progress) / Double(max(1, shot.moveFrames))
                        Self.motionBlur(&frame, length: max(1, Int(speed / 2)))
                    } else {
                        // Focus hunts for the first third of a second of the hold, then settles.
                        let settle = framesPerSecond / 3
                        let hold = index - shot.moveFrames
                        if hold < settle {
                            Self.defocus(&frame, radius: max(1, (settle - hold) * max(2, height / 240) / max(1, settle)))
                        }
                    }
                }
                Self.expose(&frame, gain: light.gain, offset: light.offset, noise: 5, random: &random)
                try body(frame)
                sequence += 1
            }
        }
    }

    // MARK: drawing

    /// The desk the camera looks at: a gradient, flat shapes, and on it a page of text.
    static func desk(width: Int, height: Int, random: inout TestRandom) -> GrayFrame {
        var pixels = [UInt8](repeating: 0, count: width * height)
        let left = random.next(in: 80...150), right = random.next(in: 80...150)
        for y in 0..<height {
            for x in 0..<width { pixels[y * width + x] = UInt8(left + (right - left) * x / width) }
        }
        for _ in 0..<10 {
            let w = random.next(in: (width / 16)...(width / 4)), h = random.next(in: (height / 16)...(height / 4))
            let x0 = random.next(in: 0...(width - w)), y0 = random.next(in: 0...(height - h))
            let shade = UInt8(random.next(in: 40...200))
            for y in y0..<(y0 + h) {
                for x in x0..<(x0 + w) { pixels[y * width + x] = shade }
            }
        }
        // A page of text: lines of dark dashes a few pixels high.
        let glyph = max(2, height / 150)
        let w = width / 3, h = height / 2
        let x0 = random.next(in: 0...(width - w)), y0 = random.next(in: 0...(height - h))
        ImageOps.drawTextPage(into: &pixels, width: width, x0: x0, y0: y0, w: w, h: h, glyph: glyph, paper: 220, ink: 45,
                              random: &random) { dx, _ in (dx / glyph) % 2 == 0 }
        return GrayFrame(width: width, height: height, pixels: pixels, timestamp: .zero, sequence: 0)
    }

    /// A horizontal box blur of `length` pixels (running sums: cost independent of the length).
    static func motionBlur(_ frame: inout GrayFrame, length: Int) {
        guard length > 1 else { return }
        let (width, height, stride) = (frame.width, frame.height, frame.stride)
        let half = length / 2
        var row = [Int](repeating: 0, count: width + 1)
        frame.pixels.withUnsafeMutableBufferPointer { pixels in
            for y in 0..<height {
                let base = y * stride
                for x in 0..<width { row[x + 1] = row[x] + Int(pixels[base + x]) }
                for x in 0..<width {
                    let a = max(0, x - half), b = min(width, x + half + 1)
                    pixels[base + x] = UInt8((row[b] - row[a]) / (b - a))
                }
            }
        }
    }

    /// Out of focus: a separable (2r+1)² box blur.
    static func defocus(_ frame: inout GrayFrame, radius: Int) {
        guard radius > 0 else { return }
        motionBlur(&frame, length: 2 * radius + 1)
        let (width, height, stride) = (frame.width, frame.height, frame.stride)
        var column = [Int](repeating: 0, count: height + 1)
        frame.pixels.withUnsafeMutableBufferPointer { pixels in
            for x in 0..<width {
                for y in 0..<height { column[y + 1] = column[y] + Int(pixels[y * stride + x]) }
                for y in 0..<height {
                    let a = max(0, y - radius), b = min(height, y + radius + 1)
                    pixels[y * stride + x] = UInt8((column[b] - column[a]) / (b - a))
                }
            }
        }
    }

    /// A reflection: up to +200 levels at the centre, falling off smoothly to nothing at `radius`.
    static func glare(_ frame: inout GrayFrame, centreX: Double, centreY: Double, radius: Double) {
        guard radius >= 1 else { return }
        let (width, height, stride) = (frame.width, frame.height, frame.stride)
        let x0 = max(0, Int(centreX - radius)), x1 = min(width - 1, Int(centreX + radius))
        let y0 = max(0, Int(centreY - radius)), y1 = min(height - 1, Int(centreY + radius))
        guard x0 <= x1, y0 <= y1 else { return }
        frame.pixels.withUnsafeMutableBufferPointer { pixels in
            for y in y0...y1 {
                for x in x0...x1 {
                    let (dx, dy) = (Double(x) - centreX, Double(y) - centreY)
                    let falloff = 1 - (dx * dx + dy * dy) / (radius * radius)
                    guard falloff > 0 else { continue }
                    let index = y * stride + x
                    pixels[index] = UInt8(clamping: Int(pixels[index]) + Int(200 * falloff * falloff))
                }
            }
        }
    }

    /// Which shot each frame belongs to, in order (for counting what was read during each).
    public var shotOfEachFrame: [Int] {
        shots.enumerated().flatMap { index, shot in Array(repeating: index, count: shot.moveFrames + shot.holdFrames) }
    }

    /// The sensor: exposure (gain and offset) and ±`noise` of grain.
    static func expose(_ frame: inout GrayFrame, gain: Double, offset: Double, noise: Int, random: inout TestRandom) {
        var table = [UInt8](repeating: 0, count: 256)
        for value in 0..<256 { table[value] = UInt8(clamping: Int((Double(value) * gain + offset).rounded())) }
        var state = random.next() | 1
        frame.pixels.withUnsafeMutableBufferPointer { pixels in
            for index in pixels.indices {
                // xorshift: cheap grain, the same for the same seed.
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                let grain = Int(state % UInt64(2 * noise + 1)) - noise
                pixels[index] = UInt8(clamping: Int(table[Int(pixels[index])]) + grain)
            }
        }
    }
}
