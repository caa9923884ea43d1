import Flows
import Foundation
import HAL
import Transports

/// The CLI's entry: parse, dispatch, map failures to the contract's exit codes and JSON.
struct HWProbe: Sendable {
    var console: Console
    var registry = DriverRegistry.linked
    var listSources = ListSources()
    /// The simulated bench runs in real time for `list` and `scan` unless HWPROBE_SIM_SPEED says otherwise.
    var bench = SimulatedBench(clock: ScaledClock(speed: simulationSpeed(default: 1)))
    /// The demo plays the bench four times faster than life, so it finishes in seconds.
    var demoSpeed = simulationSpeed(default: 4)
    var importQuestions = ImportQuestions()
    /// The clock haptic sinks time their cues on (a test's, so a recorded cue's offsets are exact).
    var hapticClock: any Clock<Duration> = ContinuousClock()
    /// For tests: a scripted person pressing keys on each screen of an interactive flow.
    var person: (@Sendable (Screen) -> [Key])?
    /// For tests: the person answering `pair`'s and `serve`'s pairing prompts (the passkey shown or
    /// typed, the numeric comparison) where a terminal's user would; nil: the unattended rules.
    var pairingPerson: (any PairingDelegate)?
    /// The bind keys this run reads encrypted broadcasts with (`--bind-key`, and the kept ones):
    /// the registry's drivers have them too (``withBindKeys(_:)``).
    var bindKeys = BindKeys()

    func run(_ arguments: [String]) async -> Int32 {
        // One interrupt policy for the whole command; if a signal must end it before the command
        // can answer, --json still gets its one object.
        let console = console
        let json = arguments.contains("--json")
        SignalHandling.shared.beginRun(lastWords: { signal in
            if json { console.out(JSON.error(CLIFailure(kind: .cancelled, message: "interrupted by signal \(signal)"))) }
        })
        let invocation: Invocation
        do {
            invocation = try ArgumentParser.parse(arguments)
        } catch {
            let spec = error.command.flatMap(Commands.spec(named:))
            if arguments.contains("--json") {
                console.out(JSON.error(CLIFailure(kind: .usage, message: error.message)))
            }
            let helpCommand = spec.map { "hwprobe \($0.name) --help" } ?? "hwprobe --help"
            // A mistyped command gets the one line that helps, not the whole overview.
            console.err("hwprobe: \(error.message)\n" + (spec.map { "\nusage: \($0.synopsis)\n" } ?? "")
                        + "Try `\(helpCommand)`.\n")
            return ExitCode.usage
        }
        if invocation.wantsHelp {
            console.out(helpForScreen(Self.help(for: invocation.commandGiven ? invocation.command : nil)))
            return ExitCode.success
        }
        if invocation.wantsVersion {
            console.out(Version.line + "\n")
            return ExitCode.success
        }
        let reports: ReportTargets
        do throws(CLIFailure) {
            // Before any single file is checked: two options naming one file is the first mistake to say.
            try OutputFiles.checkDistinct(invocation)
            reports = try ReportTargets(invocation)
        } catch {
            if invocation.wantsJSON { console.out(JSON.error(error)) }
            console.err("hwprobe \(invocation.command): \(error.message)\n")
            return error.exitCode
        }
        let started = Date()
        let clock = ContinuousClock()
        let start = clock.now
        var failure: CLIFailure?
        var code: Int32
        let checkCases = Locked<(suite: String, cases: [RunReport.Case])?>(nil)
        let details = Locked(RunDetails())
        do {
            code = try await withBindKeys(invocation).dispatch(invocation, checkCases: checkCases, details: details)
        } catch {
            if invocation.wantsJSON { console.out(JSON.error(error)) }
            console.err("hwprobe \(invocation.command): \(error.message)\n")
            failure = error
            code = error.exitCode
        }
        if !reports.isEmpty {
            let elapsed = start.duration(to: clock.now)
            let seconds = elapsed.inSeconds
            var report = ReportTargets.runReport(for: invocation, arguments: arguments, started: started, seconds: seconds,
                                                 exitCode: code, failure: failure, details: details.withLock { $0 })
            // `check` reports one case per check, in a suite named for its profile.
            if let (suite, cases) = checkCases.withLock({ $0 }) {
                report.suite = suite
                report.cases = cases
            }
            // A report that could not be written fails the run (exit 3): no report reads as no result.
            if !reports.write(report, console: console), code == ExitCode.success { code = 3 }
        }
        return code
    }

