/// Bytes and words as hexadecimal text, in the one place every layer takes them from.
///
/// Upper case (`4F`, `200C`) is how Bluetooth and USB documents write codes and handles, and how
/// our messages name them; lower case (`4f`) is how lsusb, btmon and our file formats (cassettes,
/// `gatt --read`'s values) write bytes. Hand-rolled rather than `String(format:)`, which goes
/// through Foundation and varargs for every byte.
public enum Hex {
    /// Which case the digits A to F are written in: upper for codes and handles, lower for dumped bytes.
    public enum Letters: Sendable {
        /// `0A1F`: how specs and HCI logs print bytes.
        case upper
        /// `0a1f`: how our file formats and `gatt --read` write them.
        case lower
    }

    private static let upperDigits = Array("0123456789ABCDEF".utf8)
    private static let lowerDigits = Array("0123456789abcdef".utf8)

    /// Two digits: `0A`.
    public static func byte(_ value: UInt8, _ letters: Letters = .upper) -> String {
        let digits = letters == .upper ? upperDigits : lowerDigits
        return String(decoding: [digits[Int(value >> 4)], digits[Int(value & 0xF)]], as: UTF8.self)
    }

    /// Four digits, most significant first: `200C`.
    public static func word(_ value: UInt16, _ letters: Letters = .upper) -> String {
        byte(UInt8(value >> 8), letters) + byte(UInt8(value & 0xFF), letters)
    }

    /// Every byte in order, two digits each, joined by `separator` (`"0A1B"`, `"0A 1B"`).
    ///
    /// Written straight into the string's storage from the bytes' contiguous buffer: a served
    /// stream spells every value it notifies, and the generic per-byte walk this replaced was an
    /// eighth of `serve`'s CPU.
    public static func string(_ bytes: some Sequence<UInt8>, _ letters: Letters = .upper, separator: String = "") -> String {
        if let text = bytes.withContiguousStorageIfAvailable({ string(buffer: $0, letters, separator: separator) }) { return text }
        return Array(bytes).withUnsafeBufferPointer { string(buffer: $0, letters, separator: separator) }
    }

    private static func string(buffer: UnsafeBufferPointer<UInt8>, _ letters: Letters, separator: String) -> String {
        guard !buffer.isEmpty else { return "" }
        var separator = separator
        return separator.withUTF8 { between in
            let capacity = buffer.count * 2 + (buffer.count - 1) * between.count
            let letterBase: UInt8 = letters == .upper ? UInt8(ascii: "A") - 10 : UInt8(ascii: "a") - 10
            return String(unsafeUninitializedCapacity: capacity) { out in
                var at = 0
                for (index, value) in buffer.enumerated() {
                    if index > 0 {
                        for byte in between {
                            out[at] = byte
                            at += 1
                        }
                    }
                    let high = value >> 4, low = value & 0xF
                    out[at] = high < 10 ? UInt8(ascii: "0") + high : letterBase + high
                    out[at + 1] = low < 10 ? UInt8(ascii: "0") + low : letterBase + low
                    at += 2
                }
                return at
            }
        }
    }

    /// The bytes of `text`, two digits each in either case, no separators; nil for an odd length
    /// or anything that is not a hex digit.
    public static func bytes(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    /// One hex digit's value, for parsers that write the bytes where they belong (a secret's own
    /// storage) rather than into an array first.
    package static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
