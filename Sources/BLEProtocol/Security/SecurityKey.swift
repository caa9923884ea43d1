import CCrypto
import HAL

/// 128 bits the Security Manager works with: a key (LTK, STK, TK, IRK, CSRK, MacKey), a confirm
/// or random value, a DHKey check. Held most significant octet first, as the Core Specification
/// writes its values and sample data (Vol 3 Part H §2.2); SMP PDUs carry them least significant
/// octet first, which ``init(littleEndian:)`` and ``littleEndianBytes`` convert.
///
/// Its description never shows the bytes: a key interpolated into a log line or a JSON report by
/// mistake prints as `SecurityKey(16 bytes)`. Code that must show a value (a test's failure
/// message) asks for ``revealedHex`` by name.
public struct SecurityKey: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The 16 octets, most significant first.
    public let bytes: [UInt8]

    /// Sixteen octets, most significant first; nil for any other count.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// From the 16 octets of an SMP PDU or an HCI command, least significant first.
    public init?(littleEndian raw: some Collection<UInt8>) {
        self.init(bytes: Array(raw.reversed()))
    }

    /// A 128-bit number whose low 32 bits are `value`: a legacy passkey as the TK, or the
    /// passkey as `ra`/`rb` of Secure Connections' DHKey check (Vol 3 Part H §2.3.5.5, §2.3.5.6.5).
    public init(number value: UInt32) {
        bytes = [UInt8](repeating: 0, count: 12) + [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    /// All zeros: the TK of Just Works, the `r` of Just Works and Numeric Comparison in `f6`.
    public static let zero = SecurityKey(number: 0)

    /// The octets least significant first, as PDUs and HCI commands carry them.
    public var littleEndianBytes: [UInt8] { bytes.reversed() }

    /// The key cut to `size` octets of entropy: the most significant `16 − size` octets zeroed
    /// (Vol 3 Part H §2.3.4, the encryption key size a pairing agreed).
    public func masked(toSize size: Int) -> SecurityKey {
        let kept = min(16, max(0, size))
        return SecurityKey(unchecked: [UInt8](repeating: 0, count: 16 - kept) + bytes.suffix(kept))
    }

    /// True for the all-zero value, which as an IRK means "no IRK": resolving addresses with it
    /// would accept addresses anyone can make.
    public var isZero: Bool { bytes.allSatisfy { $0 == 0 } }

    /// The value as hexadecimal, most significant first, for a test's failure message or a file
    /// that must hold it (the bond store): never for logs or output a person reads.
    public var revealedHex: String { Hex.string(bytes, .lower) }

    /// Constant time in the value: confirm and check values are compared with what was computed
    /// from secrets, and an early exit would say how many leading bytes matched.
    public static func == (lhs: SecurityKey, rhs: SecurityKey) -> Bool {
        lhs.bytes.count == rhs.bytes.count && lhs.bytes.withUnsafeBytes { left in
            rhs.bytes.withUnsafeBytes { right in CRYPTO_memcmp(left.baseAddress, right.baseAddress, left.count) == 0 }
        }
    }

    /// Shows the length only, never the value.
    public var description: String { "SecurityKey(16 bytes)" }
    /// The same as `description`: the debugger and `dump` see no bytes either.
    public var debugDescription: String { description }

    /// For values already known to be 16 octets (built here).
    init(unchecked bytes: [UInt8]) { self.bytes = bytes }
}