    /// This CLI with the run's bind keys in its registry, for the commands that take them; a
    /// malformed key is a usage error before anything opens.
    private func withBindKeys(_ invocation: Invocation) throws(CLIFailure) -> HWProbe {
        guard BindKeyArguments.commands.contains(invocation.command) else { return self }
        let console = console
        let keys = try BindKeyArguments.keys(for: invocation, environment: console.environment, warn: { console.diagnostic($0) })
        guard !keys.isEmpty else { return self }
        var keyed = self
        keyed.bindKeys = keys
        keyed.registry = registry.with(bindKeys: keys)
        return keyed
    }

    private func dispatch(_ invocation: Invocation, checkCases: Locked<(suite: String, cases: [RunReport.Case])?>,
                          details: Locked<RunDetails>) async throws(CLIFailure) -> Int32 {
        // A capture may carry personal data: the same rules as --out, checked before any
        // controller opens (an existing file is never overwritten, a symlink never followed).
        if let snoop = invocation.value("--btsnoop") { try OutputTarget.check(snoop, replacing: false, option: "--btsnoop") }
        // -v: every controller a command opens reports through the same log.
        let log = invocation.has("--verbose") ? HostEventLog(console: console, registry: registry) : nil
        var transports = TransportFactory(bench: bench, registry: registry, log: log)
        let console = console
        transports.replayWarning = { console.errLines("hwprobe: \($0)\n") }
        transports.pairing = try AutoPairing(invocation, console: console)
        transports.bondEnvironment = console.environment
        defer { transports.pairing?.dismissPrompts() }
        // A cassette carries what a capture does: the same rules, checked as early.
        let recordPath = invocation.value("--record")
        let anonymize = invocation.has("--anonymize")
        if anonymize, recordPath == nil {
            throw CLIFailure(kind: .usage, message: "--anonymize changes what --record writes: give --record FILE too")
        }
        if let recordPath {
            try OutputTarget.check(recordPath, replacing: false, option: "--record")
            // A camera's frames go beside the cassette: that name must be free too.
            if invocation.command == "import" {
                try OutputTarget.check(MediaCassettes.framesPath(for: recordPath, index: 0), replacing: false, option: "--record")
            }
            let uri = invocation.all("--hci").first.flatMap { try? DeviceURI(parsing: $0) }
            transports.recorder = CassetteRecorder(clock: uri.map(transports.clock(for:)) ?? ContinuousClock())
        }
        let media = MediaCassettes(recordPath: recordPath, hapticClock: hapticClock)
        transports.media = media
        guard let recordPath, let recorder = transports.recorder else {
            return checkingCapture(invocation, checkingReplays(media, try await command(invocation, transports: transports, checkCases: checkCases,
                                                                                        details: details), invocation))
        }
        let code: Int32
        do {
            code = try await command(invocation, transports: transports, checkCases: checkCases, details: details)
        } catch {
            // A session that failed is worth keeping too (a mirror fault, a timeout): it replays
            // the same way. A command refused before it ran (usage) recorded nothing to keep.
            if error.kind != .usage { _ = keep(recorder, media: media, at: recordPath, anonymized: anonymize) }
            throw error
        }
        let kept = keep(recorder, media: media, at: recordPath, anonymized: anonymize).map { code == ExitCode.success ? $0 : code } ?? code
        return checkingCapture(invocation, checkingReplays(media, kept, invocation))
    }

    /// A `--btsnoop` capture that stopped part way (a full disk) is not the session the person
    /// asked for: it is said on stderr, and a run that would have succeeded ends with the I/O
    /// error's exit code (3) instead. The file keeps every whole record up to the failure.
    /// `list` still exits 0 (it exits 0 whenever it could report anything) but says so too.
    private func checkingCapture(_ invocation: Invocation, _ code: Int32) -> Int32 {
        guard let path = invocation.value("--btsnoop"), let failure = BTSnoopWriter.takeFailure(path: path) else { return code }
        let stopped = CLIFailure(kind: .device, message: "\(failure): \(path) holds the traffic up to then, every record whole")
        console.err("hwprobe \(invocation.command): \(stopped.message)\n")
        guard code == ExitCode.success, invocation.command != "list" else { return code }
        return stopped.exitCode
    }

