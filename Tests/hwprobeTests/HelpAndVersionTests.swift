import Foundation
import HAL
import Testing
@testable import hwprobe

@Suite struct HelpAndVersionTests {
    func run(_ arguments: [String]) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole()
        let code = await HWProbe(console: captured.console, listSources: .empty).run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    @Test func versionPrintsTheNumberAndTheCommitWhenKnown() async {
        for arguments in [["--version"], ["-v", "--version"], ["scan", "--version"]] {
            let result = await run(arguments)
            #expect(result.code == 0, "\(arguments)")
            #expect(result.out == Version.line + "\n", "\(arguments)")
            #expect(result.err.isEmpty)
        }
        #expect(Version.text(number: "0.3.0", commit: "7fc93d1") == "hwprobe 0.3.0 (commit 7fc93d1)")
        #expect(Version.text(number: "0.3.0", commit: nil) == "hwprobe 0.3.0")
        #expect(Version.line.hasPrefix("hwprobe \(Version.number)"))
    }

    /// Built from this checkout, the binary knows a commit, and it is one of this repository's.
    /// (Not necessarily HEAD: a commit made after the build is not in it until the next build.)
    @Test(.enabled(if: GitCommitScript.gitIsInstalled && GitCommitScript.packageIsACheckout))
    func theBuildKnowsACommitOfThisRepository() throws {
        let commit = try #require(Version.commit, "built in a git checkout, hwprobe must know its commit")
        #expect(commit.count >= 7 && commit.allSatisfy(\.isHexDigit))
        let check = try ShellRun.run("/usr/bin/git", ["-C", GitCommitScript.packageDirectory.path, "cat-file", "-e", commit + "^{commit}"])
        #expect(check.code == 0, "\(commit) is no commit of this repository: \(check.err)")
    }

    @Test func helpPrintsWhatDashDashHelpPrints() async {
        let bare = await run(["help"])
        #expect(bare.code == 0 && bare.err.isEmpty)
        #expect(bare.out == (await run(["--help"])).out)
        #expect(bare.out == (await run(["-v", "--help"])).out) // a global option is no command
        #expect(bare.out.hasPrefix(Commands.overview))
        for spec in Commands.all {
            let viaHelp = await run(["help", spec.name])
            #expect(viaHelp.code == 0, "\(spec.name)")
            #expect(viaHelp.out == spec.helpText, "\(spec.name)")
            #expect(viaHelp.out == (await run([spec.name, "--help"])).out, "\(spec.name)")
        }
        #expect((await run(["help", "scan"])).out.contains("usage: hwprobe scan --hci URI"))
    }

    /// Issue 27: the simulated bench's backup could be opened only by someone who had run `demo`.
    @Test func importsHelpAndTheManPageGiveTheBenchBackupsPassword() async {
        let help = await run(["import", "--help"])
        #expect(help.code == 0)
        #expect(help.out.contains("sim: (the bench's backup; its password is \"\(DemoCommand.password)\")"))
        #expect(help.out.contains("hwprobe import --camera sim: --out /tmp/vault.json"))
        let man = await run(["help", "--man"])
        #expect(man.out.contains(DemoCommand.password))
    }

    @Test func helpForAnUnknownCommandIsAUsageError() async {
        let result = await run(["help", "nosuch"])
        #expect(result.code == 2)
        #expect(result.out.isEmpty)
        #expect(result.err.hasPrefix("hwprobe: unknown command 'nosuch' (use one of list, gatt"))
        #expect(result.err.contains("usage: hwprobe help [COMMAND] [--man]"))
        let typo = await run(["help", "imprt"])
        #expect(typo.code == 2)
        #expect(typo.err.hasPrefix("hwprobe: unknown command 'imprt' (did you mean import?)"))
        let misspeltCommand = await run(["lsit"])
        #expect(misspeltCommand.code == 2)
        #expect(misspeltCommand.err.hasPrefix("hwprobe: unknown command 'lsit' (did you mean list?)"))
    }

    @Test func everyCommandHasExamplesInItsHelp() {
        for spec in Commands.all {
            #expect(!spec.examples.isEmpty, "\(spec.name) has no examples")
            #expect(spec.helpText.contains("\nexamples:\n"), "\(spec.name)")
            for example in spec.examples {
                #expect(spec.helpText.contains("  " + example.line + "\n      " + example.what + "\n"), "\(example.line)")
            }
        }
    }

    /// Each example is a real command line of its own command: it parses (no usage error), every
    /// device URI in it parses, and its FILE options are not URIs.
    @Test func everyExampleParsesAgainstTheTable() throws {
        for spec in Commands.all {
            for example in spec.examples {
                let words = Self.commandWords(example.line)
                #expect(words.first == "hwprobe", "\(example.line)")
                let invocation: Invocation
                do { invocation = try ArgumentParser.parse(Array(words.dropFirst())) } catch {
                    Issue.record("\(example.line): \(error.message)")
                    continue
                }
                #expect(invocation.command == spec.name, "\(example.line)")
                for option in spec.allOptions {
                    guard case .deviceURI = option.value else { continue }
                    for text in invocation.all(option.name) {
                        #expect(throws: Never.self, "\(example.line)") { _ = try DeviceURIArgument.parse(text, option: option.name) }
                    }
                }
            }
        }
    }

