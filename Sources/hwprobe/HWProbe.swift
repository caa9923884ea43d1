import Foundation
import HAL

/// The CLI's entry: parse, dispatch, map failures to the contract's exit codes and JSON.
struct HWProbe: Sendable {
    var console: Console
    var registry = DriverRegistry(drivers: linkedDrivers)
    var listSources = ListSources()
    /// The simulated bench runs in real time for `list` and `scan` unless HWPROBE_SIM_SPEED says otherwise.
    var bench = SimulatedBench(clock: ScaledClock(speed: simulationSpeed(default: 1)))
    /// The demo plays the bench four times faster than life, so it finishes in seconds.
    var demoSpeed = simulationSpeed(default: 4)
    var importQuestions = ImportQuestions()

    func run(_ arguments: [String]) async -> Int32 {
        let invocation: Invocation
        do {
            invocation = try ArgumentParser.parse(arguments)
        } catch {
            let spec = error.command.flatMap(Commands.spec(named:))
            if arguments.contains("--json") {
                console.out(JSON.error(CLIFailure(kind: .usage, message: error.message)))
            }
            let helpCommand = spec.map { "hwprobe \($0.name) --help" } ?? "hwprobe --help"
            console.err("hwprobe: \(error.message)\n\n" + (spec.map { "usage: \($0.synopsis)\n" } ?? Commands.overview)
                        + "Try `\(helpCommand)`.\n")
            return ExitCode.usage
        }
        if invocation.wantsHelp {
            // A bare `hwprobe --help` introduces every command; `hwprobe CMD --help` explains one.
            let bare = arguments.count == 1
            let commandHelp = Commands.spec(named: invocation.command)?.helpText ?? ""
            console.out(bare ? Commands.overview + "\n" + commandHelp : commandHelp)
            return ExitCode.success
        }
        do {
            return try await dispatch(invocation)
        } catch {
            if invocation.wantsJSON { console.out(JSON.error(error)) }
            console.err("hwprobe \(invocation.command): \(error.message)\n")
            return error.exitCode
        }
    }

    private func dispatch(_ invocation: Invocation) async throws(CLIFailure) -> Int32 {
        // -v: every controller a command opens reports through the same log.
        let log = invocation.has("--verbose") ? HostEventLog(console: console, registry: registry) : nil
        let transports = TransportFactory(bench: bench, registry: registry, log: log)
        switch invocation.command {
        case "list": return try await list(invocation, transports: transports)
        case "demo": return try await DemoCommand(console: console, registry: registry, speed: demoSpeed).run(invocation)
        case "import":
            return try await ImportCommand(console: console, bench: bench, registry: registry, questions: importQuestions).run(invocation)
        case "weigh":
            return try await WeighCommand(console: console, registry: registry, transports: transports).run(invocation)
        case "gatt":
            return try await GattCommand(console: console, transports: transports).run(invocation)
        case "scan":
            return try await ScanCommand(console: console, registry: registry, transports: transports).run(invocation)
        case "haptics":
            return try await HapticsCommand(console: console, sinks: HapticSinks(registry: registry, console: console)).run(invocation)
        default:
            throw CLIFailure(kind: .unsupported, message: "`\(invocation.command)` is not part of this build yet")
        }
    }

    private func list(_ invocation: Invocation, transports: TransportFactory) async throws(CLIFailure) -> Int32 {
        var uris: [DeviceURI] = []
        for text in invocation.all("--hci") {
            do { uris.append(try DeviceURI(parsing: text)) } catch {
                throw CLIFailure(kind: .usage, message: error.description)
            }
        }
        var seconds = 3.0
        if let text = invocation.value("--scan-seconds") {
            guard let value = Double(text), value > 0, value <= 600 else {
                throw CLIFailure(kind: .usage, message: "--scan-seconds must be a number of seconds between 0 and 600")
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

/// `HWPROBE_SIM_SPEED`: how much faster than real time the simulated bench runs.
func simulationSpeed(default value: Double) -> Double {
    guard let text = ProcessInfo.processInfo.environment["HWPROBE_SIM_SPEED"], let speed = Double(text), speed > 0 else {
        return value
    }
    return speed
}
