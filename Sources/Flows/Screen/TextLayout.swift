/// Column arithmetic for renderers that draw on a character grid (the snapshot renderer here,
/// the terminal renderer in hwprobe). Widths are counted in terminal columns, not characters,
/// so an emoji or a CJK character takes two and a combining mark takes none.
package enum TextLayout {
    /// The columns `text` occupies on a terminal.
    package static func displayWidth(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + columns(of: $1) }
    }

    /// The columns one character (grapheme cluster) occupies: 0, 1 or 2.
    package static func columns(of character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        let value = first.value
        if value < 0x20 || (0x7F..<0xA0).contains(value) { return 0 }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        let properties = first.properties
        if properties.isEmojiPresentation { return 2 }
        if properties.isEmoji, scalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        return isWide(value) ? 2 : 1
    }

    /// The East Asian wide and fullwidth blocks that terminals draw two columns wide.
    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
             0xFFE0...0xFFE6, 0x20000...0x3FFFD:
            return true
        default:
            return false
        }
    }

    /// Greedy word wrap to `width` columns. Runs of spaces collapse to one, a newline starts a
    /// new paragraph (an empty line stays empty), and a word wider than the line is broken
    /// between characters, so no line ever exceeds `width`.
    package static func wrap(_ text: String, width: Int) -> [String] {
        let width = max(1, width)
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let words = paragraph.split(separator: " ", omittingEmptySubsequences: true)
            if words.isEmpty {
                lines.append("")
                continue
            }
            var current = ""
            var currentWidth = 0
            for word in words {
                let wordWidth = displayWidth(word)
                if currentWidth > 0, currentWidth + 1 + wordWidth <= width {
                    current += " " + word
                    currentWidth += 1 + wordWidth
                    continue
                }
                if currentWidth > 0 {
                    lines.append(current)
                    current = ""
                    currentWidth = 0
                }
                if wordWidth <= width {
                    current = String(word)
                    currentWidth = wordWidth
                } else {
                    var pieces = breakWord(word, width: width)
                    let last = pieces.removeLast()
                    lines.append(contentsOf: pieces)
                    current = last
                    currentWidth = displayWidth(last)
                }
            }
            lines.append(current)
        }
        return lines
    }

    /// Pieces of `word`, each at most `width` columns (a two-column character alone on a
    /// one-column line is the only exception, as it cannot be split).
    private static func breakWord(_ word: Substring, width: Int) -> [String] {
        var pieces: [String] = []
        var piece = ""
        var pieceWidth = 0
        for character in word {
            let columns = columns(of: character)
            if pieceWidth + columns > width, !piece.isEmpty {
                pieces.append(piece)
                piece = ""
                pieceWidth = 0
            }
            piece.append(character)
            pieceWidth += columns
        }
        pieces.append(piece)
        return pieces
    }

    /// `text` cut to at most `width` columns, ending in `…` when something was cut.
    package static func truncate(_ text: String, width: Int) -> String {
        guard displayWidth(text) > width else { return text }
        guard width > 0 else { return "" }
        var result = ""
        var used = 0
        for character in text {
            let columns = columns(of: character)
            if used + columns > width - 1 { break }
            result.append(character)
            used += columns
        }
        return result + "…"
    }

    /// `line` with enough leading spaces to sit in the middle of `width` columns (rounding to
    /// the left). No trailing spaces are added, and a line already too wide is left alone.
    package static func center(_ line: String, width: Int) -> String {
        String(repeating: " ", count: leftMargin(for: displayWidth(line), width: width)) + line
    }

    /// The left margin that centres a block `blockWidth` columns wide in `width` columns.
    package static func leftMargin(for blockWidth: Int, width: Int) -> Int {
        max(0, (width - blockWidth) / 2)
    }

    /// Wraps `text` and centres each resulting line.
    package static func wrapCentered(_ text: String, width: Int) -> [String] {
        wrap(text, width: width).map { center($0, width: width) }
    }

    /// The number of cells of a `cells`-wide bar to fill for `fraction`, clamped to 0...1
    /// (not-a-number counts as 0). Rounded to the nearest cell, but only a complete job fills
    /// the last cell and only no progress at all leaves the first one empty.
    package static func filledCells(_ fraction: Double, cells: Int) -> Int {
        guard cells > 0 else { return 0 }
        let value = fraction.isNaN ? 0 : min(max(fraction, 0), 1)
        if value == 0 { return 0 }
        if value == 1 { return cells }
        return min(max(Int((value * Double(cells)).rounded()), 1), cells - 1)
    }

    /// `fraction` as a whole percentage, clamped to 0...100, without claiming 100 before the end.
    package static func percent(_ fraction: Double) -> Int {
        let value = fraction.isNaN ? 0 : min(max(fraction, 0), 1)
        if value == 1 { return 100 }
        return min(Int((value * 100).rounded(.down)), 99)
    }
}