    /// The words of a command line up to a shell operator (`|`, `>`, …).
    static func commandWords(_ line: String) -> [String] {
        var words: [String] = []
        for word in line.split(separator: " ").map(String.init) {
            if ["|", ">", ">>", "<", ";", "&&"].contains(word) { break }
            words.append(word)
        }
        return words
    }
}

/// Issue 27, item 17: the small words of the command line.
@Suite struct CommandLineWordsTests {
    func run(_ arguments: [String]) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole()
        let code = await HWProbe(console: captured.console, listSources: .empty).run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    @Test func hwprobeDashDashManIsHelpDashDashMan() async {
        let man = await run(["--man"])
        #expect(man.code == 0)
        #expect(man.out == (await run(["help", "--man"])).out)
    }

    @Test func aMistypedCommandGetsOneLineNotTheOverview() async {
        let typo = await run(["lsit"])
        #expect(typo.code == 2)
        #expect(typo.err == "hwprobe: unknown command 'lsit' (did you mean list?)\nTry `hwprobe --help`.\n")
    }

    @Test func aMistypedCueGetsASuggestion() async {
        let typo = await run(["haptics", "--device", "log:", "--cue", "sucess"])
        #expect(typo.code == 2)
        #expect(typo.err.contains("unknown cue sucess (did you mean success?)"), "\(typo.err)")
    }

    @Test func btsnoopOnACommandWithNoControllerIsRefused() async {
        let result = await run(["import", "--camera", "sim:", "--out", "/tmp/never-written.json", "--btsnoop", "/tmp/never.btsnoop"])
        #expect(result.code == 2)
        #expect(result.err.contains("--btsnoop captures a Bluetooth controller's traffic, and import opens none"), "\(result.err)")
    }
}

/// Issue 27, item 17: addresses that are wrong in a way that can be said.
@Suite struct WrongAddressWordsTests {
    func run(_ arguments: [String]) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: ScaledClock(speed: 25))
        let code = await cli.run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    @Test func aMirrorAddressThatIsAScaleIsSaidAtOnce() async {
        let result = await run(["scan", "--hci", "sim:", "--mirror", "D4:12:3A:00:18:1D", "--yes", "--json"])
        #expect(result.code == 1)
        #expect(result.out.contains("D4:12:3A:00:18:1D (Bench Scale) is not a body-scan mirror"), "\(result.out)")
    }

    @Test func theWrongAddressTypeGetsAHint() async {
        let result = await run(["gatt", "--hci", "sim:", "C0:FF:EE:00:4F:2A/public"])
        #expect(result.code != 0)
        #expect(result.err.contains("it advertises as C0:FF:EE:00:4F:2A/random"), "\(result.err)")
    }
}

/// Issue 27, item 17: help is wrapped to the terminal, option descriptions hanging under themselves.
@Suite struct HelpWrappingTests {
    @Test func longLinesBreakAtSpacesAndDescriptionsHang() {
        let text = "  --hci URI                 HCI controller: hci:N, uart:/dev/ttyX?baud=…&rtscts=…, tcp:HOST:PORT, sim: or replay:FILE"
        let wrapped = HWProbe.wrap(text, width: 60).split(separator: "\n").map(String.init)
        #expect(wrapped.allSatisfy { $0.count <= 60 }, "\(wrapped)")
        #expect(wrapped.count > 1)
        #expect(wrapped.dropFirst().allSatisfy { $0.hasPrefix(String(repeating: " ", count: 28)) && !$0.hasPrefix(String(repeating: " ", count: 29)) },
                "\(wrapped)")
        #expect(wrapped.joined(separator: " ").split(separator: " ") == text.split(separator: " "), "no word lost")
    }

    @Test func everyCommandsHelpFitsFortyColumns() {
        for spec in Commands.all {
            let wrapped = HWProbe.wrap(spec.helpText, width: 40)
            let long = wrapped.split(separator: "\n").filter { $0.count > 40 && $0.contains(" ") && !$0.hasPrefix("  hwprobe ") }
            #expect(long.isEmpty, "\(spec.name): \(long)")
        }
    }
}

/// Issue 27, item 17: the mirror profile's own ATT errors by the profile's names.
@Suite struct ProfileErrorWordsTests {
    @Test func aMirrorRefusalIsNamedAsTheProfileNamesIt() async {
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: ScaledClock(speed: 25))
        // Start Scan while idle: the profile's 0x82 Not Ready.
        let code = await cli.run(["gatt", "--hci", "sim:", "C0:FF:EE:00:4F:2A", "--write", "7B9E0008-3C2A-4F1B-9E6D-5A4C3B2A1F00=02"])
        #expect(code == 1)
        #expect(captured.stderr.contains("ATT error 0x82 Not Ready (mirror-v1)"), "\(captured.stderr)")
        #expect(GattText.attError(0x82) == "0x82 Application Error", "no profile, no profile name")
    }
}
