import Foundation

/// A parsed JSON value, so tests check the contract's shape key by key rather than by string.
indirect enum JSONShape: Equatable {
    case object([String: JSONShape])
    case array([JSONShape])
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    struct NotJSON: Error {}

    static func parse(_ text: String) throws -> [String: JSONShape] {
        let value = try JSONSerialization.jsonObject(with: Data(text.utf8))
        guard case .object(let object) = convert(value) else { throw NotJSON() }
        return object
    }

    static func convert(_ value: Any) -> JSONShape {
        switch value {
        case let d as [String: Any]: .object(d.mapValues(convert))
        case let a as [Any]: .array(a.map(convert))
        case let s as String: .string(s)
        case let n as NSNumber: .number(n.doubleValue)
        default: .null
        }
    }

    subscript(key: String) -> JSONShape? {
        if case .object(let o) = self { o[key] } else { nil }
    }

    var string: String? { if case .string(let s) = self { s } else { nil } }
    var number: Double? { if case .number(let n) = self { n } else { nil } }
    var array: [JSONShape]? { if case .array(let a) = self { a } else { nil } }
    var keys: Set<String> { if case .object(let o) = self { Set(o.keys) } else { [] } }
}

extension Dictionary where Key == String, Value == JSONShape {
    var keySet: Set<String> { Set(keys) }
}
