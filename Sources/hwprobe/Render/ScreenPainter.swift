import Flows
import LinuxIO

/// Paints a whole terminal (the alternate screen) from its parts: the flow's frame from the top,
/// a few log lines and a status line near the bottom, the key hints on the last row.
///
/// Every row is addressed absolutely and cleared to its end, and nothing is ever written past
/// the last column or below the last row, so the terminal never scrolls or wraps: after a resize
/// one full repaint leaves no trace of the old layout. Rows that did not change since the last
/// paint are not sent again.
struct ScreenPainter: Sendable {
    /// What each row showed after the last paint; empty before the first (or after `invalidate`).
    private(set) var painted: [String] = []
    private var paintedSize: WindowSize?

    /// The most log lines shown at once; older ones scroll out of the area (they are kept for
    /// the transcript printed when the screen is given back).
    static let logRows = 4

    /// Forget what is on screen: the next paint clears and sends every row.
    mutating func invalidate() {
        painted = []
        paintedSize = nil
    }

    /// The rows for `size`, styled (every line already fits the width).
    static func layout(frame: [String], logs: [String], status: String?, hints: String?, size: WindowSize) -> [String] {
        let rows = max(1, size.rows)
        var bottom: [String] = []
        let room = rows - 1 - frame.count - 1 - (hints == nil ? 0 : 1) - (status == nil ? 0 : 1)
        bottom += logs.suffix(max(0, min(Self.logRows, room)))
        if let status { bottom.append(status) }
        if let hints { bottom.append(hints) }
        bottom = Array(bottom.suffix(rows))
        // One blank row on top when there is room, then as much of the frame as fits.
        let frameRoom = max(0, rows - bottom.count - 1)
        var top = [""] + frame.prefix(frameRoom)
        if top.count + bottom.count > rows { top = Array(frame.prefix(max(0, rows - bottom.count))) }
        let gap = max(0, rows - top.count - bottom.count)
        return top + Array(repeating: "", count: gap) + bottom
    }

    /// The bytes that bring the terminal from what was painted last to `rows`.
    mutating func paint(_ rows: [String], size: WindowSize) -> String {
        var output = ""
        if paintedSize != size || painted.count != rows.count {
            output += TerminalRenderer.ANSI.escape + "H" + TerminalRenderer.ANSI.escape + "2J"
            painted = Array(repeating: "", count: rows.count)
            paintedSize = size
        }
        for (index, row) in rows.enumerated() where painted[index] != row {
            output += TerminalRenderer.ANSI.moveTo(row: index + 1) + row + TerminalRenderer.ANSI.clearToEndOfLine
            painted[index] = row
        }
        return output
    }
}
