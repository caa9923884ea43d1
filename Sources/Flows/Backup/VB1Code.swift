import HAL

/// One VB1 code, the text inside one QR code: `VB1:<ID>:<i>/<n>:<DATA>`.
///
/// `ID` is the first 4 bytes of SHA-256(container) as 8 upper-case hex digits, `i` of `n` says which
/// part this is (decimal, no leading zeros, 1 ≤ i ≤ n ≤ 99), and `DATA` is that part in Base45.
public struct VB1Code: Hashable, Sendable {
    /// The text every backup code starts with; anything else is not a backup code.
    public static let prefix = "VB1:"
    /// The most codes one backup may be cut into (n ≤ 99).
    public static let maximumCount = 99

    /// 8 upper-case hex digits naming the backup.
    public let id: String
    /// 1-based position of this part.
    public let index: Int
    /// How many codes the backup has.
    public let count: Int
    /// This part of the container (never empty).
    public let data: [UInt8]

    /// Builds a code from its fields, checking them as a parsed code would be checked.
    public init(id: String, index: Int, count: Int, data: [UInt8]) throws(VB1CodeError) {
        guard Self.isBackupID(Array(id.utf8)) else {
            throw .notABackupCode("the ID must be 8 upper-case hex digits")
        }
        try Self.checkPosition(index: index, count: count)
        guard !data.isEmpty else { throw .notABackupCode("the part is empty") }
        self.id = id
        self.index = index
        self.count = count
        self.data = data
    }

    /// Parses a code's text strictly: any deviation makes it "not a backup code".
    public init(parsing text: String) throws(VB1CodeError) {
        // Work on bytes: the data may contain ':' and ' ' (both Base45 digits), and nothing outside
        // ASCII is valid anywhere.
        let bytes = Array(text.utf8)
        let prefix = Array(Self.prefix.utf8)
        guard bytes.count >= prefix.count, Array(bytes[0..<prefix.count]) == prefix else {
            throw .notABackupCode("does not start with \(Self.prefix)")
        }
        var rest = bytes[prefix.count...]

        guard let idEnd = rest.firstIndex(of: UInt8(ascii: ":")) else {
            throw .notABackupCode("missing the part number")
        }
        let idBytes = Array(rest[rest.startIndex..<idEnd])
        guard Self.isBackupID(idBytes) else {
            throw .notABackupCode("the ID must be 8 upper-case hex digits")
        }
        rest = rest[(idEnd + 1)...]

        guard let positionEnd = rest.firstIndex(of: UInt8(ascii: ":")) else {
            throw .notABackupCode("missing the data")
        }
        let position = rest[rest.startIndex..<positionEnd]
        guard let slash = position.firstIndex(of: UInt8(ascii: "/")) else {
            throw .notABackupCode("the part number must be i/n")
        }
        let index = try Self.parseNumber(position[position.startIndex..<slash], name: "i")
        let count = try Self.parseNumber(position[(slash + 1)...], name: "n")
        try Self.checkPosition(index: index, count: count)

        let dataText = Array(rest[(positionEnd + 1)...])
        guard !dataText.isEmpty else { throw .notABackupCode("the data is empty") }
        let data: [UInt8]
        do throws(Base45Error) {
            data = try Base45.decode(utf8: dataText)
        } catch {
            throw .notABackupCode("bad data: \(error.description)")
        }

        self.id = String(decoding: idBytes, as: UTF8.self)
        self.index = index
        self.count = count
        self.data = data
    }

    /// The code's text, as put in the QR code.
    public var text: String {
        "\(Self.prefix)\(id):\(index)/\(count):\(Base45.encode(data))"
    }

    // MARK: Splitting a container

    /// The backup ID of a container: its SHA-256's first 4 bytes as upper-case hex.
    package static func backupID(of container: [UInt8]) throws(BackupCryptoError) -> String {
        Hex.string(try BackupCrypto.sha256(container).prefix(4))
    }

