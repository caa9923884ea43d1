import Foundation

enum JSON {
    /// One JSON object, keys sorted so output is stable for scripts and diffs.
    static func encode<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value), let text = String(data: data, encoding: .utf8) else {
            return #"{"error":{"kind":"device","message":"could not encode the result as JSON"}}"#
        }
        return text + "\n"
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
