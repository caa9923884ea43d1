import HAL

/// Which characteristic a `gatt` option names (docs/cli.md, "`gatt` values"): its UUID (the
/// first characteristic with it, in discovery order) or its value handle.
enum CharacteristicID: Hashable, Sendable, CustomStringConvertible {
    case uuid(BluetoothUUID)
    case handle(UInt16)

    static let forms = "a characteristic UUID (16-bit like 2A9D, or 128-bit like 7B9E0005-3C2A-4F1B-9E6D-5A4C3B2A1F00) "
        + "or a value handle (decimal like 22, or hex like 0x0016)"

    /// Digits alone are a decimal handle, `0x…` a hex one; four hex digits with a letter among them
    /// are a 16-bit UUID, 36 characters in the canonical form a 128-bit one. Nothing else is taken,
    /// so a typo cannot quietly name some other attribute.
    static func parse(_ text: String, option: String) throws(CLIFailure) -> CharacteristicID {
        let fail = { (why: String) in CLIFailure(kind: .usage, message: "\(option) \(text): \(why)") }
        if text.hasPrefix("0x") || text.hasPrefix("0X") {
            let digits = text.dropFirst(2)
            guard (1...4).contains(digits.count), let handle = UInt16(digits, radix: 16) else {
                throw fail("a hex handle is 0x and one to four hex digits, from 0x0001 to 0xFFFF")
            }
            guard handle != 0 else { throw fail("handle 0 is not a handle (handles run from 0x0001 to 0xFFFF)") }
            return .handle(handle)
        }
        if !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) {
            guard text.count <= 5, let handle = UInt16(text), handle != 0 else {
                throw fail("a decimal handle runs from 1 to 65535")
            }
            return .handle(handle)
        }
        if text.count == 4 || text.count == 36, let uuid = BluetoothUUID(string: text) {
            return .uuid(uuid)
        }
        throw fail("not \(forms)")
    }

    var description: String {
        switch self {
        case .uuid(let uuid): uuid.description
        case .handle(let handle): "handle \(handle)"
        }
    }
}

/// The bytes of `ID=HEX`: hex digits two to a byte, either case; `:` or spaces may separate bytes
/// (`01:02`, `"01 02"`), as people copy values from other tools.
enum HexValue {
    /// An attribute value is at most 512 bytes (Core Vol 3 Part F §3.2.9).
    static let maximumLength = 512

    static func parse(_ text: String, option: String, id: String) throws(CLIFailure) -> [UInt8] {
        let fail = { (why: String) in CLIFailure(kind: .usage, message: "\(option) \(id)=\(text): \(why)") }
        var digits = Substring(text)
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        digits = Substring(digits.filter { $0 != ":" && $0 != " " })
        guard !digits.isEmpty else { throw fail("no bytes to write: give at least one, e.g. \(id)=01") }
        if let bad = digits.first(where: { !$0.isHexDigit }) {
            throw fail("'\(bad)' is not a hex digit (each byte is two of 0-9, a-f, e.g. 0100)")
        }
        guard digits.count.isMultiple(of: 2) else {
            throw fail("\(digits.count) hex digits: each byte is two, e.g. 01 rather than 1")
        }
        guard digits.count / 2 <= maximumLength else {
            throw fail("\(digits.count / 2) bytes: an attribute value holds at most \(maximumLength)")
        }
        guard let bytes = Hex.bytes(digits) else { throw fail("not hex") }
        return bytes
    }

    /// Lower-case, no separators: the contract's spelling of a value.
    static func text(_ bytes: [UInt8]) -> String { Hex.string(bytes, .lower) }
}

/// What `gatt` was asked to do beyond the dump, checked before any device is opened.
struct GattRequest: Sendable, Equatable {
    struct Write: Sendable, Equatable {
        var id: CharacteristicID
        var value: [UInt8]
        /// `--write` (a Write Request, answered) or `--write-command` (a Write Command, not).
        var withResponse: Bool
        var option: String { withResponse ? "--write" : "--write-command" }
    }

    struct Subscription: Sendable, Equatable {
        var id: CharacteristicID
        var count: Int?
        var seconds: Double?
    }

    /// `--read ID`, in the order given, each once.
    var reads: [CharacteristicID] = []
    /// `--read all`: every characteristic that allows reads.
    var readAll = false
    /// `--write` and `--write-command`, interleaved as given.
    var writes: [Write] = []
    var subscription: Subscription?

    /// `--count` keeps this many values at most: beyond it a subscription belongs in `--btsnoop`.
    static let maximumCount = 1_000_000
    /// `--seconds` at most a day.
    static let maximumSeconds = 86_400.0

    init() {}

    init(_ invocation: Invocation) throws(CLIFailure) {
        for text in invocation.all("--read") {
            if text == "all" {
                readAll = true
                continue
            }
            let id = try CharacteristicID.parse(text, option: "--read")
            if !reads.contains(id) { reads.append(id) }
        }
        for given in invocation.inOrder(["--write", "--write-command"]) {
            let withResponse = given.option == "--write"
            guard let equals = given.value.firstIndex(of: "=") else {
                throw CLIFailure(kind: .usage, message: "\(given.option) \(given.value): give ID=HEX, e.g. \(given.option) 2A06=01")
            }
            let idText = String(given.value[..<equals])
            let id = try CharacteristicID.parse(idText, option: given.option)
            let value = try HexValue.parse(String(given.value[given.value.index(after: equals)...]), option: given.option, id: idText)
            writes.append(Write(id: id, value: value, withResponse: withResponse))
        }
        let count = try invocation.value("--count").map { text throws(CLIFailure) -> Int in
            guard let count = Int(text), (1...Self.maximumCount).contains(count) else {
                throw CLIFailure(kind: .usage, message: "--count \(text): give a whole number of values from 1 to \(Self.maximumCount)")
            }
            return count
        }
        let seconds = try invocation.value("--seconds").map { text throws(CLIFailure) -> Double in
            guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= Self.maximumSeconds else {
                throw CLIFailure(kind: .usage, message: "--seconds \(text): give a number of seconds more than 0 and at most \(Int(Self.maximumSeconds)), e.g. 10 or 0.5")
            }
            return seconds
        }
        if let text = invocation.value("--subscribe") {
            subscription = Subscription(id: try CharacteristicID.parse(text, option: "--subscribe"), count: count, seconds: seconds)
        } else if count != nil || seconds != nil {
            throw CLIFailure(kind: .usage, message: "\(count != nil ? "--count" : "--seconds") limits a subscription: give --subscribe ID with it")
        }
    }
}
