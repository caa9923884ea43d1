import HAL

extension FuzzInput {
    /// A camera frame of any size up to `maximumSide` on each side, with a stride a few bytes
    /// wider than the width or none, filled with the input's remaining bytes (repeated when
    /// they are fewer than the frame needs, zeros when there are none). Always consistent
    /// (`pixels.count == stride * height`), as a camera source hands frames over: what is
    /// fuzzed is what the pixels show, not a frame no source can make.
    ///
    /// Layout: width (u16), height (u16), stride padding (one byte, 0–3), then the pixels.
    public mutating func grayFrame(maximumSide: Int = 256) -> GrayFrame {
        let width = 1 + Int(u16()) % maximumSide
        let height = 1 + Int(u16()) % maximumSide
        let stride = width + Int(byte()) % 4
        let source = rest()
        var pixels = [UInt8](repeating: 0, count: stride * height)
        if !source.isEmpty {
            for index in pixels.indices { pixels[index] = source[index % source.count] }
        }
        return GrayFrame(width: width, height: height, stride: stride, pixels: pixels, timestamp: .zero, sequence: 0)
    }
}
