import Flows
import HAL
import LinuxIO

/// Draws flow screens for a person at a terminal, in the theme's colours as 24-bit ANSI.
///
/// On a terminal each new screen is redrawn over the previous one, so the flow reads like an
/// app rather than a scrolling log. Anywhere else (a pipe, a file, CI) it writes one plain
/// line per change, which is what a log reader wants. Rendering returns strings rather than
/// writing, so tests read exactly the bytes a terminal would get.
///
/// Motion hints are not drawn: a terminal redraw is already an instant swap.
struct TerminalRenderer: Sendable {
    /// Columns available; every frame line fits in this many.
    var width: Int
    /// Whether output goes to a terminal (redraw in place) or elsewhere (one line per change).
    var isTerminal: Bool
    /// No colour escapes at all (`--no-color`, or `NO_COLOR` set to anything non-empty).
    var noColor: Bool
    /// 24-bit colour when the terminal says it has it (`COLORTERM=truecolor`), else the nearest
    /// of the 256-colour palette every modern terminal knows.
    var trueColor = true

    /// The last line printed (line mode), so an unchanged screen prints nothing.
    private(set) var lastSummary: String?

    init(width: Int, isTerminal: Bool, noColor: Bool) {
        self.width = max(Self.minimumWidth, width)
        self.isTerminal = isTerminal
        self.noColor = noColor
    }

    /// A renderer for `console`: its terminal-ness, and colour unless `--no-color` or `NO_COLOR`.
    /// The width is `COLUMNS` when set (so a person can override it), else the terminal's own
    /// width when writing to one, else 80.
    init(console: Console, noColorFlag: Bool, width: Int? = nil) {
        let measured = width ?? Self.width(environment: console.environment)
            ?? (console.isTerminal ? Self.terminalColumns() : nil) ?? Self.defaultWidth
        self.init(width: measured, isTerminal: console.isTerminal,
                  noColor: Self.colorDisabled(flag: noColorFlag, environment: console.environment))
        trueColor = Self.supportsTrueColor(environment: console.environment)
    }

    static func supportsTrueColor(environment: [String: String]) -> Bool {
        ["truecolor", "24bit"].contains((environment["COLORTERM"] ?? "").lowercased())
    }

    static let minimumWidth = 16
    static let defaultWidth = 80

    /// The no-color.org convention: any non-empty `NO_COLOR` turns colour off, as does the flag.
    static func colorDisabled(flag: Bool, environment: [String: String]) -> Bool {
        flag || !(environment["NO_COLOR"] ?? "").isEmpty
    }

    /// `COLUMNS` as a positive number, if the environment has it.
    static func width(environment: [String: String]) -> Int? {
        guard let text = environment["COLUMNS"], let columns = Int(text), columns > 0 else { return nil }
        return columns
    }

    /// The width the kernel reports for the terminal on `descriptor`, if it is one.
    static func terminalColumns(descriptor: Int32 = 1) -> Int? {
        FileDescriptor(rawValue: descriptor).windowColumns()
    }

    // MARK: Output

    /// Line mode (a pipe, a file, CI): one line per change, or nothing if it would repeat the last.
    mutating func line(for screen: Screen) -> String {
        let line = summary(for: screen)
        if line == lastSummary { return "" }
        lastSummary = line
        return line + "\n"
    }

    /// Something else was printed: the next screen is printed even if it repeats the last one.
    mutating func detach() {
        lastSummary = nil
    }

    /// The line-mode form of a screen: the title, the subtitle, then whatever changes on it,
    /// separated by dashes — the same facts the drawn screen shows (a result's weight and body fat
    /// are in its subtitle, a failure's reason in its subtitle and footer).
    func summary(for screen: Screen) -> String {
        var parts = [screen.title, screen.subtitle ?? ""]
        switch screen.content {
        case .none, .spinner, .passwordField:
            break
        case .progress(_, let line):
            parts.append(line)
        case .countdown(let number):
            parts.append(String(number))
        case .pickList(let items):
            parts.append(items.isEmpty ? "nothing to pick yet"
                         : items.map { item in item.detail.map { "\(item.title) (\($0))" } ?? item.title }.joined(separator: ", "))
        case .actions(let actions):
            parts.append(actions.map(\.title).joined(separator: " / "))
        case .tileGrid(let grid):
            if let line = grid.progressLine { parts.append(line) }
        }
        if let footer = screen.footer { parts.append(footer.text) }
        return parts.filter { !$0.isEmpty }.joined(separator: " — ")
    }

