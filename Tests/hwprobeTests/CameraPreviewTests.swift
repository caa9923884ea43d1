import Capture
import Flows
import HAL
import LinuxIO
import Testing
@testable import hwprobe

/// The camera preview's rows and where they go: pure functions, read as a terminal would get them.
@Suite struct CameraPreviewTests {
    static let layout = PreviewLayout(placement: .beside, columns: 32, imageRows: 12)
    static let color = CameraPreview.Style(color: true, trueColor: true)
    static let mono = CameraPreview.Style(color: false, trueColor: false)

    /// 640×480, white, with a dark square over `dark`.
    static func frame(dark: FrameRegion? = nil) -> GrayFrame {
        var pixels = [UInt8](repeating: 255, count: 640 * 480)
        if let dark {
            for y in dark.y..<(dark.y + dark.height) { for x in dark.x..<(dark.x + dark.width) { pixels[y * 640 + x] = 0 } }
        }
        return GrayFrame(width: 640, height: 480, pixels: pixels, timestamp: .zero, sequence: 0)
    }

    static let left = FrameRegion(x: 40, y: 40, width: 200, height: 200)
    static let right = FrameRegion(x: 400, y: 240, width: 200, height: 200)

    static func view(regions: [FrameRegion] = [], read: [FrameRegion] = [], symbols: Int = 0, hint: AimingHint? = nil,
                     dark: FrameRegion? = nil) -> CameraPreview.View {
        CameraPreview.View(frame: frame(dark: dark), sighting: Sighting(regions: regions, read: read), symbolCount: symbols, hint: hint)
    }

    @Test func everyRowIsExactlyThePreviewsWidth() {
        for style in [Self.color, Self.mono, CameraPreview.Style(color: true, trueColor: false)] {
            let rows = CameraPreview.rows(Self.view(regions: [Self.left, Self.right], read: [Self.right], symbols: 1), layout: Self.layout, style: style)
            #expect(rows.count == Self.layout.rows)
            for row in rows {
                #expect(TextLayout.displayWidth(TerminalRenderer.ANSI.strip(row)) == Self.layout.columns, "\(row.debugDescription)")
            }
        }
    }

    @Test func outlinesUnreadRegionsAndTicksReadOnes() {
        let rows = CameraPreview.rows(Self.view(regions: [Self.left, Self.right], read: [Self.right], symbols: 1), layout: Self.layout, style: Self.mono)
        let picture = rows.dropLast()
        // The unread region (left): its corners at the cells its pixels fall in (32 columns for
        // 640 pixels, 12 rows for 480: 20 pixels a column, 40 a row).
        #expect(Array(picture[1])[2] == "┌")
        #expect(Array(picture[1])[11] == "┐")
        #expect(Array(picture[5])[2] == "└")
        #expect(Array(picture[5])[11] == "┘")
        #expect(Array(picture[3])[2] == "│")
        // The read one (right) has a tick for its top-left corner.
        #expect(Array(picture[6])[20] == "✓")
        #expect(Array(picture[6])[29] == "┐")
        #expect(rows.last?.hasPrefix("✓ read") == true)
    }

    @Test func theHintIsTheCaptionWhenNothingWasRead() {
        let rows = CameraPreview.rows(Self.view(regions: [Self.left], hint: .moveCloser), layout: Self.layout, style: Self.color)
        let caption = TerminalRenderer.ANSI.strip(rows.last ?? "")
        #expect(caption.hasPrefix("◌ move closer"))
        // In the theme's warning colour.
        #expect(rows.last?.contains("38;2;255;176;32") == true)
        let none = CameraPreview.rows(Self.view(), layout: Self.layout, style: Self.mono)
        #expect(none.last == String(repeating: " ", count: Self.layout.columns))
    }

    @Test func withoutColourThePictureIsShades() {
        // The dark square covers the cells of columns 0–11, rows 0–5 wholly.
        let rows = CameraPreview.rows(Self.view(dark: FrameRegion(x: 0, y: 0, width: 240, height: 240)), layout: Self.layout, style: Self.mono)
        #expect(Array(rows[0])[0] == " ")
        #expect(Array(rows[0])[20] == "█")
        #expect(!rows.joined().contains("\u{1B}"))
    }

    @Test func inColourEachCellIsAHalfBlockOfTwoGreys() {
        let rows = CameraPreview.rows(Self.view(), layout: Self.layout, style: Self.color)
        // White all over: one pen change, then half-blocks.
        #expect(rows[0] == "\u{1B}[38;2;255;255;255;48;2;255;255;255m" + String(repeating: "▀", count: 32) + "\u{1B}[0m")
        let palette = CameraPreview.rows(Self.view(), layout: Self.layout, style: CameraPreview.Style(color: true, trueColor: false))
        #expect(palette[0].hasPrefix("\u{1B}[38;5;231;48;5;231m"))
        #expect(CameraPreview.Pen.code(CameraPreview.grey(128), trueColor: false) == "5;244")
        #expect(CameraPreview.Pen.code(CameraPreview.grey(0), trueColor: false) == "5;16")
    }

    @Test func beside_onAWideTerminal_above_onATallOne_none_onASmallOne() throws {
        let wide = try #require(PreviewLayout.beside(size: WindowSize(rows: 36, columns: 120), aspect: 4.0 / 3))
        #expect(wide == PreviewLayout(placement: .beside, columns: 46, imageRows: 17))
        // A 16:9 camera: fewer rows for the same width.
        #expect(PreviewLayout.beside(size: WindowSize(rows: 36, columns: 120), aspect: 16.0 / 9)?.imageRows == 13)
        // Few rows: the picture shrinks to fit them, keeping its shape.
        #expect(PreviewLayout.beside(size: WindowSize(rows: 16, columns: 120), aspect: 4.0 / 3)
                == PreviewLayout(placement: .beside, columns: 29, imageRows: 11))
        #expect(PreviewLayout.beside(size: WindowSize(rows: 36, columns: 99), aspect: 4.0 / 3) == nil)
        let tall = try #require(PreviewLayout.above(size: WindowSize(rows: 44, columns: 70), frameRows: 12, aspect: 4.0 / 3))
        #expect(tall == PreviewLayout(placement: .above, columns: 48, imageRows: 18))
        #expect(PreviewLayout.above(size: WindowSize(rows: 16, columns: 50), frameRows: 10, aspect: 4.0 / 3) == nil)
        #expect(PreviewLayout.beside(size: WindowSize(rows: 36, columns: 120), aspect: .nan) == nil)
    }

    @Test func placedBesideTheFrameOrAboveIt() {
        let beside = PreviewLayout(placement: .beside, columns: 4, imageRows: 1)
        let rows = PreviewSlot.placing(["abcd", "efgh"], layout: beside, beside: ["frame"], columns: 20)
        #expect(rows == ["frame\u{1B}[K\u{1B}[16Gabcd", "\u{1B}[K\u{1B}[16Gefgh"])
        let above = PreviewLayout(placement: .above, columns: 4, imageRows: 1)
        #expect(PreviewSlot.placing(["abcd", "efgh"], layout: above, beside: ["frame"], columns: 20)
                == ["        abcd", "        efgh", "", "frame"])
    }
}
