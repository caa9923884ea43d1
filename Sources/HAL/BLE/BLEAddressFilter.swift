/// An address as a person types it: `AA:BB:CC:DD:EE:FF` matches that device whatever its address
/// type, `…/public` or `…/random` only that type. People copy addresses from a list or a label
/// without the type, and a mirror's random address must not be missed because of it.
public struct BLEAddressFilter: Hashable, Sendable, CustomStringConvertible {
    /// Most significant byte first, as printed.
    public let bytes: [UInt8]
    /// Nil when the person did not say.
    public let kind: BLEAddress.Kind?

    /// Parses `AA:BB:CC:DD:EE:FF`, optionally followed by `/public` or `/random`.
    public init?(string: String) {
        let kind: BLEAddress.Kind?
        let text: String
        if let slash = string.firstIndex(of: "/") {
            guard let parsed = BLEAddress.Kind(rawValue: string[string.index(after: slash)...].lowercased()) else { return nil }
            kind = parsed
            text = String(string[..<slash])
        } else {
            kind = nil
            text = string
        }
        guard let address = BLEAddress(string: text) else { return nil }
        bytes = address.bytes
        self.kind = kind
    }

    /// A filter for exactly `address`; `anyKind` drops its type so either kind matches.
    public init(_ address: BLEAddress, anyKind: Bool = false) {
        bytes = address.bytes
        kind = anyKind ? nil : address.kind
    }

    /// True for an address with these bytes, and this type when the filter has one.
    public func matches(_ address: BLEAddress) -> Bool {
        address.bytes == bytes && (kind == nil || kind == address.kind)
    }

    /// `AA:BB:CC:DD:EE:FF`, with `/random` or `/public` when the type was given.
    public var description: String {
        let plain = BLEAddress(bytes: bytes)?.description ?? ""
        return kind.map { "\(plain)/\($0.rawValue)" } ?? plain
    }
}
