import Capture
import HAL
import Transports
import Testing
@testable import hwprobe

@Suite struct ArgumentParserTests {
    @Test func noCommandMeansList() throws {
        #expect(try ArgumentParser.parse([]).command == "list")
        let parsed = try ArgumentParser.parse(["--json", "--hci", "sim:", "--hci", "tcp:127.0.0.1:9101"])
        #expect(parsed.command == "list")
        #expect(parsed.wantsJSON)
        #expect(parsed.all("--hci") == ["sim:", "tcp:127.0.0.1:9101"])
    }

    @Test func valuesMayBeInlineAndFlagsAnywhere() throws {
        let parsed = try ArgumentParser.parse(["scan", "--hci=sim:", "-v", "--height-cm", "182", "--yes", "--reduce-motion"])
        #expect(parsed.value("--hci") == "sim:")
        #expect(parsed.value("--height-cm") == "182")
        #expect(parsed.has("--yes") && parsed.has("--verbose") && parsed.has("--reduce-motion"))
    }

    @Test func positionalsAreCountedPerCommand() throws {
        let gatt = try ArgumentParser.parse(["gatt", "--hci", "sim:", "C0:FF:EE:00:4F:2A/random"])
        #expect(gatt.positionals == ["C0:FF:EE:00:4F:2A/random"])
        #expect(try ArgumentParser.parse(["weigh", "--hci", "sim:"]).positionals.isEmpty)
        #expect(throws: UsageError.self) { try ArgumentParser.parse(["gatt", "--hci", "sim:"]) }
        #expect(throws: UsageError.self) { try ArgumentParser.parse(["weigh", "--hci", "sim:", "A", "B"]) }
    }

    @Test func mistakesAreUsageErrorsThatNameTheProblem() {
        let cases: [([String], String)] = [
            (["frobnicate"], "unknown command 'frobnicate'"),
            (["list", "--bogus"], "unknown option '--bogus' for list"),
            (["list", "--hci"], "--hci needs a value (URI)"),
            (["scan"], "--hci is required"),
            (["import", "--camera", "sim:"], "--out is required"),
            (["haptics", "--device", "log:", "--cue", "success", "--device", "bell:"], "--device given twice"),
            (["demo", "--yes=1"], "unknown option '--yes' for demo (it is an option of scan)"),
            (["list", "--frobnicate"], "unknown option '--frobnicate' for list"),
            (["list", "--json=yes"], "--json takes no value"),
            (["list", "extra"], "unexpected argument 'extra'"),
        ]
        for (arguments, message) in cases {
            #expect(throws: UsageError.self, "\(arguments)") { try ArgumentParser.parse(arguments) }
            do { _ = try ArgumentParser.parse(arguments) } catch { #expect(error.message == message, "\(arguments)") }
        }
    }

    @Test func globalOptionsMayStandBeforeOrAfterTheCommand() throws {
        let before = try ArgumentParser.parse(["-v", "--no-color", "--btsnoop", "/tmp/x.btsnoop", "scan", "--hci", "sim:", "--yes"])
        let after = try ArgumentParser.parse(["scan", "--hci", "sim:", "--yes", "-v", "--no-color", "--btsnoop", "/tmp/x.btsnoop"])
        #expect(before == after)
        #expect(before.command == "scan" && before.commandGiven)
        #expect(before.value("--btsnoop") == "/tmp/x.btsnoop" && before.has("--verbose") && before.has("--no-color"))
        #expect(try ArgumentParser.parse(["--btsnoop=/tmp/y", "list"]).value("--btsnoop") == "/tmp/y")
        // A global option's value is never taken for the command.
        #expect(try ArgumentParser.parse(["--btsnoop", "scan", "gatt", "--hci", "sim:", "AA:BB:CC:DD:EE:FF"]).command == "gatt")
        // Given on both sides it is still given twice.
        #expect(throws: UsageError(message: "--btsnoop given twice", command: "list")) {
            try ArgumentParser.parse(["--btsnoop", "a", "list", "--btsnoop", "b"])
        }
    }

