/// A plain-text drawing of a `Screen`, for tests and logs: deterministic, free of colour codes
/// and trailing spaces, and wide enough to notice what a person would notice (the icon, the
/// words, the state of the content, the footer's tone and the motion hint).
///
/// The layout follows the shared screen shape: icon, title with subtitle, content, footer,
/// each block centred and separated from the next by one empty line.
package enum TextSnapshot {
    /// The widest a progress bar's track gets, so wide terminals don't get absurd bars.
    static let maxBarCells = 30
    /// The widest a password field gets.
    static let maxFieldCells = 24
    /// The most tiles on one row, so a grid stays a grid on wide screens.
    static let maxTilesPerRow = 12

    /// Draws `screen` in `width` columns (at least 8 are used). Lines are joined by `\n`,
    /// with no newline after the last one.
    package static func render(_ screen: Screen, width: Int) -> String {
        let width = max(8, width)
        var blocks: [[String]] = []
        blocks.append(TextLayout.wrapCentered("[\(screen.icon)]", width: width))

        var heading = TextLayout.wrapCentered(screen.title, width: width)
        if let subtitle = screen.subtitle, !subtitle.isEmpty {
            heading += TextLayout.wrapCentered(subtitle, width: width)
        }
        blocks.append(heading)

        blocks.append(content(screen.content, width: width))

        if let footer = screen.footer {
            blocks.append(TextLayout.wrapCentered(footerText(footer), width: width))
        }
        if let motion = screen.motion {
            blocks.append(TextLayout.wrapCentered("(motion: \(motion.rawValue))", width: width))
        }

        return blocks.filter { !$0.isEmpty }
            .map { $0.map(trimTrailingSpaces).joined(separator: "\n") }
            .joined(separator: "\n\n")
    }

    /// The lines of one content slot.
    static func content(_ content: ScreenContent, width: Int) -> [String] {
        switch content {
        case .none:
            return []
        case .spinner:
            return [TextLayout.center("(spinner)", width: width)]
        case .progress(let value, let line):
            return TextLayout.wrapCentered(line, width: width) + [TextLayout.center(bar(value, width: width), width: width)]
        case .countdown(let number):
            return [TextLayout.center("( \(number) )", width: width)]
        case .pickList(let items):
            return pickList(items, width: width)
        case .actions(let actions):
            return actionRow(actions, width: width)
        case .passwordField(let field):
            return passwordField(field, width: width)
        case .tileGrid(let grid):
            return tileGrid(grid, width: width)
        }
    }

    /// `[#####-----]  50%`: a track of `#` and `-` and the percentage, never wider than `width`.
    static func bar(_ fraction: Double, width: Int) -> String {
        let cells = max(1, min(width - 7, maxBarCells))
        let filled = TextLayout.filledCells(fraction, cells: cells)
        let percent = String(TextLayout.percent(fraction))
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: cells - filled) + "] "
            + String(repeating: " ", count: 4 - percent.count - 1) + percent + "%"
    }

    /// Numbered rows with the detail right-aligned, as one block centred as a whole. A row too
    /// wide for the screen wraps its title and puts the detail on a line of its own.
    static func pickList(_ items: [PickItem], width: Int) -> [String] {
        guard !items.isEmpty else { return [TextLayout.center("(nothing to pick yet)", width: width)] }
        let labels = items.enumerated().map { "\($0.offset + 1). \($0.element.title)" }
        let natural = zip(labels, items).map { label, item in
            TextLayout.displayWidth(label) + (item.detail.map { 2 + TextLayout.displayWidth($0) } ?? 0)
        }
        let blockWidth = min(width, natural.max() ?? 0)
        let margin = String(repeating: " ", count: TextLayout.leftMargin(for: blockWidth, width: width))
        var lines: [String] = []
        for (index, item) in items.enumerated() {
            let label = labels[index]
            let indent = String(repeating: " ", count: min(String(index + 1).count + 2, blockWidth / 2))
            if natural[index] <= blockWidth {
                let detail = item.detail ?? ""
                let gap = blockWidth - TextLayout.displayWidth(label) - TextLayout.displayWidth(detail)
                lines.append(margin + label + String(repeating: " ", count: item.detail == nil ? 0 : gap) + detail)
                continue
            }
            let wrapped = TextLayout.wrap(label, width: blockWidth)
            lines.append(margin + wrapped[0])
            for rest in wrapped.dropFirst() {
                lines += TextLayout.wrap(rest, width: blockWidth - indent.count).map { margin + indent + $0 }
            }
            if let detail = item.detail {
                lines += TextLayout.wrap(detail, width: blockWidth - indent.count).map { margin + indent + $0 }
            }
        }
        return lines
    }

    /// `[ Confirm ]  [ Re-align ]`, breaking onto more rows when the buttons don't fit.
    static func actionRow(_ actions: [ScreenAction], width: Int) -> [String] {
        let buttons = actions.map { "[ \($0.title) ]" }
        return packRow(buttons, separator: "  ", width: width).map { TextLayout.center($0, width: width) }
    }

    /// `[ ••••_          ]`: one bullet per typed character and a caret when focused. A
    /// status other than normal is spelled out under the field.
    static func passwordField(_ field: PasswordField, width: Int) -> [String] {
        let cells = max(4, min(width - 4, maxFieldCells))
        let caret = field.focused && field.status != .disabled ? "_" : ""
        let bullets = String(repeating: "•", count: min(field.maskedLength, cells - caret.count))
        let inside = bullets + caret
        var lines = [TextLayout.center("[ " + inside + String(repeating: " ", count: cells - inside.count) + " ]", width: width)]
        if field.status != .normal {
            lines.append(TextLayout.center("(field: \(field.status.rawValue))", width: width))
        }
        return lines
    }

    /// The count line, a bar when there is a fraction, then rows of `[x]` and `[ ]` tiles
    /// sharing one left margin so the grid's columns line up.
    static func tileGrid(_ grid: TileGrid, width: Int) -> [String] {
        var lines: [String] = []
        if let line = grid.progressLine, !line.isEmpty {
            lines += TextLayout.wrapCentered(line, width: width)
        }
        if let fraction = grid.fraction {
            lines.append(TextLayout.center(bar(fraction, width: width), width: width))
        }
        guard !grid.tiles.isEmpty else { return lines }
        let perRow = max(1, min((width + 1) / 4, maxTilesPerRow))
        let cells = grid.tiles.map { $0.state == .scanned ? "[x]" : "[ ]" }
        let rows = stride(from: 0, to: cells.count, by: perRow).map {
            cells[$0..<min($0 + perRow, cells.count)].joined(separator: " ")
        }
        let margin = String(repeating: " ", count: TextLayout.leftMargin(for: rows[0].count, width: width))
        if !lines.isEmpty { lines.append("") }
        return lines + rows.map { margin + $0 }
    }

    static func footerText(_ footer: Footer) -> String {
        switch footer.tone {
        case .normal, .secondary: footer.text
        case .error, .success, .warning: "(\(footer.tone.rawValue)) \(footer.text)"
        }
    }

    /// Greedily packs `items` onto rows no wider than `width`; an item wider than a row gets
    /// wrapped on its own.
    static func packRow(_ items: [String], separator: String, width: Int) -> [String] {
        var rows: [String] = []
        var current = ""
        for item in items {
            let candidate = current.isEmpty ? item : current + separator + item
            if TextLayout.displayWidth(candidate) <= width {
                current = candidate
                continue
            }
            if !current.isEmpty { rows.append(current) }
            if TextLayout.displayWidth(item) <= width {
                current = item
            } else {
                rows += TextLayout.wrap(item, width: width)
                current = ""
            }
        }
        if !current.isEmpty { rows.append(current) }
        return rows
    }

    static func trimTrailingSpaces(_ line: String) -> String {
        var line = Substring(line)
        while line.last == " " { line = line.dropLast() }
        return String(line)
    }
}
