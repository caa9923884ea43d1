/// A device address as the air carries it, plus whether it is public or random (a connection needs both).
public struct BLEAddress: Hashable, Sendable, CustomStringConvertible {
    /// Whether the address is the device's fixed public one or a random one it chose; connecting needs the right one.
    public enum Kind: String, Sendable, Hashable {
        /// An IEEE-assigned address, fixed for the device's life.
        case `public`
        /// A random address (static or private), which a device may change.
        case random
    }

    /// Most significant byte first, as printed (`AA:BB:CC:DD:EE:FF`).
    public let bytes: [UInt8]
    /// Public or random, as the advertising report said; two addresses with equal bytes but different kinds differ.
    public let kind: Kind

    /// Takes six bytes in printed order; nil for any other count.
    public init?(bytes: [UInt8], kind: Kind = .public) {
        guard bytes.count == 6 else { return nil }
        self.bytes = bytes
        self.kind = kind
    }

    /// From the 6 little-endian bytes of an HCI packet.
    public init?(littleEndian raw: some Collection<UInt8>, kind: Kind) {
        self.init(bytes: Array(raw.reversed()), kind: kind)
    }

    /// Parses `AA:BB:CC:DD:EE:FF`, optionally followed by `/public` or `/random`.
    public init?(string: String, defaultKind: Kind = .public) {
        let parts = string.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return nil }
        var kind = defaultKind
        if parts.count == 2 {
            guard let k = Kind(rawValue: String(parts[1]).lowercased()) else { return nil }
            kind = k
        }
        let octets = parts[0].split(separator: ":", omittingEmptySubsequences: false)
        guard octets.count == 6 else { return nil }
        var out: [UInt8] = []
        for octet in octets {
            // Two hex digits exactly: `UInt8(_:radix:)` would also take a sign ("+A").
            guard octet.count == 2, let value = Hex.bytes(octet)?.first else { return nil }
            out.append(value)
        }
        self.init(bytes: out, kind: kind)
    }

    /// The bytes in the order HCI packets carry them, least significant first.
    public var littleEndianBytes: [UInt8] { bytes.reversed() }

    /// `AA:BB:CC:DD:EE:FF`, the contract's form (the kind is not part of it).
    public var description: String {
        bytes.map { b in
            let d = Array("0123456789ABCDEF")
            return String([d[Int(b >> 4)], d[Int(b & 0xF)]])
        }.joined(separator: ":")
    }
}
