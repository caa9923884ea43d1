import HAL

/// Why an SMP PDU could not be read, and the Pairing Failed reason that answers it (Vol 3 Part H
/// §3.3: an unknown code is Command Not Supported; a wrong length or a reserved value, Invalid
/// Parameters).
public enum SMPParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Not even a code octet.
    case empty
    /// A code the specification does not define (0x00, 0x0F and up).
    case unknownCode(UInt8)
    /// Each SMP command has one fixed length; this one had another.
    case wrongLength(code: UInt8, name: String, expected: Int, actual: Int)
    /// The right length, but a field holds a reserved value.
    case invalidValue(String)

    /// The reason a Pairing Failed answering this PDU carries.
    public var pairingFailureReason: PairingFailureReason {
        switch self {
        case .unknownCode: .commandNotSupported
        case .empty, .wrongLength, .invalidValue: .invalidParameters
        }
    }

    public var description: String {
        switch self {
        case .empty: "empty SMP PDU (no code)"
        case .unknownCode(let code): "SMP code 0x\(Hex.byte(code)) is not defined"
        case .wrongLength(let code, let name, let expected, let actual):
            "SMP \(name) (0x\(Hex.byte(code))) has \(actual) parameter bytes, it must have \(expected)"
        case .invalidValue(let what): "SMP PDU: \(what)"
        }
    }
}
