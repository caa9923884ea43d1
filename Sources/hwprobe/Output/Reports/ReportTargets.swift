import Foundation

/// The `--report junit:FILE` and `--report tap:FILE` a command was given: checked before any
/// device opens (like `--out`: a typo costs nothing), written when the run ends, whatever its
/// outcome, through the same private-file path as `--out` (0600, never through a symbolic link,
/// whole or not at all). An existing regular file is replaced: a CI job writes the same report
/// path on every run.
struct ReportTargets: Sendable {
    enum Format: String, Sendable, CaseIterable {
        case junit
        case tap
    }

    var targets: [(format: Format, path: String)]

    /// Reads and checks every `--report` of `invocation`.
    init(_ invocation: Invocation) throws(CLIFailure) {
        var targets: [(Format, String)] = []
        for value in invocation.all("--report") {
            guard let colon = value.firstIndex(of: ":"), let format = Format(rawValue: String(value[..<colon])) else {
                throw CLIFailure(kind: .usage, message: "--report wants junit:FILE or tap:FILE, not \(value)")
            }
            let path = String(value[value.index(after: colon)...])
            guard !path.isEmpty else { throw CLIFailure(kind: .usage, message: "--report \(format.rawValue): needs a file name after the colon") }
            guard !targets.contains(where: { $0.1 == path }) else {
                throw CLIFailure(kind: .usage, message: "--report names \(path) twice: give each report its own file")
            }
            try OutputTarget.check(path, replacing: true, option: "--report")
            targets.append((format, path))
        }
        self.targets = targets
    }

    var isEmpty: Bool { targets.isEmpty }

    /// Writes `report` to every target. A report that cannot be written is said on stderr and
    /// makes the run fail: a CI job must not read a missing report as a pass.
    func write(_ report: RunReport, console: Console) -> Bool {
        var allWritten = true
        for (format, path) in targets {
            let text = switch format {
            case .junit: JUnitReport.render(report)
            case .tap: TAPReport.render(report)
            }
            do throws(CLIFailure) {
                // A run ended by Ctrl-C or a signal is reported too (the report says so); only an
                // interrupt during the write itself abandons it.
                try OutputTarget.write(Array(text.utf8), to: path, replacing: true, option: "--report", evenAfterInterrupt: true)
            } catch {
                console.err("hwprobe: --report \(format.rawValue):\(path): \(error.message)\n")
                allWritten = false
            }
        }
        return allWritten
    }

    /// The one case a command's run is: passed when it ended with 0, else failed with its reason.
    static func runReport(for invocation: Invocation, arguments: [String], started: Date, seconds: Double,
                          exitCode: Int32, failure: CLIFailure?, details: RunDetails = RunDetails(),
                          locator: @autoclosure () -> DeviceLocator = .live) -> RunReport {
        let command = invocation.command
        let option = ["--hci", "--camera", "--device"].first { invocation.value($0) != nil }
        let device = option.flatMap { invocation.value($0) }
        var properties: [RunReport.Property] = []
        if let option, let device {
            properties.append(.init(name: "device", value: device))
            // The identity a replug keeps: which of ten identical pads this run was.
            if let uri = try? DeviceURIArgument.parse(device, option: option, locator: locator()), !uri.isSimulated,
               let id = locator().identity(of: uri) {
                properties.append(.init(name: "device.id", value: id))
            }
        }
        if let address = invocation.value("--mirror") ?? (["check", "weigh", "gatt"].contains(command) ? invocation.positionals.first : nil) {
            properties.append(.init(name: "peripheral", value: address))
        }
        // What the command found and measured: the address it used replaces the one typed.
        for property in details.properties {
            properties.removeAll { $0.name == property.name }
            properties.append(property)
        }
        var title = "hwprobe \(command)"
        if let device { title += " on \(device)" }
        if let address = invocation.value("--mirror") ?? invocation.positionals.first { title += " \(address)" }
        if let cue = invocation.value("--cue") { title += " (\(cue))" }
        let result: RunReport.Case.Result
        if exitCode == 0 {
            result = .passed
        } else if failure == nil, let presented = details.failure {
            result = .failed(kind: presented.kind, message: presented.message + " (exit \(exitCode))")
        } else {
            let kind = failure.map { "\($0.kind)" } ?? "exit \(exitCode)"
            result = .failed(kind: kind, message: (failure?.message ?? "ended with exit code \(exitCode)") + " (exit \(exitCode))")
        }
        return RunReport(suite: "hwprobe \(command)", started: started, hostname: ProcessInfo.processInfo.hostName,
                         commandLine: (["hwprobe"] + BindKeyArguments.redacted(arguments)).joined(separator: " "), properties: properties,
                         cases: [RunReport.Case(id: "hwprobe.\(command)", title: title, result: result, seconds: seconds)])
    }
}
