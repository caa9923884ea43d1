import Testing
@testable import hwprobe

/// Line mode: stdout keeps what is not a diagnostic, except under `--json`, where all goes to stderr.
@Suite struct LinePerScreenDisplayTests {
    @Test func linesGoToStdoutAndDiagnosticsToStderr() {
        let captured = CapturedConsole()
        let display = LinePerScreenDisplay(console: captured.console, toStandardError: false)
        display.write("Scanning\n", toStandardError: false)
        display.write("hwprobe: no pad\n", toStandardError: true)
        display.paint(full: true) { _ in Issue.record("a line display paints nothing"); return ["x"] }
        display.end(transcript: [.init(text: "kept", toStandardError: false)], lastFrame: ["frame"])
        #expect(!display.paintsScreen)
        #expect(captured.stdout == "Scanning\n")
        #expect(captured.stderr == "hwprobe: no pad\n")
    }

    @Test func underJSONEveryLineGoesToStderr() {
        let captured = CapturedConsole()
        let display = LinePerScreenDisplay(console: captured.console, toStandardError: true)
        display.write("Scanning\n", toStandardError: false)
        display.write("hwprobe: no pad\n", toStandardError: true)
        #expect(captured.stdout.isEmpty)
        #expect(captured.stderr == "Scanning\nhwprobe: no pad\n")
    }
}
