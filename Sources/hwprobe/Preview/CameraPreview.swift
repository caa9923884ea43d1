import Capture
import Flows
import HAL

/// The camera's view as terminal rows: the picture in half-blocks (two grey pixels a cell, the
/// upper one as the foreground of `▀`, the lower as its background), the regions where codes seem
/// to be outlined in amber, the ones read outlined in green with a `✓` in their corner, and a
/// caption row under it with the aiming hint.
///
/// Without colour (`--no-color`, `NO_COLOR`) each cell is one shade character (` ░▒▓█`, light as
/// the picture is light) and the outlines are the same box-drawing characters, so the picture and
/// the outlines still read on a monochrome terminal. A pure function of its input, so tests read
/// exactly the rows a terminal gets.
enum CameraPreview {
    struct Style: Hashable, Sendable {
        var color: Bool
        var trueColor: Bool
    }

    /// What the preview shows of one glimpse.
    struct View: Sendable {
        var frame: GrayFrame
        var sighting: Sighting
        var symbolCount: Int
        var hint: AimingHint?
    }

    static let shades: [Character] = [" ", "░", "▒", "▓", "█"]
    static let unreadColor = Theme.warning
    static let readColor = Theme.success

    /// `layout.rows` rows, each exactly `layout.columns` cells wide.
    static func rows(_ view: View, layout: PreviewLayout, style: Style) -> [String] {
        let columns = layout.columns, imageRows = layout.imageRows
        let thumbnail = FrameThumbnail(frame: view.frame, width: columns, height: imageRows * 2)
        let overlay = outlines(view, columns: columns, rows: imageRows)
        var rows: [String] = []
        rows.reserveCapacity(imageRows + 1)
        for row in 0..<imageRows {
            var line = ""
            var pen = Pen()
            for column in 0..<columns {
                let top = thumbnail.map { Int($0.pixels[(2 * row) * columns + column]) } ?? 0
                let bottom = thumbnail.map { Int($0.pixels[(2 * row + 1) * columns + column]) } ?? 0
                if let mark = overlay[row * columns + column] {
                    if style.color {
                        line += pen.set(foreground: mark.color, background: grey((top + bottom) / 2), trueColor: style.trueColor)
                    }
                    line.append(mark.character)
                } else if style.color {
                    line += pen.set(foreground: grey(top), background: grey(bottom), trueColor: style.trueColor)
                    line.append("▀")
                } else {
                    line.append(shades[min(shades.count - 1, (top + bottom) / 2 * shades.count / 256)])
                }
            }
            if style.color { line += TerminalRenderer.ANSI.reset }
            rows.append(line)
        }
        rows.append(caption(view, columns: columns, style: style))
        return rows
    }

    /// The line under the picture: what was read, or the hint, or nothing.
    static func caption(_ view: View, columns: Int, style: Style) -> String {
        let (text, color): (String, RGB) = if view.symbolCount > 0 || !view.sighting.read.isEmpty {
            ("✓ read", readColor)
        } else if let hint = view.hint {
            ("◌ " + hint.rawValue, unreadColor)
        } else {
            ("", Theme.secondaryText)
        }
        let fitted = TextLayout.truncate(text, width: columns)
        let padding = String(repeating: " ", count: max(0, columns - TextLayout.displayWidth(fitted)))
        guard style.color, !fitted.isEmpty else { return fitted + padding }
        return TerminalRenderer.ANSI.style(color: color, bold: false, trueColor: style.trueColor) + fitted
            + TerminalRenderer.ANSI.reset + padding
    }

    struct Mark: Hashable {
        var character: Character
        var color: RGB
    }

    /// The outline characters over the picture, cell by cell (nil: the picture shows).
    static func outlines(_ view: View, columns: Int, rows: Int) -> [Mark?] {
        var marks = [Mark?](repeating: nil, count: columns * rows)
        let (width, height) = (view.frame.width, view.frame.height)
        guard width > 0, height > 0, columns > 0, rows > 0 else { return marks }
        let read = view.sighting.read
        let unread = view.sighting.regions.filter { region in !read.contains { $0.overlaps(region) } }
        func draw(_ region: FrameRegion, color: RGB, ticked: Bool) {
            let left = max(0, min(columns - 1, region.x * columns / width))
            let right = max(left, min(columns - 1, (region.x + region.width - 1) * columns / width))
            let top = max(0, min(rows - 1, region.y * rows / height))
            let bottom = max(top, min(rows - 1, (region.y + region.height - 1) * rows / height))
            func put(_ character: Character, _ x: Int, _ y: Int) { marks[y * columns + x] = Mark(character: character, color: color) }
            guard right > left, bottom > top else {
                put(ticked ? "✓" : "▪", left, top)
                return
            }
            for x in (left + 1)..<right {
                put("─", x, top)
                put("─", x, bottom)
            }
            for y in (top + 1)..<bottom {
                put("│", left, y)
                put("│", right, y)
            }
            put(ticked ? "✓" : "┌", left, top)
            put("┐", right, top)
            put("└", left, bottom)
            put("┘", right, bottom)
        }
        for region in unread { draw(region, color: unreadColor, ticked: false) }
        for region in read { draw(region, color: readColor, ticked: true) }
        return marks
    }

    static func grey(_ level: Int) -> RGB {
        let value = UInt8(clamping: level)
        return RGB(red: value, green: value, blue: value)
    }

    /// Sends a colour escape only when the colours change from the cell before.
    struct Pen {
        private var foreground: RGB?
        private var background: RGB?

        mutating func set(foreground: RGB, background: RGB, trueColor: Bool) -> String {
            var codes: [String] = []
            if foreground != self.foreground { codes.append("38;" + Self.code(foreground, trueColor: trueColor)) }
            if background != self.background { codes.append("48;" + Self.code(background, trueColor: trueColor)) }
            self.foreground = foreground
            self.background = background
            return codes.isEmpty ? "" : TerminalRenderer.ANSI.escape + codes.joined(separator: ";") + "m"
        }

        /// `2;r;g;b`, or `5;n` for the nearest of the 256-colour palette: the 24-step grey ramp
        /// (232–255, levels 8 to 238) for greys, the colour cube for colours.
        static func code(_ color: RGB, trueColor: Bool) -> String {
            if trueColor { return "2;\(color.red);\(color.green);\(color.blue)" }
            guard color.red == color.green, color.green == color.blue else { return "5;\(TerminalRenderer.ANSI.paletteIndex(color))" }
            let level = Int(color.red)
            if level < 4 { return "5;16" }
            if level > 246 { return "5;231" }
            return "5;\(232 + min(23, max(0, (level - 3) / 10)))"
        }
    }
}
