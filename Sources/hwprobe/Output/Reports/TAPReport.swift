import Foundation

/// TAP version 13 (testanything.org): the version line, the plan, one `ok`/`not ok` line per
/// case, and under each a YAML block saying what was seen (`message`, `kind`, `duration_ms`).
///
/// TAP reads a `#` in a description as the start of a directive, so one there is escaped as
/// `\#`; a skip is the `# SKIP` directive with its reason. Descriptions and reasons are one line
/// (breaks become spaces); YAML values are double-quoted with JSON's escapes, which YAML reads as
/// the same string.
enum TAPReport {
    static func render(_ report: RunReport) -> String {
        var tap = "TAP version 13\n1..\(report.cases.count)\n"
        tap += "# \(line(report.suite)) on \(line(report.hostname)): \(line(report.commandLine))\n"
        for property in report.properties { tap += "# \(line(property.name)): \(line(property.value))\n" }
        for (index, item) in report.cases.enumerated() {
            let number = index + 1
            let description = line(item.title).replacingOccurrences(of: "#", with: "\\#")
            switch item.result {
            case .passed:
                tap += "ok \(number) - \(description)\n"
                tap += block(["id": item.id, "duration_ms": milliseconds(item.seconds)])
            case .failed(let kind, let message):
                tap += "not ok \(number) - \(description)\n"
                tap += block(["id": item.id, "kind": kind, "message": message, "duration_ms": milliseconds(item.seconds)])
            case .skipped(let reason):
                tap += "ok \(number) - \(description) # SKIP \(line(reason))\n"
                tap += block(["id": item.id, "duration_ms": milliseconds(item.seconds)])
            }
        }
        return tap
    }

    static func milliseconds(_ seconds: Double) -> String {
        String(Int((seconds.isFinite ? max(0, seconds) : 0) * 1000))
    }

    /// A YAML block, keys in a fixed order, strings quoted (numbers bare).
    static func block(_ fields: [String: String]) -> String {
        let order = ["id", "kind", "message", "duration_ms"]
        var yaml = "  ---\n"
        for key in order {
            guard let value = fields[key] else { continue }
            yaml += "  \(key): " + (key == "duration_ms" ? value : quoted(value)) + "\n"
        }
        return yaml + "  ...\n"
    }

    /// A double-quoted YAML scalar: backslash, quote and control characters escaped.
    static func quoted(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value) {
                    out += String(format: "\\u%04X", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// One line: breaks and other controls become spaces.
    static func line(_ value: String) -> String {
        String(String.UnicodeScalarView(value.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
    }
}
