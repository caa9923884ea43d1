import HAL

/// HAL's `ByteReader` as the packet parsers use it: running short is `HCIParseError.truncated`,
/// naming the packet and the field.
typealias PacketReader = ByteReader<HCIParseError>

extension ByteReader where Failure == HCIParseError {
    init(_ bytes: [UInt8], context: String) {
        self.init(bytes, context: context) { context, field, needed, available in
            .truncated("\(context): \(field) needs \(needed) bytes, \(available) left")
        }
    }

    mutating func address(kind: BLEAddress.Kind, _ field: String) throws(HCIParseError) -> BLEAddress {
        let raw = try bytes(6, field)
        guard let address = BLEAddress(littleEndian: raw, kind: kind) else {
            throw .malformed("\(context): \(field) is not a 6-byte address")
        }
        return address
    }

    mutating func uuid(byteCount: Int, _ field: String) throws(HCIParseError) -> BluetoothUUID {
        let raw = try bytes(byteCount, field)
        guard let uuid = BluetoothUUID(littleEndian: raw) else {
            throw .malformed("\(context): \(field) of \(byteCount) bytes is not a UUID")
        }
        return uuid
    }

    /// For layouts with nothing after the last field: leftovers mean the length was wrong.
    func expectEnd() throws(HCIParseError) {
        guard isAtEnd else { throw .malformed("\(context): \(remaining) unexpected trailing bytes") }
    }
}
