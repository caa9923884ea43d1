import HAL

/// HAL's `ByteReader` as the measurement parsers use it: running short is
/// `StandardScaleParseError.truncated`, naming the field.
typealias MeasurementReader = ByteReader<StandardScaleParseError>

extension ByteReader where Failure == StandardScaleParseError {
    init(_ bytes: [UInt8]) {
        self.init(bytes) { _, field, needed, available in .truncated(field: field, needed: needed, available: available) }
    }

    /// The 7-byte Date Time characteristic layout (GATT Specification Supplement, "Date Time").
    mutating func dateTime(_ field: String) throws(StandardScaleParseError) -> BluetoothDateTime {
        try require(7, for: field)
        let year = try u16(field)
        return BluetoothDateTime(year: year, month: try u8(field), day: try u8(field),
                                 hours: try u8(field), minutes: try u8(field), seconds: try u8(field))
    }
}