    // MARK: Frame

    /// The frame's lines, styled unless `noColor`: glyph, title, subtitle, content, footer, each
    /// centred, with empty lines between the blocks. No line is wider than `width` columns.
    ///
    /// `focus` marks the focused action or list row (the first is focused when a screen appears);
    /// `typing` draws a password field as a person types into it: that input is arriving, never
    /// how much of it there is.
    func frame(for screen: Screen, focus: Int? = nil, typing: PasswordTyping? = nil) -> [String] {
        var blocks: [[StyledLine]] = []
        blocks.append([centered([Span(IconGlyphs.glyph(for: screen.icon), color: Theme.accent, bold: true)])])

        var heading = wrapped(screen.title, color: Theme.primaryText, bold: true)
        if let subtitle = screen.subtitle, !subtitle.isEmpty {
            heading += wrapped(subtitle, color: Theme.secondaryText)
        }
        blocks.append(heading)
        blocks.append(content(screen.content, focus: focus, typing: typing))
        if let footer = screen.footer {
            blocks.append(wrapped(footer.text, color: Theme.color(for: footer.tone), bold: footer.tone == .error))
        }

        var lines: [StyledLine] = []
        for block in blocks where !block.isEmpty {
            if !lines.isEmpty { lines.append(StyledLine()) }
            lines += block
        }
        return lines.map { $0.rendered(color: !noColor, trueColor: trueColor) }
    }

    private func content(_ content: ScreenContent, focus: Int?, typing: PasswordTyping?) -> [StyledLine] {
        switch content {
        case .none:
            return []
        case .spinner:
            return [centered([Span("· · ·", color: Theme.accent, bold: true)])]
        case .progress(let value, let line):
            return wrapped(line, color: Theme.primaryText) + [centered(bar(value))]
        case .countdown(let number):
            return [centered([Span(String(number), color: Theme.accent, bold: true)])]
        case .pickList(let items):
            return pickList(items, focus: focus)
        case .actions(let actions):
            return actionRows(actions, focus: focus)
        case .passwordField(let field):
            return [centered(passwordField(field, typing: typing))]
        case .tileGrid(let grid):
            return tileGrid(grid)
        }
    }

    /// A track of full blocks with an eighth-block tip, then the percentage.
    private func bar(_ fraction: Double) -> [Span] {
        let cells = max(1, min(width - 10, 32))
        let eighths = TextLayout.filledCells(fraction, cells: cells * 8)
        let full = eighths / 8
        let tip = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"][eighths % 8]
        let empty = cells - full - (tip.isEmpty ? 0 : 1)
        let percent = String(TextLayout.percent(fraction))
        return [Span(String(repeating: "█", count: full) + tip, color: Theme.accent),
                Span(String(repeating: "░", count: empty), color: Theme.secondaryText),
                Span(String(repeating: " ", count: 5 - percent.count) + percent + "%", color: Theme.primaryText)]
    }

    /// Numbered rows, detail right-aligned, centred as one block; titles too long are shortened.
    private func pickList(_ items: [PickItem], focus: Int?) -> [StyledLine] {
        guard !items.isEmpty else { return wrapped("Nothing to pick yet", color: Theme.secondaryText) }
        // With a focus, every row gets a two-cell gutter and the focused one a pointer in it.
        let rows = items.enumerated().map { offset, item in
            (number: (focus == nil ? "" : offset == focus ? "▸ " : "  ") + "\(offset + 1)  ", title: item.title, detail: item.detail ?? "")
        }
        let natural = rows.map {
            TextLayout.displayWidth($0.number + $0.title) + ($0.detail.isEmpty ? 0 : 2 + TextLayout.displayWidth($0.detail))
        }
        let blockWidth = min(width, natural.max() ?? 0)
        let margin = String(repeating: " ", count: TextLayout.leftMargin(for: blockWidth, width: width))
        return rows.map { row in
            var detail = row.detail
            var room = blockWidth - row.number.count - (detail.isEmpty ? 0 : 2 + TextLayout.displayWidth(detail))
            if room < 4 {
                detail = ""
                room = blockWidth - row.number.count
            }
            let title = TextLayout.truncate(row.title, width: max(0, room))
            let gap = blockWidth - row.number.count - TextLayout.displayWidth(title) - TextLayout.displayWidth(detail)
            var spans = [Span(margin), Span(row.number, color: Theme.accent, bold: true),
                         Span(title, color: Theme.primaryText, reverse: row.number.hasPrefix("▸"))]
            if !detail.isEmpty {
                spans += [Span(String(repeating: " ", count: max(2, gap))), Span(detail, color: Theme.secondaryText)]
            }
            return StyledLine(spans)
        }
    }

