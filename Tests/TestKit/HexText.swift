import HAL

/// `"04 0E 04 01"` → bytes, for writing test data the way specs and captures print it: white
/// space (spaces, line breaks) is ignored, either case is read. Bad hex is a bug in the test, so
/// it traps with the text. Built on HAL's `Hex`, the product's own reader.
public func bytes(hex text: String) -> [UInt8] {
    let digits = text.filter { !$0.isWhitespace }
    guard let bytes = Hex.bytes(digits) else { preconditionFailure("not hex (odd length or not a digit): \(text)") }
    return bytes
}

/// Bytes as lower-case hex without separators, the way our formats and `gatt --read` write them.
public func hexString(_ bytes: [UInt8]) -> String { Hex.string(bytes, .lower) }
