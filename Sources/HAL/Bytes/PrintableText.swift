/// Text from devices, files and arguments made safe to print for a person (issue 27).
///
/// A BLE name, a cassette line or a path can carry terminal control: `ESC]0;…BEL` retitles the
/// window, `ESC[2J` clears the screen, a C1 CSI (U+009B) does the same on terminals that take
/// it, `\r` overwrites what was printed. Every control character (C0, DEL, C1) is shown instead
/// as a visible escape: `\x1B`, `\x7F`, `\u{9B}`. Bytes that are not UTF-8 never get this far
/// as themselves: decoding them (``escaping(bytes:)``) shows each as `\xNN`.
public enum PrintableText {
    /// `text` with its control characters made visible. `keepingLayout` keeps newline and tab,
    /// for whole messages whose lines are the program's own; a single field (a name, a cell, a
    /// line of a drawn screen) escapes them too.
    public static func escaping(_ text: String, keepingLayout: Bool = false) -> String {
        // The common case, nothing to escape, costs one pass over the UTF-8 and no copy.
        guard mayNeedEscape(text, keepingLayout: keepingLayout),
              text.unicodeScalars.contains(where: { needsEscape($0, keepingLayout: keepingLayout) }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if needsEscape(scalar, keepingLayout: keepingLayout) {
                out.append(contentsOf: visible(scalar).unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// Bytes from outside as printable text: valid UTF-8 as its characters (controls escaped),
    /// each byte that is not part of valid UTF-8 as `\xNN`.
    public static func escaping(bytes: [UInt8], keepingLayout: Bool = false) -> String {
        var out = ""
        var index = 0
        while index < bytes.count {
            let length = utf8SequenceLength(bytes, at: index)
            if length == 0 {
                out += "\\x" + hex(bytes[index])
                index += 1
            } else {
                out += escaping(String(decoding: bytes[index..<(index + length)], as: UTF8.self), keepingLayout: keepingLayout)
                index += length
            }
        }
        return out
    }

    /// False when `text` certainly has no control character: no byte below 0x20 (but newline and
    /// tab when the layout is kept), no DEL, and no 0xC2 lead byte (C1 controls, U+0080–U+009F, are
    /// C2 80–C2 9F in UTF-8). A byte scan, because every line printed passes here.
    private static func mayNeedEscape(_ text: String, keepingLayout: Bool) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            bytes.contains { byte in
                byte == 0x7F || byte == 0xC2 || (byte < 0x20 && !(keepingLayout && (byte == 0x0A || byte == 0x09)))
            }
        }
    }

    /// Whether `scalar` is a control character a terminal would act on.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private static func needsEscape(_ scalar: Unicode.Scalar, keepingLayout: Bool) -> Bool {
        guard isControl(scalar) else { return false }
        return !(keepingLayout && (scalar == "\n" || scalar == "\t"))
    }

    private static func visible(_ scalar: Unicode.Scalar) -> String {
        scalar.value < 0x80 ? "\\x" + hex(UInt8(scalar.value)) : "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    /// The length of the valid UTF-8 sequence starting at `index`, or 0 when it is not one.
    private static func utf8SequenceLength(_ bytes: [UInt8], at index: Int) -> Int {
        let first = bytes[index]
        let (length, low, high): (Int, UInt8, UInt8) = switch first {
        case 0x00...0x7F: (1, 0x80, 0xBF)
        case 0xC2...0xDF: (2, 0x80, 0xBF)
        case 0xE0: (3, 0xA0, 0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: (3, 0x80, 0xBF)
        case 0xED: (3, 0x80, 0x9F)
        case 0xF0: (4, 0x90, 0xBF)
        case 0xF1...0xF3: (4, 0x80, 0xBF)
        case 0xF4: (4, 0x80, 0x8F)
        default: (0, 0, 0)
        }
        guard length > 1 else { return length }
        guard index + length <= bytes.count, (low...high).contains(bytes[index + 1]) else { return 0 }
        for offset in 2..<length where !(0x80...0xBF).contains(bytes[index + offset]) { return 0 }
        return length
    }
}