    /// `[ Confirm ]  [ Re-align ]` with the primary action in the accent colour, packed onto as
    /// many rows as the width needs. The focused one reads `[▸Confirm◂]` (and is drawn in
    /// reverse), the same width, so moving the focus moves nothing else.
    private func actionRows(_ actions: [ScreenAction], focus: Int?) -> [StyledLine] {
        var rows: [[Span]] = []
        var current: [Span] = []
        var currentWidth = 0
        for (index, action) in actions.enumerated() {
            let focused = index == focus
            let title = TextLayout.truncate(action.title, width: width - 4)
            let label = focused ? "[▸" + title + "◂]" : "[ " + title + " ]"
            let labelWidth = TextLayout.displayWidth(label)
            let span: Span = switch action.role {
            case .primary: Span(label, color: Theme.accent, bold: true, reverse: focused)
            case .secondary: Span(label, color: Theme.primaryText, reverse: focused)
            case .destructive: Span(label, color: Theme.error, reverse: focused)
            }
            if currentWidth > 0, currentWidth + 2 + labelWidth <= width {
                current += [Span("  "), span]
                currentWidth += 2 + labelWidth
            } else {
                if !current.isEmpty { rows.append(current) }
                current = [span]
                currentWidth = labelWidth
            }
        }
        if !current.isEmpty { rows.append(current) }
        return rows.map(centered)
    }

    /// `[ ▌          ]` while empty, `[ •••••••• ◓▌ ]` once typing: always the same eight dots (the
    /// length of a password is nobody's business, nor how many times it was retyped) and a mark
    /// that turns with every key, so a person sees each key arrive. The brackets take the status
    /// colour: accent when focused, error on a failed attempt, muted when disabled. Without
    /// `typing`, the field as the flow describes it (its length in dots, for snapshots).
    private func passwordField(_ field: PasswordField, typing: PasswordTyping?) -> [Span] {
        let cells = max(4, min(width - 4, 24))
        let caret = field.focused && field.status != .disabled ? "▌" : ""
        let shown: String = if let typing {
            typing.isEmpty ? "" : "•••••••• " + PasswordTyping.marks[typing.keystrokes % PasswordTyping.marks.count]
        } else {
            String(repeating: "•", count: field.maskedLength)
        }
        let bullets = String(shown.prefix(max(0, cells - caret.count)))
        let padding = String(repeating: " ", count: max(0, cells - bullets.count - caret.count))
        let frameColor: RGB = switch field.status {
        case .error: Theme.error
        case .disabled: Theme.secondaryText
        case .normal: field.focused ? Theme.accent : Theme.secondaryText
        }
        return [Span("[ ", color: frameColor),
                Span(bullets, color: field.status == .disabled ? Theme.secondaryText : Theme.primaryText),
                Span(caret, color: Theme.accent), Span(padding), Span(" ]", color: frameColor)]
    }

    /// The count line, the bar, then rows of ■ (scanned) and □ (pending) sharing one margin.
    private func tileGrid(_ grid: TileGrid) -> [StyledLine] {
        var lines: [StyledLine] = []
        if let line = grid.progressLine, !line.isEmpty {
            lines += wrapped(line, color: Theme.primaryText)
        }
        if let fraction = grid.fraction {
            lines.append(centered(bar(fraction)))
        }
        guard !grid.tiles.isEmpty else { return lines }
        let perRow = max(1, min((width + 1) / 2, 16))
        let rowWidth = min(perRow, grid.tiles.count) * 2 - 1
        let margin = String(repeating: " ", count: TextLayout.leftMargin(for: rowWidth, width: width))
        if !lines.isEmpty { lines.append(StyledLine()) }
        for start in stride(from: 0, to: grid.tiles.count, by: perRow) {
            var spans = [Span(margin)]
            for (offset, tile) in grid.tiles[start..<min(start + perRow, grid.tiles.count)].enumerated() {
                if offset > 0 { spans.append(Span(" ")) }
                spans.append(tile.state == .scanned ? Span("■", color: Theme.accent) : Span("□", color: Theme.secondaryText))
            }
            lines.append(StyledLine(spans))
        }
        return lines
    }

