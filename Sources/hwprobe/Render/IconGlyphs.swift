/// What a terminal can draw for an SF Symbols name. Screens name icons the way the phone app
/// does; a terminal has no symbol font, so each name maps to one Unicode character instead.
enum IconGlyphs {
    /// Drawn for any name the table doesn't know, so a new icon never breaks a screen.
    static let fallback = "◇"

    /// Names are matched exactly first, then without their `.fill` / `.circle` variants.
    static let table: [String: String] = [
        "qrcode.viewfinder": "▦",
        "qrcode": "▦",
        "viewfinder": "◎",
        "camera": "◎",
        "scope": "◎",
        "lock.shield": "🔒",
        "lock": "🔒",
        "lock.open": "🔓",
        "key": "⚿",
        "scalemass": "⚖",
        "dot.radiowaves.left.and.right": "⌁",
        "antenna.radiowaves.left.and.right": "⌁",
        "wave.3.right": "⌁",
        "checkmark": "✓",
        "checkmark.seal": "✓",
        "xmark": "✗",
        "xmark.octagon": "✗",
        "exclamationmark.triangle": "⚠",
        "exclamationmark.circle": "⚠",
        "hourglass": "⧗",
        "clock": "◷",
        "timer": "◷",
        "battery.100": "▮",
        "iphone": "▯",
        "iphone.and.arrow.forward": "▯",
        "figure.stand": "☺",
        "figure.walk": "☺",
        "arrow.down.to.line": "⤓",
        "thermometer": "≋",
        "flame": "≋",
        "person.crop.rectangle": "☺",
        "doc.text.magnifyingglass": "⌕",
        "magnifyingglass": "⌕",
    ]

    /// The glyph for `name`: an exact match, else the name with its variant suffixes removed
    /// (`checkmark.circle.fill` → `checkmark`), else the fallback.
    static func glyph(for name: String) -> String {
        if let glyph = table[name] { return glyph }
        var base = Substring(name)
        while let suffix = variantSuffixes.first(where: { base.hasSuffix($0) }) {
            base = base.dropLast(suffix.count)
            if let glyph = table[String(base)] { return glyph }
        }
        return fallback
    }

    private static let variantSuffixes = [".fill", ".circle", ".square"]
}
