import HAL
import Testing
@testable import Capture

/// The test helper that shows pictures at an angle (Tests/MediaSupport/PerspectiveWarp.swift).
@Suite struct PerspectiveWarpTests {
    static func close(_ a: PicturePoint?, _ b: PicturePoint, within tolerance: Double = 1e-9) -> Bool {
        guard let a else { return false }
        return abs(a.x - b.x) <= tolerance && abs(a.y - b.y) <= tolerance
    }

    @Test func theSquaresCornersLandOnTheQuadrilateral() throws {
        let corners = [PicturePoint(10, 20), PicturePoint(200, 35), PicturePoint(180, 150), PicturePoint(30, 170)]
        let map = try #require(Homography(unitSquareTo: corners))
        let square = [PicturePoint(0, 0), PicturePoint(1, 0), PicturePoint(1, 1), PicturePoint(0, 1)]
        for (from, to) in zip(square, corners) { #expect(Self.close(map.apply(from), to)) }
        let back = try #require(map.inverse)
        for (from, to) in zip(corners, square) { #expect(Self.close(back.apply(from), to)) }
        // A perspective map, not an affine one: the square's centre does not go to the corners' average.
        #expect(!Self.close(map.apply(PicturePoint(0.5, 0.5)), PicturePoint(105, 93.75), within: 0.5))
    }

    @Test func threeCornersInALineMakeNoMap() {
        #expect(Homography(unitSquareTo: [PicturePoint(0, 0), PicturePoint(1, 1), PicturePoint(2, 2), PicturePoint(0, 5)]) == nil)
        #expect(Homography(unitSquareTo: [PicturePoint(0, 0)]) == nil)
        var frame = QRFixture.blank()
        #expect(!PerspectiveWarp.draw(QRFixture.blank(width: 8, height: 8), onto: &frame,
                                      corners: [PicturePoint(0, 0), PicturePoint(0, 0), PicturePoint(0, 0), PicturePoint(0, 0)]))
        #expect(frame == QRFixture.blank())
    }

    @Test func drawingOntoItsOwnRectangleCopiesThePicture() throws {
        let picture = QRFixture.picture(try QRFixture.modules(VB1Vector.codes[0]), scale: 2)
        var frame = QRFixture.blank(width: 200, height: 200)
        let side = Double(picture.width)
        PerspectiveWarp.draw(picture, onto: &frame, corners: [PicturePoint(20, 30), PicturePoint(20 + side, 30),
                                                              PicturePoint(20 + side, 30 + side), PicturePoint(20, 30 + side)])
        for y in 0..<picture.height {
            #expect(Array(frame.pixels[((30 + y) * 200 + 20)..<((30 + y) * 200 + 20 + picture.width)])
                == Array(picture.pixels[(y * picture.width)..<((y + 1) * picture.width)]))
        }
        // Outside the card the frame is untouched.
        #expect(frame.pixels[0] == 140 && frame.pixels[29 * 200 + 20] == 140 && frame.pixels[30 * 200 + 19] == 140)
    }

    @Test func cardCornersTurnAndTilt() {
        let flat = PerspectiveWarp.cardCorners(centreX: 100, centreY: 50, side: 40)
        #expect(flat == [PicturePoint(80, 30), PicturePoint(120, 30), PicturePoint(120, 70), PicturePoint(80, 70)])
        let tilted = PerspectiveWarp.cardCorners(centreX: 100, centreY: 50, side: 40, keystone: 0.5, shear: 0.25)
        #expect(tilted == [PicturePoint(100, 30), PicturePoint(120, 30), PicturePoint(120, 70), PicturePoint(80, 70)])
        let turned = PerspectiveWarp.cardCorners(centreX: 0, centreY: 0, side: 2, degrees: 90)
        #expect(Self.close(turned[0], PicturePoint(1, -1), within: 1e-12))
    }
}
