import Foundation

enum JSON {
    /// One JSON object, keys sorted so output is stable for scripts and diffs.
    static func encode<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value), let text = String(data: data, encoding: .utf8) else {
            return #"{"error":{"kind":"device","message":"could not encode the result as JSON"}}"#
        }
        return escapingControls(text) + "\n"
    }

    /// JSONEncoder escapes C0 but leaves DEL and C1 (U+0080–U+009F) as they are, which some
    /// terminals act on (U+009B is CSI). In JSON text they can stand only inside strings, where
    /// `\u00XX` means the same character: a script reads the same value, a terminal sees no control.
    static func escapingControls(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { (0x7F...0x9F).contains($0.value) }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if (0x7F...0x9F).contains(scalar.value) {
                out.append(contentsOf: ("\\u00" + String(scalar.value, radix: 16, uppercase: false)).unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    struct ErrorEnvelope: Encodable {
        struct Body: Encodable {
            var kind: CLIFailure.Kind
            var message: String
        }
        var error: Body
    }

    static func error(_ failure: CLIFailure) -> String {
        encode(ErrorEnvelope(error: .init(kind: failure.kind, message: failure.message)))
    }
}
