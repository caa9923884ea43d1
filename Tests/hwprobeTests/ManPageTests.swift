import Foundation
import Testing
@testable import hwprobe

@Suite struct ManPageTests {
    /// Renders the page with man-db the way a person reads it, with groff's warnings on.
    func render(_ roff: String) throws -> ShellRun.Result {
        let path = FileManager.default.temporaryDirectory.appending(path: "hwprobe-\(UUID().uuidString).1")
        try roff.write(to: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: path) }
        var environment = ProcessInfo.processInfo.environment
        environment["MANWIDTH"] = "80"
        environment["LANG"] = "C.UTF-8"
        environment["MAN_KEEP_FORMATTING"] = nil
        return try ShellRun.run("/usr/bin/man", ["--warnings", "-l", "-P", "cat", path.path], environment: environment)
    }

    @Test(.enabled(if: ShellRun.exists("/usr/bin/man"))) func thePageRendersWithoutWarnings() throws {
        let rendered = try render(ManPage.roff())
        #expect(rendered.code == 0)
        #expect(rendered.err.isEmpty, "man/groff warned: \(rendered.err)")
        let text = rendered.out
        #expect(text.hasPrefix("HWPROBE(1)"))
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "GLOBAL OPTIONS", "DEVICE URIS", "EXIT STATUS", "EXAMPLES"] {
            #expect(text.contains("\n\(section)\n"), "no \(section) section")
        }
        // Every command, option and example of the table is in it, as a person reads it.
        for spec in Commands.all {
            #expect(text.contains("\n   \(spec.name)\n"), "\(spec.name)")
            for option in spec.allOptions { #expect(text.contains(option.name), "\(spec.name) \(option.name)") }
            // (a long example wraps onto a second line)
            for example in spec.examples { #expect(Self.words(text).contains(Self.words(example.line)), "\(example.line)") }
        }
        #expect(text.contains(Version.line))
    }

    static func words(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The check above can fail: a page with a roff mistake does make man warn.
    @Test(.enabled(if: ShellRun.exists("/usr/bin/man"))) func aBrokenPageIsNoticed() throws {
        let rendered = try render(ManPage.roff() + ".nosuchmacro\n\\fQ\n")
        #expect(!rendered.err.isEmpty)
    }

    @Test func textIsEscapedForRoff() {
        #expect(ManPage.escape("--hci") == "\\-\\-hci")
        #expect(ManPage.escape(".hidden") == "\\&.hidden")
        #expect(ManPage.escape("'quoted") == "\\&'quoted")
        #expect(ManPage.escape("a\\b") == "a\\eb")
        #expect(ManPage.escape("baud=…") == "baud=\\[u2026]")
    }

    @Test func helpDashDashManPrintsThePage() async {
        let captured = CapturedConsole()
        let code = await HWProbe(console: captured.console, listSources: .empty).run(["help", "--man"])
        #expect(code == 0)
        #expect(captured.stdout == ManPage.roff())
    }
}
