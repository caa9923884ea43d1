import HAL

/// A 24-bit colour. Theme tokens are written as hex, the way design documents give them,
/// and renderers take the channels they need.
package struct RGB: Hashable, Sendable, CustomStringConvertible {
    package var red: UInt8
    package var green: UInt8
    package var blue: UInt8

    package init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// A colour from a literal like `0xff0040`; bits above the low 24 are ignored.
    package init(_ value: UInt32) {
        self.init(red: UInt8((value >> 16) & 0xFF), green: UInt8((value >> 8) & 0xFF), blue: UInt8(value & 0xFF))
    }

    /// A colour from `#rrggbb` or `rrggbb` (either case); `nil` for anything else.
    package init?(hex: String) {
        var digits = Substring(hex)
        if digits.hasPrefix("#") { digits = digits.dropFirst() }
        guard digits.count == 6, digits.allSatisfy(\.isHexDigit), let value = UInt32(digits, radix: 16) else {
            return nil
        }
        self.init(value)
    }

    /// `#rrggbb` in lower case, so the same colour always prints the same way.
    package var hex: String {
        "#" + Hex.string([red, green, blue], .lower)
    }

    /// The colour as lower-case `#rrggbb`, so logs and snapshots print it the way design documents write it.
    public var description: String { hex }
}

/// The colour tokens every renderer draws with, so a phone, a terminal and a web view agree.
package enum Theme {
    /// Icons, progress and the primary action.
    package static let accent = RGB(0xFF0040)
    /// The flat background behind every flow screen.
    package static let background = RGB(0x052235)
    /// Titles and main text.
    package static let primaryText = RGB(0xFFFFFF)
    /// Subtitles and supporting text: a muted light blue-grey that stays readable on the background.
    package static let secondaryText = RGB(0x9FB3C8)
    /// Failures. Lighter than the accent so an error never reads as mere decoration.
    public static let error = RGB(0xFF6B6B)
    /// Things that finished well.
    package static let success = RGB(0x3DDC84)
    /// "Taking longer than usual" and similar cautions.
    package static let warning = RGB(0xFFB020)

    /// The colour for a footer's tone.
    package static func color(for tone: Footer.Tone) -> RGB {
        switch tone {
        case .normal: primaryText
        case .secondary: secondaryText
        case .error: error
        case .success: success
        case .warning: warning
        }
    }
}