    /// A line of the log area, status or key hints: in the secondary colour.
    func quietLine(_ text: String) -> String {
        StyledLine([Span(text, color: Theme.secondaryText)]).rendered(color: !noColor, trueColor: trueColor)
    }

    /// `text` with the margin that centres it.
    func centred(_ text: String) -> String {
        String(repeating: " ", count: TextLayout.leftMargin(for: TextLayout.displayWidth(text), width: width)) + text
    }

    private func wrapped(_ text: String, color: RGB, bold: Bool = false) -> [StyledLine] {
        TextLayout.wrap(text, width: width).map { centered([Span($0, color: color, bold: bold)]) }
    }

    private func centered(_ spans: [Span]) -> StyledLine {
        let used = spans.reduce(0) { $0 + TextLayout.displayWidth($1.text) }
        return StyledLine([Span(String(repeating: " ", count: TextLayout.leftMargin(for: used, width: width)))] + spans)
    }
}

extension TerminalRenderer {
    /// A run of text in one style.
    struct Span: Hashable, Sendable {
        var text: String
        var color: RGB?
        var bold: Bool
        /// Foreground and background swapped: the focused action or row.
        var reverse: Bool

        /// `text` is escaped here (issue 27): every line of a drawn screen is made of spans, so a
        /// device's name or a file's words can never move the cursor or clear the screen.
        init(_ text: String, color: RGB? = nil, bold: Bool = false, reverse: Bool = false) {
            self.text = PrintableText.escaping(text)
            self.color = color
            self.bold = bold
            self.reverse = reverse
        }
    }

    /// One line of a frame as styled runs; turned into bytes only at the end, so layout is done on
    /// plain text and escapes never count towards the width.
    struct StyledLine: Hashable, Sendable {
        var spans: [Span]

        init(_ spans: [Span] = []) { self.spans = spans }

        func rendered(color: Bool, trueColor: Bool = true) -> String {
            var line = ""
            for span in spans where !span.text.isEmpty {
                guard color, span.color != nil || span.bold || span.reverse else {
                    line += span.text
                    continue
                }
                line += ANSI.style(color: span.color, bold: span.bold, reverse: span.reverse, trueColor: trueColor) + span.text + ANSI.reset
            }
            var trimmed = Substring(line)
            while trimmed.last == " " { trimmed = trimmed.dropLast() }
            return String(trimmed)
        }
    }

    /// The few escape sequences the renderer uses.
    enum ANSI {
        static let escape = "\u{1B}["
        static let reset = escape + "0m"
        static let clearLine = escape + "2K"

        static let clearToEndOfLine = escape + "K"

        /// Moves the cursor to `row`, column 1 (rows count from 1).
        static func moveTo(row: Int) -> String { escape + "\(row);1H" }

        static func style(color: RGB?, bold: Bool, reverse: Bool = false, trueColor: Bool = true) -> String {
            var codes: [String] = []
            if bold { codes.append("1") }
            if reverse { codes.append("7") }
            if let color {
                codes.append(trueColor ? "38;2;\(color.red);\(color.green);\(color.blue)" : "38;5;\(paletteIndex(color))")
            }
            return escape + codes.joined(separator: ";") + "m"
        }

        /// The nearest colour of the 6×6×6 cube in the 256-colour palette.
        static func paletteIndex(_ color: RGB) -> Int {
            func level(_ component: UInt8) -> Int { Int((Double(component) / 255 * 5).rounded()) }
            return 16 + 36 * level(color.red) + 6 * level(color.green) + level(color.blue)
        }

        /// `text` without CSI escape sequences, for measuring what a person sees.
        static func strip(_ text: String) -> String {
            var result = ""
            var iterator = text.unicodeScalars.makeIterator()
            while let scalar = iterator.next() {
                guard scalar == "\u{1B}" else {
                    result.unicodeScalars.append(scalar)
                    continue
                }
                guard iterator.next() == "[" else { continue }
                while let next = iterator.next(), !(0x40...0x7E).contains(next.value) {}
            }
            return result
        }
    }
}

/// A password field as a person types into it. Only whether anything is typed and how many keys
/// have arrived (to turn the mark) are known here; the characters stay with the prompt.
struct PasswordTyping: Hashable, Sendable {
    var isEmpty: Bool
    var keystrokes: Int

    static let marks = ["◐", "◓", "◑", "◒"]
}
