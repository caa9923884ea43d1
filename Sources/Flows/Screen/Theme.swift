import HAL

/// A 24-bit colour. Theme tokens are written as hex, the way design documents give them,
/// and renderers take the channels they need.
public struct RGB: Hashable, Sendable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// A colour from a literal like `0xff0040`; bits above the low 24 are ignored.
    public init(_ value: UInt32) {
        self.init(red: UInt8((value >> 16) & 0xFF), green: UInt8((value >> 8) & 0xFF), blue: UInt8(value & 0xFF))
    }

    /// A colour from `#rrggbb` or `rrggbb` (either case); `nil` for anything else.
    public init?(hex: String) {
        var digits = Substring(hex)
        if digits.hasPrefix("#") { digits = digits.dropFirst() }
        guard digits.count == 6, digits.allSatisfy(\.isHexDigit), let value = UInt32(digits, radix: 16) else {
            return nil
        }
        self.init(value)
    }

    /// `#rrggbb` in lower case, so the same colour always prints the same way.
    public var hex: String {
        "#" + Hex.string([red, green, blue], .lower)
    }

    public var description: String { hex }
}

/// The colour tokens every renderer draws with, so a phone, a terminal and a web view agree.
public enum Theme {
    /// Icons, progress and the primary action.
    public static let accent = RGB(0xFF0040)
    /// The flat background behind every flow screen.
    public static let background = RGB(0x052235)
    /// Titles and main text.
    public static let primaryText = RGB(0xFFFFFF)
    /// Subtitles and supporting text: a muted light blue-grey that stays readable on the background.
    public static let secondaryText = RGB(0x9FB3C8)
    /// Failures. Lighter than the accent so an error never reads as mere decoration.
    public static let error = RGB(0xFF6B6B)
    /// Things that finished well.
    public static let success = RGB(0x3DDC84)
    /// "Taking longer than usual" and similar cautions.
    public static let warning = RGB(0xFFB020)

    /// The colour for a footer's tone.
    public static func color(for tone: Footer.Tone) -> RGB {
        switch tone {
        case .normal: primaryText
        case .secondary: secondaryText
        case .error: error
        case .success: success
        case .warning: warning
        }
    }
}