    @Test func withoutACommandItIsStillList() throws {
        for arguments in [["-v"], ["--json"], ["-v", "--json"], ["--reduce-motion", "--hci", "sim:"], []] {
            let parsed = try ArgumentParser.parse(arguments)
            #expect(parsed.command == "list", "\(arguments)")
            #expect(!parsed.commandGiven, "\(arguments)")
        }
        #expect(try ArgumentParser.parse(["-v"]).has("--verbose"))
        #expect(try ArgumentParser.parse(["-v", "list"]).commandGiven)
        // list's own options before a command mean there is none: the command word is misplaced.
        #expect(throws: UsageError(message: "unexpected argument 'scan': put the command first (hwprobe scan …); only global options may come before it",
                                   command: nil)) { try ArgumentParser.parse(["--json", "scan", "--hci", "sim:"]) }
    }

    @Test func didYouMeanForCommandsOptionsAndArguments() {
        let cases: [([String], String)] = [
            (["lsit"], "unknown command 'lsit' (did you mean list?)"),
            (["-v", "sacn"], "unknown command 'sacn' (did you mean scan?)"),
            (["hepl"], "unknown command 'hepl' (did you mean help?)"),
            (["list", "--jsno"], "unknown option '--jsno' for list (did you mean --json?)"),
            (["--jsno"], "unknown option '--jsno' for list (did you mean --json?)"),
            (["scan", "--hci", "sim:", "--yse"], "unknown option '--yse' for scan (did you mean --yes?)"),
            (["list", "--verbsoe"], "unknown option '--verbsoe' for list (did you mean --verbose?)"),
            (["list", "--scan"], "unknown option '--scan' for list (did you mean --scan-seconds?)"),
            (["import", "--pasword-file", "p"], "unknown option '--pasword-file' for import (did you mean --password-file?)"),
            (["help", "nosuch"], "unknown command 'nosuch' (use one of list, gatt, watch, check, weigh, scan, import, haptics, serve, relay, pair, bonds, demo, help, completions)"),
            (["help", "sacn"], "unknown command 'sacn' (did you mean scan?)"),
            (["completions", "zhs"], "unknown shell 'zhs' (did you mean zsh?)"),
            (["completions", "tcsh"], "unknown shell 'tcsh' (use one of bash, zsh, fish)"),
            (["completions"], "missing SHELL"),
        ]
        for (arguments, message) in cases {
            #expect(throws: UsageError.self, "\(arguments)") { try ArgumentParser.parse(arguments) }
            do { _ = try ArgumentParser.parse(arguments) } catch { #expect(error.message == message, "\(arguments)") }
        }
    }

    @Test func suggestionsAreMadeOnlyWhenOneCandidateIsClose() {
        #expect(DidYouMean.distance("lsit", "list") == 1)
        #expect(DidYouMean.distance("kitten", "sitting") == 3)
        #expect(DidYouMean.suggestion(for: "frobnicate", among: Commands.commandNames) == nil)
        #expect(DidYouMean.suggestion(for: "list", among: Commands.commandNames) == nil) // not a mistake
        #expect(DidYouMean.suggestion(for: "ab", among: ["ax", "ay"]) == nil) // a tie: no guess
        #expect(DidYouMean.suggestion(for: "--h", among: ["--hci", "--height-cm", "--help"]) == nil)
        #expect(DidYouMean.suggestion(for: "-x", among: ["-v", "-h"]) == nil) // a one-letter option is no near miss
    }

    @Test func helpSkipsRequiredChecks() throws {
        #expect(try ArgumentParser.parse(["scan", "--help"]).wantsHelp)
        #expect(try ArgumentParser.parse(["import", "-h"]).wantsHelp)
    }

    @Test func everyCommandOfTheContractExists() {
        #expect(Commands.all.map(\.name) == ["list", "gatt", "watch", "check", "weigh", "scan", "import", "haptics", "serve", "relay", "pair", "bonds", "demo", "help", "completions"])
        #expect(Commands.commandNames == Commands.all.map(\.name))
        for spec in Commands.all {
            #expect(spec.helpText.hasPrefix("usage: hwprobe"))
            #expect(spec.helpText.contains("--help"))
        }
    }
}

