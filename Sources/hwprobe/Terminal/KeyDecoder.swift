/// Turns the bytes a terminal sends into keys (sans-IO: fed bytes, returns keys).
///
/// A lone Esc and the start of an escape sequence (`ESC [ C` for Right) begin with the same
/// byte, so the decoder holds an unfinished sequence back until more bytes come or the reader
/// says the line went quiet (``flush()``, after a few tens of milliseconds): then a pending Esc is
/// the Esc key. Sequences are bounded (an endless one is given up as `.unknown`), so hostile input
/// cannot grow the buffer.
struct KeyDecoder: Sendable {
    private var pending: [UInt8] = []
    /// Longer than any sequence a terminal sends for a key.
    static let maximumSequence = 16

    /// Whether bytes are held back waiting for the rest of a sequence.
    var isWaiting: Bool { !pending.isEmpty }

    mutating func feed(_ bytes: some Sequence<UInt8>) -> [Key] {
        var keys: [Key] = []
        for byte in bytes {
            pending.append(byte)
            while let (key, used) = Self.decode(pending, final: false) {
                keys.append(key)
                pending.removeFirst(used)
                if pending.isEmpty { break }
            }
            if pending.count > Self.maximumSequence {
                keys.append(.unknown)
                pending.removeAll()
            }
        }
        return keys
    }

    /// The input went quiet: whatever is held back is taken as it stands.
    mutating func flush() -> [Key] {
        var keys: [Key] = []
        while !pending.isEmpty {
            if let (key, used) = Self.decode(pending, final: true) {
                keys.append(key)
                pending.removeFirst(used)
            } else {
                keys.append(.unknown)
                pending.removeAll()
            }
        }
        return keys
    }

    /// The first key in `bytes` and how many bytes it used; nil when more bytes are needed.
    /// `final` means no more bytes will come for this key.
    private static func decode(_ bytes: [UInt8], final: Bool) -> (Key, Int)? {
        guard let first = bytes.first else { return nil }
        switch first {
        case 0x1B:
            return escapeSequence(bytes, final: final)
        case 0x0D, 0x0A: return (.enter, 1)
        case 0x09: return (.tab, 1)
        case 0x7F, 0x08: return (.backspace, 1)
        case 0x04: return (.endOfInput, 1)
        case 0x15: return (.eraseLine, 1)
        case 0x03: return (.interrupt, 1)
        case 0x0C: return (.redraw, 1)
        case 0x00..<0x20: return (.unknown, 1)
        case 0x20..<0x7F: return (.character(Character(Unicode.Scalar(first))), 1)
        default:
            return utf8Character(bytes, final: final)
        }
    }

    private static func escapeSequence(_ bytes: [UInt8], final: Bool) -> (Key, Int)? {
        guard bytes.count >= 2 else { return final ? (.escape, 1) : nil }
        let second = bytes[1]
        switch second {
        case UInt8(ascii: "["), UInt8(ascii: "O"):
            // CSI or SS3: parameters and intermediates, then one final byte in 0x40...0x7E.
            var index = 2
            while index < bytes.count {
                let byte = bytes[index]
                if (0x40...0x7E).contains(byte) {
                    return (csiKey(introducer: second, parameters: Array(bytes[2..<index]), final: byte), index + 1)
                }
                guard (0x20...0x3F).contains(byte) else { return (.unknown, index) }
                index += 1
            }
            // ESC [ with nothing after it when the line went quiet: Esc, then '['.
            if final { return bytes.count == 2 ? (.escape, 1) : (.unknown, bytes.count) }
            return nil
        case 0x1B:
            // Esc pressed twice: the first one stands alone.
            return (.escape, 1)
        default:
            // Alt+key arrives as ESC key; take it as Esc followed by the key.
            return (.escape, 1)
        }
    }

    private static func csiKey(introducer: UInt8, parameters: [UInt8], final: UInt8) -> Key {
        let text = String(decoding: parameters, as: UTF8.self)
        switch final {
        case UInt8(ascii: "A"): return .up
        case UInt8(ascii: "B"): return .down
        case UInt8(ascii: "C"): return .right
        case UInt8(ascii: "D"): return .left
        case UInt8(ascii: "H"): return .home
        case UInt8(ascii: "F"): return .end
        case UInt8(ascii: "Z"): return .backTab
        case UInt8(ascii: "~"):
            switch text.split(separator: ";").first {
            case "1", "7": return .home
            case "4", "8": return .end
            case "3": return .delete
            default: return .unknown
            }
        default:
            return .unknown
        }
    }

    /// A multi-byte UTF-8 character (so a password may hold any letter).
    private static func utf8Character(_ bytes: [UInt8], final: Bool) -> (Key, Int)? {
        let first = bytes[0]
        let length = switch first {
        case 0xC2...0xDF: 2
        case 0xE0...0xEF: 3
        case 0xF0...0xF4: 4
        default: 0
        }
        guard length > 0 else { return (.unknown, 1) }
        guard bytes.count >= length else { return final ? (.unknown, bytes.count) : nil }
        let slice = bytes[0..<length]
        guard slice.dropFirst().allSatisfy({ $0 & 0xC0 == 0x80 }),
              let scalar = String(validating: slice, as: UTF8.self)?.first else { return (.unknown, 1) }
        return (.character(scalar), length)
    }
}
