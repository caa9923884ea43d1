/// A key as a person pressed it, decoded from the bytes a terminal sends.
enum Key: Hashable, Sendable {
    case up, down, left, right, home, end
    case tab, backTab
    case enter
    case escape
    case backspace
    case delete
    /// Ctrl-D: end of input on an empty line.
    case endOfInput
    /// Ctrl-U: erase the whole line.
    case eraseLine
    /// Ctrl-C when the terminal passes it through instead of raising SIGINT.
    case interrupt
    /// Ctrl-L: redraw the screen.
    case redraw
    /// A printable character (letters, digits, punctuation, anything non-ASCII).
    case character(Character)
    /// An escape sequence or control byte with no meaning here.
    case unknown
}
