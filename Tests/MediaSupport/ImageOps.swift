import HAL

/// Deterministic pseudo-random numbers (tests and benchmarks must repeat exactly).
public struct TestRandom {
    public var state: UInt64

    public init(state: UInt64) { self.state = state }

    public mutating func next() -> UInt64 {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return state >> 33
    }

    public mutating func next(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }
}

/// What a real camera does to a clean picture: noise, defocus, padded rows.
public enum ImageOps {
    /// Adds uniform noise of ±amplitude to every pixel.
    public static func noisy(_ frame: GrayFrame, amplitude: Int, seed: UInt64 = 42) -> GrayFrame {
        var random = TestRandom(state: seed)
        var out = frame
        out.pixels = frame.pixels.map { UInt8(clamping: Int($0) + random.next(in: -amplitude...amplitude)) }
        return out
    }

    /// A (2r+1)×(2r+1) box filter: an out-of-focus camera.
    public static func boxBlurred(_ frame: GrayFrame, radius: Int) -> GrayFrame {
        var out = frame
        for y in 0..<frame.height {
            for x in 0..<frame.width {
                var sum = 0
                var count = 0
                for dy in -radius...radius {
                    for dx in -radius...radius {
                        let sx = x + dx
                        let sy = y + dy
                        guard sx >= 0, sy >= 0, sx < frame.width, sy < frame.height else { continue }
                        sum += Int(frame.pixels[sy * frame.stride + sx])
                        count += 1
                    }
                }
                out.pixels[y * frame.stride + x] = UInt8(sum / count)
            }
        }
        return out
    }

    /// A page of text on a desk: a light rectangle `w`×`h` at (`x0`, `y0`) with lines of dark dashes
    /// `glyph` pixels high (each dash drawn where `keep` says, for ragged letters), the busy texture
    /// that looks a bit like a code to a cheap detector.
    public static func drawTextPage(into pixels: inout [UInt8], width: Int, x0: Int, y0: Int, w: Int, h: Int, glyph: Int,
                                    paper: UInt8, ink: UInt8, random: inout TestRandom, keep: (Int, inout TestRandom) -> Bool) {
        for y in y0..<(y0 + h) {
            for x in x0..<(x0 + w) { pixels[y * width + x] = paper }
        }
        var y = y0 + glyph
        while y + 2 * glyph < y0 + h {
            var x = x0 + glyph
            while x + glyph < x0 + w {
                let word = random.next(in: 2...8) * glyph
                for dy in 0..<(2 * glyph) {
                    for dx in 0..<min(word, x0 + w - x) where keep(dx, &random) {
                        pixels[(y + dy) * width + x + dx] = ink
                    }
                }
                x += word + 2 * glyph
            }
            y += 4 * glyph
        }
    }

    /// The same picture with `padding` junk bytes after every row.
    public static func padded(_ frame: GrayFrame, padding: Int) -> GrayFrame {
        var pixels: [UInt8] = []
        for row in 0..<frame.height {
            pixels.append(contentsOf: frame.pixels[(row * frame.stride)..<(row * frame.stride + frame.width)])
            pixels.append(contentsOf: (0..<padding).map { UInt8(($0 * 37 + row) & 0xFF) })
        }
        return GrayFrame(width: frame.width, height: frame.height, stride: frame.width + padding, pixels: pixels,
                         timestamp: frame.timestamp, sequence: frame.sequence)
    }
}
