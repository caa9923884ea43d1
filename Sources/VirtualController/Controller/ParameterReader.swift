import HAL

/// A command whose parameters are short, or out of range: Invalid HCI Command Parameters.
struct InvalidParameters: Error {}

/// HAL's `ByteReader` over a command's parameters. Every read is checked, so a host that sends
/// a command with the wrong length gets Invalid HCI Command Parameters, never a crash.
typealias ParameterReader = ByteReader<InvalidParameters>

extension ByteReader where Failure == InvalidParameters {
    typealias Short = InvalidParameters

    init(_ bytes: [UInt8]) {
        self.init(bytes) { _, _, _, _ in InvalidParameters() }
    }

    /// An address type byte (0 public, 1 random, 2/3 their identity forms) and six address bytes.
    mutating func address() throws(InvalidParameters) -> (type: UInt8, address: BLEAddress) {
        let type = try u8()
        let raw = try bytes(6)
        guard let address = BLEAddress(littleEndian: raw, kind: type & 0x01 == 0 ? .public : .random) else { throw InvalidParameters() }
        return (type, address)
    }
}
