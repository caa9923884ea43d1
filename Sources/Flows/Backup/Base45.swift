/// Base45 as defined by RFC 9285: every two bytes become three characters of the QR alphanumeric set,
/// and a trailing single byte becomes two characters.
///
/// Characters are read least significant first: the pair `a b` is `n = a·256 + b`, written as
/// `c d e` with `n = c + d·45 + e·45²`.
public enum Base45 {
    /// The 45 characters, in digit order (the QR code alphanumeric set).
    public static let alphabet: [UInt8] = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:".utf8)

    /// Digit value for each ASCII byte, or -1 when the byte is not a Base45 character.
    private static let digitValues: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (value, character) in alphabet.enumerated() {
            table[Int(character)] = Int8(value)
        }
        return table
    }()

    /// Number of characters `encode` produces for `byteCount` bytes.
    public static func encodedLength(byteCount: Int) -> Int {
        (byteCount / 2) * 3 + (byteCount % 2) * 2
    }

    /// Encodes bytes as Base45 text.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity(encodedLength(byteCount: input.count))
        var index = 0
        while index + 1 < input.count {
            var value = Int(input[index]) << 8 | Int(input[index + 1])
            for _ in 0..<3 {
                output.append(alphabet[value % 45])
                value /= 45
            }
            index += 2
        }
        if index < input.count {
            let value = Int(input[index])
            output.append(alphabet[value % 45])
            output.append(alphabet[value / 45])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes Base45 text. The empty string decodes to no bytes.
    ///
    /// - Throws: `.invalidCharacter` for a byte outside the alphabet (lower-case letters included),
    ///   `.invalidLength` when the length leaves a single dangling character, and `.valueOutOfRange`
    ///   when a group encodes a number too large for its byte count.
    public static func decode(_ text: String) throws(Base45Error) -> [UInt8] {
        try decode(utf8: Array(text.utf8))
    }

    /// Decodes Base45 given as UTF-8/ASCII bytes.
    public static func decode(utf8 input: [UInt8]) throws(Base45Error) -> [UInt8] {
        if input.count % 3 == 1 {
            throw .invalidLength(input.count)
        }
        var digits: [Int] = []
        digits.reserveCapacity(input.count)
        for (offset, byte) in input.enumerated() {
            let value = digitValues[Int(byte)]
            if value < 0 {
                throw .invalidCharacter(offset: offset)
            }
            digits.append(Int(value))
        }
        var output: [UInt8] = []
        output.reserveCapacity(input.count / 3 * 2 + 1)
        var index = 0
        while index + 2 < digits.count {
            let value = digits[index] + digits[index + 1] * 45 + digits[index + 2] * 45 * 45
            if value > 0xFFFF {
                throw .valueOutOfRange(offset: index)
            }
            output.append(UInt8(value >> 8))
            output.append(UInt8(value & 0xFF))
            index += 3
        }
        if index < digits.count {
            let value = digits[index] + digits[index + 1] * 45
            if value > 0xFF {
                throw .valueOutOfRange(offset: index)
            }
            output.append(UInt8(value))
        }
        return output
    }
}

/// Why a Base45 text could not be decoded. Offsets count UTF-8 bytes from the start of the text.
public enum Base45Error: Error, Equatable, Sendable, CustomStringConvertible {
    /// The byte at `offset` is not one of the 45 Base45 characters.
    case invalidCharacter(offset: Int)
    /// Base45 text is never one more than a multiple of three characters long.
    case invalidLength(Int)
    /// The group starting at `offset` encodes a number larger than its bytes can hold.
    case valueOutOfRange(offset: Int)

    /// A short phrase with the offending offset or length, for messages and logs.
    public var description: String {
        switch self {
        case .invalidCharacter(let offset):
            return "character at offset \(offset) is not Base45"
        case .invalidLength(let length):
            return "Base45 text cannot be \(length) characters long"
        case .valueOutOfRange(let offset):
            return "Base45 group at offset \(offset) is out of range"
        }
    }
}
