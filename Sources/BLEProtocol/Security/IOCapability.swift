/// What a device can show and take from its user, which with the peer's decides how a pairing is
/// authenticated (Vol 3 Part H §2.3.2, Table 3.4; the CLI's `--io`).
public enum IOCapability: UInt8, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Can show a six-digit number, cannot take an answer.
    case displayOnly = 0x00
    /// Can show a number and take yes or no.
    case displayYesNo = 0x01
    /// Can take digits, shows nothing.
    case keyboardOnly = 0x02
    /// Neither shows nor takes anything: every pairing is Just Works.
    case noInputNoOutput = 0x03
    /// Can show a number and take digits.
    case keyboardDisplay = 0x04

    /// The CLI's spelling (`--io display-yes-no`).
    public var description: String {
        switch self {
        case .displayOnly: "display"
        case .displayYesNo: "display-yes-no"
        case .keyboardOnly: "keyboard"
        case .noInputNoOutput: "none"
        case .keyboardDisplay: "keyboard-display"
        }
    }

    /// Parses the CLI's spelling; nil for anything else.
    public init?(option: String) {
        guard let match = Self.allCases.first(where: { $0.description == option }) else { return nil }
        self = match
    }
}