    /// A flow that played its cues on `--haptics replay:FILE` ends with the check: the same
    /// commands at the same offsets, or exit 1 with the difference on stderr (`haptics` checks
    /// its own). Stdout keeps the one result the flow printed, `--json` or not.
    private func checkingReplays(_ media: MediaCassettes, _ code: Int32, _ invocation: Invocation) -> Int32 {
        let differences = media.replayDifferences()
        guard !differences.isEmpty, code == ExitCode.success else { return code }
        console.err("hwprobe \(invocation.command): " + differences.joined(separator: "\n") + "\n")
        return 1
    }

    /// Writes the cassette once the command is done: the cameras' frame files first, the text
    /// last (a cassette that is there always has its frames). A cassette that cannot be written
    /// is said on stderr and turns a success into its exit code; what the command printed stays
    /// as it was.
    private func keep(_ recorder: CassetteRecorder, media: MediaCassettes, at path: String, anonymized: Bool) -> Int32? {
        var published: [String] = []
        do throws(CLIFailure) {
            let finished = try media.finish(ble: recorder, anonymized: anonymized)
            published = finished.published
            if let warning = finished.warning { console.diagnostic("hwprobe: \(warning)") }
            // A session ended by Ctrl-C (a subscription, a cancelled scan) is kept too.
            try OutputTarget.write(Array(finished.text.utf8), to: path, replacing: false, option: "--record",
                                   evenAfterInterrupt: true)
            return nil
        } catch {
            MediaCassettes.remove(published)
            console.err("hwprobe: the cassette was not kept: \(error.message)\n")
            return error.exitCode
        }
    }

    private func command(_ invocation: Invocation, transports: TransportFactory,
                         checkCases: Locked<(suite: String, cases: [RunReport.Case])?>, details: Locked<RunDetails>) async throws(CLIFailure) -> Int32 {
        switch invocation.command {
        case "list": return try await list(invocation, transports: transports)
        case "help": return help(invocation)
        case "completions": return completions(invocation)
        case "demo": return try await DemoCommand(console: console, registry: registry, speed: demoSpeed).run(invocation)
        case "import":
            return try await ImportCommand(console: console, bench: bench, registry: registry, questions: importQuestions, person: person,
                                           media: transports.media).run(invocation)
        case "weigh":
            return try await WeighCommand(console: console, registry: registry, transports: transports, details: details, bindKeys: bindKeys).run(invocation)
        case "gatt":
            return try await GattCommand(console: console, transports: transports).run(invocation)
        case "watch":
            return try await WatchCommand(console: console, registry: registry, sources: listSources, transports: transports).run(invocation)
        case "check":
            return try await CheckCommand(console: console, registry: registry, transports: transports, reportCases: checkCases).run(invocation)
        case "scan":
            return try await ScanCommand(console: console, registry: registry, transports: transports, person: person, details: details).run(invocation)
        case "bonds":
            return try await BondsCommand(console: console, transports: transports).run(invocation)
        case "pair":
            return try await PairCommand(console: console, transports: transports, person: pairingPerson).run(invocation)
        case "serve":
            return try await ServeCommand(console: console, transports: transports, deviceClock: bench.clock, person: pairingPerson).run(invocation)
        case "relay":
            return try await RelayCommand(console: console, transports: transports).run(invocation)
        case "haptics":
            return try await HapticsCommand(console: console, sinks: HapticSinks(registry: registry, console: console, media: transports.media)).run(invocation)
        default:
            throw CLIFailure(kind: .unsupported, message: "`\(invocation.command)` is not part of this build yet")
        }
    }

