import HAL

/// A rectangle of a frame, in pixels.
public struct FrameRegion: Hashable, Sendable {
    /// Left edge, in pixels from the frame's left.
    public var x: Int
    /// Top edge, in pixels from the frame's top.
    public var y: Int
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Memberwise; the values are not checked against any frame.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
}

/// Where in a frame a 2D code probably is, found in a fraction of the time a decoder takes: the
/// hint that decides whether a second, slower decoder is worth running on a frame.
///
/// A QR code is a patch where the picture flips between dark and light over and over, across and
/// down, with more contrast than the sensor's noise. The frame is cut into cells (8 pixels, more
/// on large frames so that a cell still spans several modules); a cell is *busy* when its contrast
/// stands out from the frame's typical cell (so noise alone does not count) and its sampled rows
/// and columns both cross from dark to light. Busy cells that touch form regions; a region counts
/// when it is big enough and busy enough across its bounding box, as a symbol is. The edges of flat shapes (a door frame, a
/// table edge) make thin lines or lone corners of busy cells, which never fill a region.
///
/// About a quarter of the pixels are read: 0.1–0.6 ms per frame from 640×480 to 1920×1080
/// (`scripts/bench-decode`).
public enum CodeRegions {
    /// The likeliest code regions, most busy cells first, at most `limit` of them.
    public static func find(in frame: GrayFrame, limit: Int = 2) -> [FrameRegion] {
        guard let grid = busyCells(in: frame) else { return [] }
        let cell = grid.cell
        return regions(grid.busy, columns: grid.columns, rows: grid.rows)
            .prefix(limit)
            .map { FrameRegion(x: $0.x * cell, y: $0.y * cell, width: $0.width * cell, height: $0.height * cell) }
    }

    /// Which cells are busy, row by row; nil for a frame too small (or malformed) to cut into 3×3 cells.
    static func busyCells(in frame: GrayFrame) -> (cell: Int, columns: Int, rows: Int, busy: [Bool])? {
        let cell = max(8, (min(frame.width, frame.height) / 60) & ~1)
        let columns = frame.width / cell, rows = frame.height / cell
        guard columns >= 3, rows >= 3, frame.stride >= frame.width,
              frame.pixels.count >= frame.stride * (frame.height - 1) + frame.width else { return nil }

        var busy = [Bool](repeating: false, count: columns * rows)
        frame.pixels.withUnsafeBufferPointer { pixels in
            var low = [UInt8](repeating: 0, count: columns * rows)
            var high = [UInt8](repeating: 0, count: columns * rows)
            for row in 0..<rows {
                for column in 0..<columns {
                    let (dark, light) = extremes(pixels, stride: frame.stride, x: column * cell, y: row * cell, side: cell)
                    low[row * columns + column] = dark
                    high[row * columns + column] = light
                }
            }
            // Twice the typical (median) cell's contrast, and never less than a faint print's:
            // noise and gradients make every cell somewhat contrasty, a code much more so.
            var histogram = [Int](repeating: 0, count: 256)
            for index in low.indices { histogram[Int(high[index] - low[index])] += 1 }
            var typical = 0, counted = 0
            while counted + histogram[typical] <= low.count / 2 {
                counted += histogram[typical]
                typical += 1
            }
            let threshold = max(40, typical * 2)
            for index in low.indices where Int(high[index] - low[index]) >= threshold {
                let (row, column) = index.quotientAndRemainder(dividingBy: columns)
                busy[index] = flipsBothWays(pixels, stride: frame.stride, x: column * cell, y: row * cell, side: cell,
                                            dark: Int(low[index]), light: Int(high[index]))
            }
        }
        return (cell, columns, rows, busy)
    }

    /// The darkest and lightest of every other pixel of every other row of one cell.
    @inline(__always)
    static func extremes(_ pixels: UnsafeBufferPointer<UInt8>, stride: Int, x: Int, y: Int, side: Int) -> (UInt8, UInt8) {
        var low: UInt8 = 255, high: UInt8 = 0
        var base = y * stride + x
        for _ in 0..<(side / 2) {
            var offset = base
            for _ in 0..<(side / 2) {
                let value = pixels[offset]
                low = min(low, value)
                high = max(high, value)
                offset += 2
            }
            base += 2 * stride
        }
        return (low, high)
    }

    /// Whether a cell goes from dark to light (or back) along one of two rows and along one of two
    /// columns through it (at a quarter and three quarters of its side). A flip counts only past a
    /// band around the middle grey, so noise about one level does not flip.
    @inline(__always)
    static func flipsBothWays(_ pixels: UnsafeBufferPointer<UInt8>, stride: Int, x: Int, y: Int, side: Int,
                              dark: Int, light: Int) -> Bool {
        let middle = (dark + light) / 2, band = (light - dark) / 4
        let darkBelow = middle - band, lightAbove = middle + band
        /// Whether the `side` pixels from `start`, `step` apart, change between dark and light.
        @inline(__always) func flips(from start: Int, step: Int) -> Bool {
            var state = 0  // -1 dark, +1 light, 0 not yet known
            var offset = start
            for _ in 0..<side {
                let value = Int(pixels[offset])
                let now = value > lightAbove ? 1 : value < darkBelow ? -1 : state
                if now != state && state != 0 { return true }
                state = now
                offset += step
            }
            return false
        }
        let near = side / 4, far = side * 3 / 4
        let across = flips(from: (y + near) * stride + x, step: 1) || flips(from: (y + far) * stride + x, step: 1)
        return across && (flips(from: y * stride + x + near, step: stride) || flips(from: y * stride + x + far, step: stride))
    }

    /// Groups of touching busy cells big and solid enough to be a symbol, largest first, as cell rectangles.
    static func regions(_ busy: [Bool], columns: Int, rows: Int) -> [FrameRegion] {
        var seen = [Bool](repeating: false, count: busy.count)
        var found: [(cells: Int, box: FrameRegion)] = []
        var queue: [Int] = []
        for start in busy.indices where busy[start] && !seen[start] {
            seen[start] = true
            queue.removeAll(keepingCapacity: true)
            queue.append(start)
            var head = 0
            var (left, right, top, bottom) = (columns, 0, rows, 0)
            while head < queue.count {
                let index = queue[head]
                head += 1
                let (x, y) = (index % columns, index / columns)
                (left, right, top, bottom) = (min(left, x), max(right, x), min(top, y), max(bottom, y))
                for ny in max(0, y - 1)...min(rows - 1, y + 1) {
                    for nx in max(0, x - 1)...min(columns - 1, x + 1) {
                        let neighbour = ny * columns + nx
                        if busy[neighbour] && !seen[neighbour] {
                            seen[neighbour] = true
                            queue.append(neighbour)
                        }
                    }
                }
            }
            let (width, height) = (right - left + 1, bottom - top + 1)
            // A symbol is at least 3×3 cells, roughly square (skew stretches it, so up to 2.5:1) and
            // fills a good part of its box: a quarter at least, as a code turned by 45° (half its
            // box) with a few quiet cells inside still does. A shape's outline is long, thin or hollow.
            guard queue.count >= 9, width >= 3, height >= 3,
                  max(width, height) * 2 <= min(width, height) * 5,
                  queue.count * 4 >= width * height else { continue }
            found.append((queue.count, FrameRegion(x: left, y: top, width: width, height: height)))
        }
        return found.sorted { $0.cells > $1.cells }.map(\.box)
    }
}
