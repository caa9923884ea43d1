/// Why a cassette could not be read or written. Each says where (a line number) and what was
/// expected there, so a person can open the file at that line and see what is wrong.
public enum CassetteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The cassette file could not be opened or read, e.g. it is missing or not permitted.
    case cannotRead(path: String, reason: String)
    /// The recording could not be saved at the end of the session; the text says why.
    case cannotWrite(path: String, reason: String)
    /// The file is bigger than a cassette may be, so it is not read at all.
    case tooLarge(bytes: Int, limit: Int)
    /// Line 1 is not `hwprobe-cassette MAJOR.MINOR`.
    case notACassette(found: String)
    /// Made by a newer hwprobe whose format this one cannot read.
    case newerVersion(found: String)
    /// A line could not be parsed: its number, what should be there and what was.
    case damaged(line: Int, expected: String, found: String)
    /// More of something than a cassette may hold (`BLECassette.Limits`).
    case tooMany(line: Int, what: String, limit: Int)
    /// The file stops before its `end` line: cut short by a crash, a full disk or a copy.
    case cutShort(lines: Int)

    /// The words for a cassette named by `uri` (`replay:PATH`), saying the path once.
    public func described(as uri: String) -> String {
        switch self {
        case .cannotRead(_, let reason): "\(uri): \(reason)"
        default: "\(uri): \(self)"
        }
    }

    /// The words a person reads in messages and logs.
    public var description: String {
        switch self {
        case .cannotRead(let path, let reason): "cannot read the cassette \(path): \(reason)"
        case .cannotWrite(let path, let reason): "cannot write the cassette \(path): \(reason)"
        case .tooLarge(let bytes, let limit):
            "the cassette is \(bytes) bytes, more than the \(limit) a cassette may have: record a shorter session"
        case .notACassette(let found):
            "not a cassette: line 1 should be `\(CassetteFormat.magic) \(CassetteFormat.major).\(CassetteFormat.minor)`, found \(Self.quoted(found))"
        case .newerVersion(let found):
            "the cassette is format \(found), newer than this hwprobe reads (\(CassetteFormat.major).x): use a newer hwprobe to play it"
        case .damaged(let line, let expected, let found):
            "the cassette is damaged at line \(line): expected \(expected), found \(Self.quoted(found))"
        case .tooMany(let line, let what, let limit):
            "the cassette is damaged at line \(line): more than \(limit) \(what)"
        case .cutShort(let lines):
            "the cassette is cut short after line \(lines): its last line should be `end COUNT` (was the recording interrupted, or the file truncated?)"
        }
    }

    /// A line shown in backticks for messages, shortened past 60 characters.
    static func quoted(_ text: String) -> String {
        if text.isEmpty { return "an empty line" }
        let shown = text.count > 60 ? String(text.prefix(60)) + "…" : text
        return "`\(shown)`"
    }
}