    private func list(_ invocation: Invocation, transports: TransportFactory) async throws(CLIFailure) -> Int32 {
        var uris: [DeviceURI] = []
        for text in invocation.all("--hci") {
            uris.append(try DeviceURIArgument.parse(text, option: "--hci"))
        }
        var seconds = 3.0
        if let text = invocation.value("--scan-seconds") {
            guard let value = Double(text), value > 0, value <= 600 else {
                throw CLIFailure(kind: .usage, message: "--scan-seconds must be a number of seconds more than 0 and at most 600, e.g. 3 or 0.5")
            }
            seconds = value
        }
        let console = console
        let command = ListCommand(registry: registry, sources: listSources, transports: transports,
                                  snoopPath: invocation.value("--btsnoop"), status: { console.status($0) },
                                  statusTicks: console.errIsTerminal)
        let report = await command.report(hciURIs: uris, scanFor: .milliseconds(Int64(seconds * 1000)))
        console.status(nil)
        console.out(invocation.wantsJSON ? JSON.encode(report) : ListTable.render(report))
        return ExitCode.success
    }
}

extension HWProbe {
    /// `--help` and `hwprobe help [COMMAND]` print the same text: without a command typed, the
    /// overview followed by `list`'s help (since no command means list); else that command's help.
    static func help(for command: String?) -> String {
        guard let command else { return Commands.overview + "\n" + (Commands.spec(named: ArgumentParser.defaultCommand)?.helpText ?? "") }
        return Commands.spec(named: command)?.helpText ?? Commands.overview
    }

    /// `hwprobe help [COMMAND] [--man]`. The parser has already checked that COMMAND is one.
    func help(_ invocation: Invocation) -> Int32 {
        if invocation.has("--man") {
            console.out(ManPage.roff())
        } else {
            console.out(helpForScreen(Self.help(for: invocation.positionals.first)))
        }
        return ExitCode.success
    }

    /// Help wrapped to the terminal it is printed on (issue 27, item 17); a pipe gets it as
    /// written, one option to a line, for grep.
    func helpForScreen(_ text: String) -> String {
        guard console.isTerminal,
              let width = TerminalRenderer.width(environment: console.environment) ?? TerminalRenderer.terminalColumns(),
              width >= 20 else { return text }
        return Self.wrap(text, width: width)
    }

    /// Each line longer than `width` broken at spaces; continuation lines keep the line's
    /// indentation, and an option's description (after two spaces) lines up under itself.
    static func wrap(_ text: String, width: Int) -> String {
        var out: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var rest = Substring(line)
            guard rest.count > width else { out.append(String(rest)); continue }
            let leading = rest.prefix { $0 == " " }.count
            // `  --hci URI   what it does`: continuations start where the description does.
            var hanging = leading
            if let gap = rest.dropFirst(leading).range(of: "  ") {
                let column = rest.distance(from: rest.startIndex, to: gap.upperBound)
                let after = rest[gap.upperBound...].prefix { $0 == " " }.count
                if column + after < width / 2 { hanging = column + after }
            }
            var first = true
            while rest.count > (first ? width : width - hanging) {
                let room = first ? width : width - hanging
                let window = rest.prefix(room + 1)
                let cut = window.lastIndex(of: " ").flatMap { $0 > rest.startIndex ? $0 : nil } ?? rest.index(rest.startIndex, offsetBy: room)
                out.append((first ? "" : String(repeating: " ", count: hanging)) + String(rest[..<cut]).trimmingTrailingSpaces())
                rest = rest[cut...].drop { $0 == " " }
                first = false
                if rest.isEmpty { break }
            }
            if !rest.isEmpty { out.append((first ? "" : String(repeating: " ", count: hanging)) + String(rest)) }
        }
        return out.joined(separator: "\n")
    }

    /// `hwprobe completions bash|zsh|fish`. The parser has already checked the shell's name.
    func completions(_ invocation: Invocation) -> Int32 {
        switch invocation.positionals.first {
        case "zsh": console.out(ZshCompletion.script())
        case "fish": console.out(FishCompletion.script())
        default: console.out(BashCompletion.script())
        }
        return ExitCode.success
    }
}

/// `HWPROBE_SIM_SPEED`: how much faster than real time the simulated bench runs.
func simulationSpeed(default value: Double) -> Double {
    guard let text = ProcessInfo.processInfo.environment["HWPROBE_SIM_SPEED"], let speed = Double(text), speed > 0 else {
        return value
    }
    return speed
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