@Suite struct CLIBehaviourTests {
    func run(_ arguments: [String], sources: ListSources = .empty) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole()
        let cli = HWProbe(console: captured.console, listSources: sources)
        let code = await cli.run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    @Test func unknownOptionExitsTwoWithUsageOnStderr() async {
        let result = await run(["list", "--bogus"])
        #expect(result.code == 2)
        #expect(result.out.isEmpty)
        #expect(result.err.contains("unknown option '--bogus'"))
        #expect(result.err.contains("usage: hwprobe [list]"))
    }

    @Test func usageErrorWithJSONIsAnErrorObject() async throws {
        let result = await run(["scan", "--json"])
        #expect(result.code == 2)
        let object = try JSONShape.parse(result.out)
        #expect(object["error"]?["kind"]?.string == "usage")
        #expect(object["error"]?["message"]?.string == "--hci is required")
    }

    @Test func helpGoesToStdoutAndExitsZero() async {
        for arguments in [["--help"], ["scan", "--help"], ["haptics", "-h"]] {
            let result = await run(arguments)
            #expect(result.code == 0, "\(arguments)")
            #expect(result.out.contains("usage: hwprobe"), "\(arguments)")
            #expect(result.err.isEmpty)
        }
        #expect(await run(["--help"]).out.contains("commands:"))
    }

    @Test func badScanSecondsIsAUsageError() async {
        #expect(await run(["list", "--scan-seconds", "-1"]).code == 2)
        #expect(await run(["list", "--scan-seconds", "soon"]).code == 2)
        for value in ["0", "600.5", "nan"] {
            let refused = await run(["list", "--scan-seconds", value])
            #expect(refused.code == 2, "\(value)")
            // The message must not claim that 0 is allowed.
            #expect(refused.err.contains("--scan-seconds must be a number of seconds more than 0 and at most 600"), "\(value)")
            #expect(!refused.err.contains("between 0"))
        }
        #expect(await run(["list", "--scan-seconds", "0.1"]).code == 0)
        #expect(await run(["list", "--hci", "v4l2:/dev/video0"]).code == 0) // a wrong-kind URI is a problem entry
    }

    @Test func timeoutMessagesDoNotClaimZeroIsAllowed() async {
        let cases: [([String], String)] = [
            (["weigh", "--hci", "sim:", "--timeout", "0"], "--timeout must be a number of seconds more than 0 and at most 3600, e.g. 30"),
            (["weigh", "--hci", "sim:", "--timeout", "3601"], "--timeout must be a number of seconds more than 0 and at most 3600, e.g. 30"),
            (["import", "--camera", "sim:", "--out", "/tmp/hwprobe-timeout-never-written.json", "--timeout", "0", "--json"],
             "--timeout must be a number of seconds more than 0 and at most 86400, e.g. 120"),
        ]
        for (arguments, message) in cases {
            let result = await run(arguments)
            #expect(result.code == 2, "\(arguments)")
            #expect(result.err.contains(message), "\(arguments): \(result.err)")
        }
    }

    @Test func badHciURIIsAUsageError() async {
        let result = await run(["list", "--hci", "bluetooth:0", "--json"])
        #expect(result.code == 2)
        #expect(result.out.contains("\"usage\""))
    }
}

extension ListSources {
    /// A machine with nothing at all: every probe answers "none".
    static let empty = ListSources(
        controllers: { () throws(HCIAccessError) in [] }, cameras: { () throws(CameraError) in .init(cameras: [], problems: []) },
        usb: { (_) throws(USBAccessError) in [] }, evdev: { () throws(InputAccessError) in ([], []) },
        hidraw: { ([], []) }, serialPorts: { [] })
}
