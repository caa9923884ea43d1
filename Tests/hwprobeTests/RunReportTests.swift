import Foundation
import Testing
@testable import hwprobe

/// The report writers as pure functions: the bytes a CI server gets.
@Suite struct RunReportTests {
    static let report = RunReport(
        suite: "mirror-v1", started: Date(timeIntervalSince1970: 1_800_000_000), hostname: "bench-3",
        commandLine: "hwprobe check --hci hci:0",
        cases: [
            .init(id: "adv.service", title: "advertises the service", result: .passed, seconds: 0.25),
            .init(id: "gatt.cccd", title: "scale has a CCCD # really", result: .failed(kind: "mismatch", message: "expected a CCCD on 0006,\nsaw none"), seconds: 1.5),
            .init(id: "state.reconnect", title: "notifies after a reconnect", result: .skipped(reason: "needs a scan"), seconds: 0),
        ])

    @Test func junitHasTheCountsAndOneCaseEach() {
        let xml = JUnitReport.render(Self.report)
        #expect(xml.hasPrefix(#"<?xml version="1.0" encoding="UTF-8"?>"#))
        #expect(xml.contains(#"<testsuite name="mirror-v1" tests="3" failures="1" errors="0" skipped="1" time="1.750" timestamp="2027-01-15T08:00:00" hostname="bench-3">"#))
        #expect(xml.contains(#"<testcase classname="adv.service" name="advertises the service" time="0.250"/>"#))
        #expect(xml.contains(#"<failure type="mismatch" message="expected a CCCD on 0006,&#10;saw none">expected a CCCD on 0006,"# + "\nsaw none</failure>"))
        #expect(xml.contains(#"<skipped message="needs a scan"/>"#))
    }

    @Test func junitEscapesMarkupAndDropsWhatXMLCannotHold() {
        #expect(JUnitReport.attribute("a<b>&\"c'") == #""a&lt;b&gt;&amp;&quot;c&apos;""#)
        #expect(JUnitReport.text("bell\u{07} esc\u{1B} tab\t") == "bell\u{FFFD} esc\u{FFFD} tab\t")
        #expect(JUnitReport.text("\u{FFFF}") == "\u{FFFD}")
        #expect(JUnitReport.seconds(.nan) == "0.000" && JUnitReport.seconds(-1) == "0.000")
    }

    @Test func tapHasThePlanTheDirectivesAndYAMLBlocks() {
        let tap = TAPReport.render(Self.report)
        let lines = tap.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "TAP version 13")
        #expect(lines[1] == "1..3")
        #expect(lines.contains("ok 1 - advertises the service"))
        #expect(lines.contains(##"not ok 2 - scale has a CCCD \# really"##))
        #expect(lines.contains(#"  message: "expected a CCCD on 0006,\nsaw none""#))
        #expect(lines.contains("ok 3 - notifies after a reconnect # SKIP needs a scan"))
        #expect(lines.contains("  duration_ms: 1500"))
        #expect(TAPReport.quoted("q\"\\\u{01}") == #""q\"\\\u0001""#)
    }
}
