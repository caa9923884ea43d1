import Foundation
import HAL

/// A point in picture coordinates (pixels; x right, y down).
public struct PicturePoint: Hashable, Sendable {
    public var x: Double
    public var y: Double

    public init(_ x: Double, _ y: Double) {
        self.x = x
        self.y = y
    }
}

/// The projective map that takes the unit square onto a quadrilateral: what a camera does to a flat
/// card held at an angle. Straight lines stay straight; parallel lines meet, unlike an affine shear.
public struct Homography: Hashable, Sendable {
    /// Row-major 3×3 matrix; (u, v, 1) ↦ (x·w, y·w, w).
    var m: [Double]

    /// The map with (0,0), (1,0), (1,1), (0,1) going to `corners` top-left, top-right,
    /// bottom-right, bottom-left. nil when three corners are in line (no such map).
    public init?(unitSquareTo corners: [PicturePoint]) {
        guard corners.count == 4 else { return nil }
        let (p0, p1, p2, p3) = (corners[0], corners[1], corners[2], corners[3])
        // The square's diagonal sum picks out the projective part (g, h); zero for a parallelogram.
        let sx = p0.x - p1.x + p2.x - p3.x
        let sy = p0.y - p1.y + p2.y - p3.y
        let dx1 = p1.x - p2.x, dx2 = p3.x - p2.x
        let dy1 = p1.y - p2.y, dy2 = p3.y - p2.y
        let denominator = dx1 * dy2 - dx2 * dy1
        guard abs(denominator) > 1e-12 else { return nil }
        let g = (sx * dy2 - dx2 * sy) / denominator
        let h = (dx1 * sy - sx * dy1) / denominator
        m = [p1.x - p0.x + g * p1.x, p3.x - p0.x + h * p3.x, p0.x,
             p1.y - p0.y + g * p1.y, p3.y - p0.y + h * p3.y, p0.y,
             g, h, 1]
        // Three corners in a line flatten the square: such a map has no inverse.
        guard abs(determinant) > 1e-12 else { return nil }
    }

    init(matrix: [Double]) { m = matrix }

    /// The map back (quadrilateral to unit square); nil if this one collapses the plane.
    var determinant: Double {
        let (a, b, c, d, e, f, g, h, i) = (m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8])
        return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    }

    public var inverse: Homography? {
        let (a, b, c, d, e, f, g, h, i) = (m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8])
        let determinant = determinant
        guard abs(determinant) > 1e-12 else { return nil }
        let adjugate = [e * i - f * h, c * h - b * i, b * f - c * e,
                        f * g - d * i, a * i - c * g, c * d - a * f,
                        d * h - e * g, b * g - a * h, a * e - b * d]
        return Homography(matrix: adjugate.map { $0 / determinant })
    }

    /// Where `point` goes; nil for points the map sends to infinity.
    public func apply(_ point: PicturePoint) -> PicturePoint? {
        let w = m[6] * point.x + m[7] * point.y + m[8]
        guard abs(w) > 1e-12 else { return nil }
        return PicturePoint((m[0] * point.x + m[1] * point.y + m[2]) / w, (m[3] * point.x + m[4] * point.y + m[5]) / w)
    }
}

