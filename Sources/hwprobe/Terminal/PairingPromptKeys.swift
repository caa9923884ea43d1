/// What a key does at a pairing prompt: plain values fed keys, so the prompts' behaviour is
/// tested without a terminal (the terminal side only reads keys and draws what these say).
enum PairingPromptAction: Equatable, Sendable {
    /// Nothing happened (a key with no meaning here).
    case ignored
    /// What is shown changed: draw it again.
    case changed
    /// The passkey typed, complete.
    case passkey(UInt32)
    /// The numeric comparison answered: the numbers match, or not.
    case answered(Bool)
    /// Esc, Ctrl-C (passed through as a key) or Ctrl-D: the pairing is cancelled (0x08).
    case cancelled
}

/// Typing the six-digit passkey the device shows: digits, Backspace, Ctrl-U, Enter once all six
/// are there (a passkey is always six digits, leading zeros included: Vol 3 Part H §2.3.5.3).
struct PasskeyEntry: Equatable, Sendable {
    private(set) var digits: [UInt8] = []

    static let length = 6

    mutating func handle(_ key: Key) -> PairingPromptAction {
        switch key {
        case .character(let c):
            guard let digit = c.wholeNumberValue, c.isASCII, digits.count < Self.length else { return .ignored }
            digits.append(UInt8(digit))
            return .changed
        case .backspace, .delete:
            guard !digits.isEmpty else { return .ignored }
            digits.removeLast()
            return .changed
        case .eraseLine:
            guard !digits.isEmpty else { return .ignored }
            digits = []
            return .changed
        case .enter:
            guard digits.count == Self.length else { return .ignored }
            return .passkey(digits.reduce(0) { $0 * 10 + UInt32($1) })
        case .escape, .interrupt, .endOfInput:
            return .cancelled
        default:
            return .ignored
        }
    }

    /// `12____`: what is typed so far, the rest as places still to fill.
    var shown: String {
        digits.map(String.init).joined() + String(repeating: "_", count: Self.length - digits.count)
    }
}

/// The numeric comparison's yes/no: `y` the numbers match, `n` they do not; Enter alone
/// decides nothing (no default answer to a security question).
enum ComparisonAnswer {
    static func handle(_ key: Key) -> PairingPromptAction {
        switch key {
        case .character("y"), .character("Y"): .answered(true)
        case .character("n"), .character("N"): .answered(false)
        case .escape, .interrupt, .endOfInput: .cancelled
        default: .ignored
        }
    }
}
