import HAL

/// A frame shrunk to a few thousand pixels, for drawing it in a terminal and for judging its light.
///
/// Each thumbnail pixel is the mean of a sample of the box of frame pixels it stands for (every
/// `sampleStep`-th pixel of every `sampleStep`-th row, at most 8×8 samples a box), so a 1920×1080
/// frame costs a few thousand reads rather than two million: about what one decoder row costs.
package struct FrameThumbnail: Sendable, Hashable {
    /// Thumbnail width in pixels, as asked for.
    public let width: Int
    /// Thumbnail height in pixels, as asked for.
    public let height: Int
    /// `width × height` grey levels, row by row with no padding.
    public let pixels: [UInt8]

    /// nil for a frame whose size, stride and pixel count disagree, or a size under 1×1.
    package init?(frame: GrayFrame, width: Int, height: Int) {
        guard width > 0, height > 0, frame.width > 0, frame.height > 0, frame.stride >= frame.width,
              frame.pixels.count >= frame.stride * (frame.height - 1) + frame.width else { return nil }
        self.width = width
        self.height = height
        var out = [UInt8](repeating: 0, count: width * height)
        frame.pixels.withUnsafeBufferPointer { source in
            for ty in 0..<height {
                let top = ty * frame.height / height
                let bottom = max(top + 1, (ty + 1) * frame.height / height)
                let stepY = max(1, (bottom - top) / 8)
                for tx in 0..<width {
                    let left = tx * frame.width / width
                    let right = max(left + 1, (tx + 1) * frame.width / width)
                    let stepX = max(1, (right - left) / 8)
                    var sum = 0, count = 0
                    var y = top
                    while y < min(bottom, frame.height) {
                        var x = left
                        let row = y * frame.stride
                        while x < min(right, frame.width) {
                            sum += Int(source[row + x])
                            count += 1
                            x += stepX
                        }
                        y += stepY
                    }
                    out[ty * width + tx] = UInt8(count == 0 ? 0 : sum / count)
                }
            }
        }
        pixels = out
    }
}

/// How bright a picture (or a part of it) is, and how much it varies.
package struct LightLevels: Sendable, Hashable {
    package var mean: Int
    /// The 5th and 95th percentiles: the spread between them is the picture's usable contrast.
    package var low: Int
    package var high: Int

    package init(mean: Int, low: Int, high: Int) {
        self.mean = mean
        self.low = low
        self.high = high
    }

    package var spread: Int { high - low }

    /// The levels of `region` of `frame` (the whole frame when nil), from about `samples` pixels
    /// spread evenly over it, so a whole 1080p frame costs what a 64×64 patch does. Zero levels
    /// for a malformed frame or an empty region.
    package static func measure(_ frame: GrayFrame, in region: FrameRegion? = nil, samples: Int = 4096) -> LightLevels {
        let area = region ?? FrameRegion(x: 0, y: 0, width: frame.width, height: frame.height)
        let x0 = max(0, area.x), y0 = max(0, area.y)
        let x1 = min(frame.width, area.x + area.width), y1 = min(frame.height, area.y + area.height)
        guard x1 > x0, y1 > y0, frame.stride >= frame.width,
              frame.pixels.count >= frame.stride * (frame.height - 1) + frame.width else { return LightLevels(mean: 0, low: 0, high: 0) }
        // One sample every `step` pixels across and down: about `samples` in all.
        var step = 1
        while (x1 - x0) / step * ((y1 - y0) / step) > max(1, samples) { step += 1 }
        var histogram = [Int](repeating: 0, count: 256)
        var sum = 0, count = 0
        frame.pixels.withUnsafeBufferPointer { pixels in
            var y = y0
            while y < y1 {
                var x = x0
                let row = y * frame.stride
                while x < x1 {
                    let value = Int(pixels[row + x])
                    histogram[value] += 1
                    sum += value
                    count += 1
                    x += step
                }
                y += step
            }
        }
        func percentile(_ fraction: Double) -> Int {
            let rank = max(1, Int((Double(count) * fraction).rounded(.up)))
            var seen = 0
            for (value, n) in histogram.enumerated() {
                seen += n
                if seen >= rank { return value }
            }
            return 255
        }
        return LightLevels(mean: sum / max(1, count), low: percentile(0.05), high: percentile(0.95))
    }
}
