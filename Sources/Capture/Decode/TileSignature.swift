import CPixelKernels
import HAL

/// A frame seen coarsely: for each square tile, its brightness and its sharpness, from a sparse
/// sample of its pixels. Two signatures of the same scene agree within the sensor's noise; a
/// code that arrives, leaves, moves by more than a tile or comes into focus changes them.
///
/// Why: most frames of a person holding a page up to a camera show exactly what the frame
/// before showed, a little shaken. A decoder costs 3–30 ms a frame, a signature a few tenths of
/// a millisecond, so comparing signatures first lets
/// the decoders look only at what changed (`ChangeGate`).
///
/// Every pixel of every other row is read (a sparser sample aliases: printed text or modules of
/// two or three pixels then look different after a shift of a pixel), in C (`CPixelKernels`), so
/// a debug build pays about what a release one does.
package struct TileSignature: Sendable, Equatable {
    /// The side of a tile in pixels (a multiple of 4, at least 8).
    package let tile: Int
    package let columns: Int
    package let rows: Int
    /// Per tile, row by row: the mean of the sampled pixels.
    package var brightness: [Int32]
    /// Per tile: the mean absolute difference between horizontally adjacent sampled pixels,
    /// which focus and fine detail raise and blur and flat surfaces lower.
    package var sharpness: [Int32]

    /// The tile side for a frame: about 45 tiles along the short side (16 pixels at 720p).
    package static func tileSide(width: Int, height: Int) -> Int {
        max(8, (min(width, height) / 45) & ~3)
    }

    /// Samples `frame`; nil when it is too small (under 3×3 tiles) or malformed.
    package init?(_ frame: GrayFrame) {
        let tile = Self.tileSide(width: frame.width, height: frame.height)
        let columns = frame.width / tile, rows = frame.height / tile
        guard columns >= 3, rows >= 3, frame.stride >= frame.width,
              frame.pixels.count >= frame.stride * (frame.height - 1) + frame.width else { return nil }
        self.tile = tile
        self.rows = rows
        // The last tile's last pair reads one pixel past the tiles: keep one column spare.
        let usedColumns = (columns * tile < frame.width) ? columns : columns - 1
        guard usedColumns >= 3 else { return nil }
        self.columns = usedColumns
        var brightness = [Int32](repeating: 0, count: usedColumns * rows)
        var sharpness = [Int32](repeating: 0, count: usedColumns * rows)
        frame.pixels.withUnsafeBufferPointer { pixels in
            brightness.withUnsafeMutableBufferPointer { bright in
                sharpness.withUnsafeMutableBufferPointer { sharp in
                    guard let base = pixels.baseAddress, let brightOut = bright.baseAddress, let sharpOut = sharp.baseAddress else { return }
                    pk_tile_signature(base, frame.stride, Int32(tile), Int32(usedColumns), Int32(rows), brightOut, sharpOut)
                }
            }
        }
        self.brightness = brightness
        self.sharpness = sharpness
    }

    /// Whether the two were taken of frames of the same size.
    package func sameGrid(as other: TileSignature) -> Bool {
        tile == other.tile && columns == other.columns && rows == other.rows
    }

    /// Which tiles have texture enough to hold part of a code: at least twice the frame's typical
    /// (median) tile's sharpness, and at least 8 levels between neighbouring pixels on average.
    /// Sharpness is the mean step between neighbouring pixels, so it falls as modules grow (a
    /// code close to a 1080p camera, 9-pixel modules, averages about 17 levels where small
    /// modules give 40): the bar is set for the large ones. Sensor noise alone stays under it,
    /// and so do paper, a flat desk and a smooth edge.
    package func busyTiles() -> [Bool] {
        var histogram = [Int](repeating: 0, count: 1025)
        for value in sharpness { histogram[Int(min(max(value, 0), 1024))] += 1 }
        var typical = 0, counted = 0
        while typical < 1024, counted + histogram[typical] <= sharpness.count / 2 {
            counted += histogram[typical]
            typical += 1
        }
        let threshold = Int32(max(2 * typical, 8 * 4))
        return sharpness.map { $0 >= threshold }
    }

    /// Tolerances of ``changed(since:)``: what sensor noise and light drift between two frames
    /// of the same scene stay within (noise of ±5 levels moves a tile's sampled mean by about 1
    /// level, and its sharpness by about 1).
    package static let brightnessTolerance: Int32 = 8
    package static let sharpnessTolerance: Int32 = 6 * 4

    /// Which tiles show something `reference` did not, allowing for the scene to have moved by
    /// up to a tile: both are averaged over each tile's 3×3 neighbourhood (a shift of a few
    /// pixels then moves a value by a small share of the local contrast, instead of swapping a
    /// dark module for a light one), and a tile counts as changed only when its averaged
    /// brightness or sharpness lies outside what the reference's averages span over the same
    /// neighbourhood, widened by the noise tolerances and by a share of the neighbourhood's
    /// sharpness (a shaken edge moves a busy tile's mean and crosses more or fewer pixel pairs).
    /// In C (`pk_changed_tiles`) for the same reason as the signature.
    /// A hand's shake of a few pixels then changes nothing; a code coming in, going, or coming
    /// into focus changes its tiles. Both must be of the same grid (`sameGrid(as:)`).
    package func changed(since reference: TileSignature) -> [Bool] {
        let count = columns * rows
        guard sameGrid(as: reference), brightness.count == count, sharpness.count == count,
              reference.brightness.count == count, reference.sharpness.count == count else {
            return [Bool](repeating: true, count: count)
        }
        var flags = [UInt8](repeating: 1, count: count)
        brightness.withUnsafeBufferPointer { b in
            sharpness.withUnsafeBufferPointer { s in
                reference.brightness.withUnsafeBufferPointer { rb in
                    reference.sharpness.withUnsafeBufferPointer { rs in
                        flags.withUnsafeMutableBufferPointer { out in
                            guard let b = b.baseAddress, let s = s.baseAddress, let rb = rb.baseAddress, let rs = rs.baseAddress,
                                  let out = out.baseAddress else { return }
                            pk_changed_tiles(b, s, rb, rs, Int32(columns), Int32(rows), Self.brightnessTolerance, Self.sharpnessTolerance, out)
                        }
                    }
                }
            }
        }
        return flags.map { $0 != 0 }
    }
}