/// Pictures seen at an angle: a flat picture (a QR code on a card or a screen) drawn into a frame
/// through a homography, sampled bilinearly as a camera's optics would smooth it.
public enum PerspectiveWarp {
    /// Draws `picture` into `frame` so that its corners land on `corners` (top-left, top-right,
    /// bottom-right, bottom-left). Pixels outside the quadrilateral keep what `frame` had.
    /// Returns false (and draws nothing) when the corners do not make a quadrilateral.
    @discardableResult
    public static func draw(_ picture: GrayFrame, onto frame: inout GrayFrame, corners: [PicturePoint]) -> Bool {
        guard let toFrame = Homography(unitSquareTo: corners), let toSquare = toFrame.inverse else { return false }
        let left = max(0, Int(corners.map(\.x).min() ?? 0) - 1)
        let right = min(frame.width - 1, Int((corners.map(\.x).max() ?? 0).rounded(.up)) + 1)
        let top = max(0, Int(corners.map(\.y).min() ?? 0) - 1)
        let bottom = min(frame.height - 1, Int((corners.map(\.y).max() ?? 0).rounded(.up)) + 1)
        guard left <= right, top <= bottom else { return true }
        let width = Double(picture.width), height = Double(picture.height)
        for y in top...bottom {
            for x in left...right {
                // Pixel centres, so a 1:1 map copies the picture exactly.
                guard let unit = toSquare.apply(PicturePoint(Double(x) + 0.5, Double(y) + 0.5)),
                      unit.x >= 0, unit.x < 1, unit.y >= 0, unit.y < 1 else { continue }
                frame.pixels[y * frame.stride + x] = sample(picture, unit.x * width - 0.5, unit.y * height - 0.5)
            }
        }
        return true
    }

    /// Bilinear sample at (x, y) in pixel-index coordinates, clamped at the picture's edges.
    static func sample(_ picture: GrayFrame, _ x: Double, _ y: Double) -> UInt8 {
        let x0 = Int(x.rounded(.down)), y0 = Int(y.rounded(.down))
        let fx = x - Double(x0), fy = y - Double(y0)
        func pixel(_ px: Int, _ py: Int) -> Double {
            let cx = min(max(px, 0), picture.width - 1), cy = min(max(py, 0), picture.height - 1)
            return Double(picture.pixels[cy * picture.stride + cx])
        }
        let top = pixel(x0, y0) * (1 - fx) + pixel(x0 + 1, y0) * fx
        let bottom = pixel(x0, y0 + 1) * (1 - fx) + pixel(x0 + 1, y0 + 1) * fx
        return UInt8(clamping: Int((top * (1 - fy) + bottom * fy).rounded()))
    }

    /// The corners of a square card of `side` pixels centred on (`x`, `y`), turned by `degrees`,
    /// then tilted about its horizontal axis: `keystone` 0.3 makes the top edge 30 % shorter than
    /// the bottom (the top leans away from the camera), and `shear` slides the top edge sideways by
    /// that fraction of the side.
    public static func cardCorners(centreX x: Double, centreY y: Double, side: Double, degrees: Double = 0,
                                   keystone: Double = 0, shear: Double = 0) -> [PicturePoint] {
        let half = side / 2
        let topHalf = half * (1 - keystone)
        let slide = shear * side
        let local = [PicturePoint(-topHalf + slide, -half), PicturePoint(topHalf + slide, -half),
                     PicturePoint(half, half), PicturePoint(-half, half)]
        let angle = degrees * Double.pi / 180
        let (c, s) = (cos(angle), sin(angle))
        return local.map { PicturePoint(x + $0.x * c - $0.y * s, y + $0.x * s + $0.y * c) }
    }
}

extension QRFixture {
    /// `modules` drawn flat with a 4-module quiet zone at `scale` pixels per module: the card that
    /// `PerspectiveWarp.draw` puts into a frame.
    public static func picture(_ modules: [[Bool]], scale: Int, dark: UInt8 = 25, light: UInt8 = 230) -> GrayFrame {
        let side = (modules.count + 8) * scale
        var pixels = [UInt8](repeating: 0, count: side * side)
        draw(modules, scale: scale, at: 0, 0, into: &pixels, width: side, dark: dark, light: light)
        return GrayFrame(width: side, height: side, pixels: pixels, timestamp: .zero, sequence: 0)
    }

    /// A `width`×`height` frame, mid-grey, showing `modules` as a card whose corners (quiet zone
    /// included) are at `corners`.
    public static func frame(_ modules: [[Bool]], corners: [PicturePoint], width: Int, height: Int,
                             sequence: UInt64 = 0) -> GrayFrame {
        var frame = blank(width: width, height: height, sequence: sequence)
        PerspectiveWarp.draw(picture(modules, scale: 4), onto: &frame, corners: corners)
        return frame
    }
}
