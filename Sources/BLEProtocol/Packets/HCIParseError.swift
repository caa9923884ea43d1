/// Why bytes from a controller or peer could not be understood. Packets that fail to parse are
/// dropped by the layer above; the text says which packet and which field, for logs.
public enum HCIParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Fewer bytes than the packet's layout needs.
    case truncated(String)
    /// Enough bytes, but they contradict each other (a length that does not match, a bad value).
    case malformed(String)

    /// The words a person reads in messages and logs.
    public var description: String {
        switch self {
        case .truncated(let what): "truncated packet: \(what) (packet ignored)"
        case .malformed(let what): "malformed packet: \(what) (packet ignored)"
        }
    }
}
