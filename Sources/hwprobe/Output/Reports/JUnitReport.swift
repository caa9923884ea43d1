import Foundation

/// JUnit XML, the format Jenkins, GitLab and LAVA read: a `testsuites` root holding one
/// `testsuite` (name, tests, failures, errors, skipped, time, timestamp, hostname) of `testcase`s
/// (classname, name, time), a failed one with a `failure` element (its `type` the failure's kind,
/// its `message` and text the reason), a skipped one with `skipped`.
///
/// The element and attribute names and which attributes are required follow the schema the
/// Jenkins xUnit plugin validates against (jenkinsci/xunit-plugin, `junit-10.xsd`: `testsuite`
/// requires name, tests, failures and errors; `testcase` requires name; times are decimal
/// seconds). Text is escaped for XML 1.0, where most control characters cannot appear at all, even
/// escaped: those become U+FFFD, so a peer's hostile name cannot make the file unreadable.
enum JUnitReport {
    static func render(_ report: RunReport) -> String {
        let time = seconds(report.seconds)
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        xml += "<testsuites name=\"hwprobe\" tests=\"\(report.cases.count)\" failures=\"\(report.failures)\" errors=\"0\" time=\"\(time)\">\n"
        xml += "  <testsuite name=\(attribute(report.suite)) tests=\"\(report.cases.count)\" failures=\"\(report.failures)\" errors=\"0\""
            + " skipped=\"\(report.skips)\" time=\"\(time)\" timestamp=\"\(timestamp(report.started))\" hostname=\(attribute(report.hostname))>\n"
        xml += "    <properties>\n"
        xml += "      <property name=\"command\" value=\(attribute(report.commandLine))/>\n"
        for property in report.properties {
            xml += "      <property name=\(attribute(property.name)) value=\(attribute(property.value))/>\n"
        }
        xml += "    </properties>\n"
        for item in report.cases {
            let open = "    <testcase classname=\(attribute(item.id)) name=\(attribute(item.title)) time=\"\(seconds(item.seconds))\""
            switch item.result {
            case .passed:
                xml += open + "/>\n"
            case .failed(let kind, let message):
                xml += open + ">\n      <failure type=\(attribute(kind)) message=\(attribute(message))>\(text(message))</failure>\n    </testcase>\n"
            case .skipped(let reason):
                xml += open + ">\n      <skipped message=\(attribute(reason))/>\n    </testcase>\n"
            }
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    /// Decimal seconds with three places (the schema's time pattern: digits, a point, digits).
    static func seconds(_ value: Double) -> String {
        String(format: "%.3f", value.isFinite ? max(0, value) : 0)
    }

    /// ISO 8601 in UTC without a zone suffix, as JUnit writers (Ant, Surefire) put it.
    static func timestamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        return formatter.string(from: date)
    }

    /// A quoted attribute value.
    static func attribute(_ value: String) -> String {
        "\"" + escaped(value, quotes: true) + "\""
    }

    static func text(_ value: String) -> String { escaped(value, quotes: false) }

    /// `&`, `<`, `>` (and quotes and line breaks in attributes) as references; characters XML 1.0
    /// forbids (C0 controls but tab, line feed and carriage return; U+FFFE, U+FFFF) as U+FFFD.
    static func escaped(_ value: String, quotes: Bool) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where quotes: out += "&quot;"
            case "'" where quotes: out += "&apos;"
            case "\n" where quotes: out += "&#10;"
            case "\r" where quotes: out += "&#13;"
            case "\t" where quotes: out += "&#9;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