    /// Cuts a container into `n` codes of ceil(len / n) bytes each (the last may be shorter).
    ///
    /// - Throws: `.cannotSplit` when `n` is outside 1...99, the container is empty, or `n` is so
    ///   large that a part would be empty (for example 3 bytes into 3 codes is fine, 4 bytes into
    ///   3 codes is too: parts of 2 bytes leave the third empty).
    public static func split(container: [UInt8], into n: Int) throws(VB1CodeError) -> [VB1Code] {
        guard (1...maximumCount).contains(n) else {
            throw .cannotSplit("the number of codes must be 1...\(maximumCount), not \(n)")
        }
        guard let size = partSize(containerLength: container.count, count: n) else {
            throw .cannotSplit("\(container.count) bytes cannot be cut into \(n) non-empty parts")
        }
        let id: String
        do throws(BackupCryptoError) {
            id = try backupID(of: container)
        } catch {
            throw .cannotSplit("could not hash the container: \(error.description)")
        }
        var codes: [VB1Code] = []
        codes.reserveCapacity(n)
        for index in 1...n {
            let start = (index - 1) * size
            let end = min(start + size, container.count)
            codes.append(try VB1Code(id: id, index: index, count: n, data: Array(container[start..<end])))
        }
        return codes
    }

    /// Bytes per part when `containerLength` bytes are cut into `count` parts, or nil when that
    /// leaves a part empty.
    public static func partSize(containerLength: Int, count: Int) -> Int? {
        guard containerLength > 0, count >= 1 else { return nil }
        let size = (containerLength + count - 1) / count
        // Parts actually filled: the last one must start before the end.
        guard (count - 1) * size < containerLength else { return nil }
        return size
    }

    /// Length of the longest code text when `containerLength` bytes are cut into `count` codes.
    public static func longestTextLength(containerLength: Int, count: Int) -> Int? {
        guard (1...maximumCount).contains(count),
              let size = partSize(containerLength: containerLength, count: count) else { return nil }
        let digits = String(count).utf8.count
        // "VB1:" + ID + ":" + i + "/" + n + ":" + data; the widest i has as many digits as n.
        return prefix.utf8.count + 8 + 1 + digits + 1 + digits + 1 + Base45.encodedLength(byteCount: size)
    }

    /// The fewest codes whose texts are all at most `maxCharacters` long, or nil when even
    /// 99 codes would not fit.
    public static func recommendedCount(containerLength: Int, maxCharactersPerCode maxCharacters: Int) -> Int? {
        for count in 1...maximumCount {
            if let length = longestTextLength(containerLength: containerLength, count: count),
               length <= maxCharacters {
                return count
            }
        }
        return nil
    }

    // MARK: Helpers

    private static func isBackupID(_ bytes: [UInt8]) -> Bool {
        bytes.count == 8 && bytes.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x46).contains($0) }
    }

    private static func parseNumber(_ digits: ArraySlice<UInt8>, name: String) throws(VB1CodeError) -> Int {
        guard !digits.isEmpty, digits.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw .notABackupCode("\(name) must be a decimal number")
        }
        guard digits.first != 0x30 else {
            throw .notABackupCode("\(name) must not start with 0")
        }
        guard digits.count <= 3 else {
            throw .notABackupCode("\(name) must be at most \(maximumCount)")
        }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    private static func checkPosition(index: Int, count: Int) throws(VB1CodeError) {
        guard (1...maximumCount).contains(count) else {
            throw .notABackupCode("n must be 1...\(maximumCount), not \(count)")
        }
        guard (1...count).contains(index) else {
            throw .notABackupCode("i must be 1...\(count), not \(index)")
        }
    }
}

/// Problems with VB1 code text.
public enum VB1CodeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text is not a well-formed VB1 code; the reason says which part is wrong.
    case notABackupCode(String)
    /// A container cannot be cut into the requested number of codes.
    case cannotSplit(String)

    /// A short lower-case phrase with the reason, for messages and logs.
    public var description: String {
        switch self {
        case .notABackupCode(let reason): return "not a backup code: \(reason)"
        case .cannotSplit(let reason): return "cannot split the backup: \(reason)"
        }
    }
}
