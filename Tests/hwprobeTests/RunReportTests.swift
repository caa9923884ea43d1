import Foundation
import Testing
import HAL
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

/// The reports of `scan` and `weigh` say what happened (issue 27, item 9): a failure's kind and
/// the mirror's error code, a pass's result, and the address used even when none was typed.
@Suite struct CommandReportDetailTests {
    func report(_ arguments: [String]) async throws -> (code: Int32, xml: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("report-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let junit = directory.appendingPathComponent("run.xml").path
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: ScaledClock(speed: 25))
        let code = await cli.run(arguments + ["--report", "junit:\(junit)"])
        return (code, try String(contentsOfFile: junit, encoding: .utf8))
    }

    @Test func aFailedScanNamesTheKindAndTheMirrorsCode() async throws {
        let (code, xml) = try await report(["scan", "--hci", "sim:?fault=error&code=6", "--yes", "--json"])
        #expect(code == 1)
        #expect(xml.contains(#"type="mirrorError 6""#), "\(xml)")
        #expect(xml.contains("battery"), "\(xml)")
        #expect(!xml.contains("ended with exit code"))
        #expect(xml.contains(#"<property name="peripheral" value="C0:FF:EE:00:4F:2A"/>"#), "the mirror found, not typed: \(xml)")
    }

    @Test func aCompleteScanCarriesItsResult() async throws {
        let (code, xml) = try await report(["scan", "--hci", "sim:", "--yes", "--json"])
        #expect(code == 0)
        for name in ["scanId", "weightKg", "bodyFatPercent", "pointCount", "peripheral"] {
            #expect(xml.contains(#"<property name="\#(name)" value=""#), "\(name): \(xml)")
        }
    }

    @Test func aWeighingCarriesTheWeightAndTheScale() async throws {
        let (code, xml) = try await report(["weigh", "--hci", "sim:", "--json"])
        #expect(code == 0)
        #expect(xml.contains(#"<property name="weightKg" value="72.35"/>"#), "\(xml)")
        #expect(xml.contains(#"<property name="peripheral" value="D4:12:3A:00:18:1D"/>"#), "\(xml)")
        #expect(xml.contains(#"<property name="driver" value="standard-scale"/>"#), "\(xml)")
    }
}
