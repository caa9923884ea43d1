/// Why a Weight Scale or Body Composition value could not be read. Drivers skip such values;
/// the message says what was wrong with the bytes.
public enum StandardScaleParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The value ended before a field its flags announced.
    case truncated(field: String, needed: Int, available: Int)
    /// The parts of a multi-packet measurement do not belong together.
    case inconsistentParts(String)

    /// One line for logs and CLI output, naming the field and byte counts.
    public var description: String {
        switch self {
        case .truncated(let field, let needed, let available):
            "the value ends before \(field) (needs \(needed) byte\(needed == 1 ? "" : "s"), \(available) left)"
        case .inconsistentParts(let why): "the packets of a multi-packet measurement disagree: \(why)"
        }
    }
}
