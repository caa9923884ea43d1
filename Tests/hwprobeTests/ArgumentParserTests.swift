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
            (["demo", "--yes=1"], "unknown option '--yes' for demo"),
            (["list", "--json=yes"], "--json takes no value"),
            (["list", "extra"], "unexpected argument 'extra'"),
        ]
        for (arguments, message) in cases {
            #expect(throws: UsageError.self, "\(arguments)") { try ArgumentParser.parse(arguments) }
            do { _ = try ArgumentParser.parse(arguments) } catch { #expect(error.message == message, "\(arguments)") }
        }
    }

    @Test func helpSkipsRequiredChecks() throws {
        #expect(try ArgumentParser.parse(["scan", "--help"]).wantsHelp)
        #expect(try ArgumentParser.parse(["import", "-h"]).wantsHelp)
    }

    @Test func everyCommandOfTheContractExists() {
        #expect(Commands.all.map(\.name) == ["list", "gatt", "weigh", "scan", "import", "haptics", "demo"])
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
        #expect(await run(["list", "--hci", "v4l2:/dev/video0"]).code == 0) // a wrong-kind URI is a problem entry
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
