import Foundation
import HAL
import Transports

/// `hwprobe check`: a profile's conformance checks against one peripheral (docs/cli.md,
/// `check`): found by its advertisement (the first one a driver with a profile
/// claims, without ADDRESS), connected, then every check in the profile's order, each within its
/// deadline, each passed, failed with what was expected and what was seen, or skipped with why.
/// Exit 0 when nothing failed, 1 when a check failed, 3 when the device cannot be found or
/// connected. The results also go to `--report` files, one test case per check.
struct CheckCommand: Sendable {
    var console: Console
    var registry: DriverRegistry
    var transports: TransportFactory
    /// Where the run's cases go for `--report` (one per check, not one for the run).
    var reportCases: Locked<(suite: String, cases: [RunReport.Case])?>

    /// How long to look for the device.
    static let findDeadline: Duration = .seconds(10)

    struct Report: Encodable {
        var address: String
        var profile: String
        var passed: Int
        var failed: Int
        var skipped: Int
        var checks: [CheckResult]
    }

    func run(_ invocation: Invocation) async throws(CLIFailure) -> Int32 {
        guard let text = invocation.value("--hci") else { throw CLIFailure(kind: .usage, message: "--hci is required") }
        let uri = try DeviceURIArgument.parse(text, option: "--hci")
        let wanted: BLEAddress?
        if let given = invocation.positionals.first {
            guard let address = BLEAddress(string: given) else {
                throw CLIFailure(kind: .usage, message: "ADDRESS must look like AA:BB:CC:DD:EE:FF, optionally with /public or /random")
            }
            wanted = address
        } else {
            wanted = nil
        }
        let explicitKind = invocation.positionals.first?.contains("/") ?? false
        var profile: CheckProfile?
        if let name = invocation.value("--profile") {
            guard let named = CheckProfile.named(name) else {
                throw CLIFailure(kind: .usage, message: "no profile called '\(name)' (one of \(CheckProfile.all.map(\.name).joined(separator: ", ")))")
            }
            profile = named
        }
        let central = try await transports.central(for: uri, snoopPath: invocation.value("--btsnoop"))
        let clock = transports.clock(for: uri)
        // Ctrl-C, SIGTERM, SIGHUP: the checks stop where they are and the run ends as cancelled,
        // but through the ordinary way out, so that --report is still written (the README
        // promises one whatever the outcome), with every unfinished check marked so.
        let checking = Task { () async -> Result<Int32, CLIFailure> in
            await Result { () async throws(CLIFailure) -> Int32 in
                try await checkDevice(wanted, explicitKind: explicitKind, profile: profile, central: central, clock: clock, uri: uri,
                                      json: invocation.wantsJSON)
            }
        }
        let interrupt = SignalHandling.shared.onInterrupt { checking.cancel() }
        let outcome = await checking.value
        interrupt.end()
        console.status(nil)
        await central.close()
        if let signal = SignalHandling.shared.interruption {
            let code = try outcome.get()
            throw CLIFailure(kind: .cancelled, message: "interrupted by signal \(signal)"
                             + (code == ExitCode.success ? "" : " after a check failed") + "; unfinished checks are reported as not run",
                             exitOverride: SignalHandling.exitCode(for: signal))
        }
        return try outcome.get()
    }

    private func checkDevice(_ wanted: BLEAddress?, explicitKind: Bool, profile: CheckProfile?, central: BLECentral,
                             clock: any Clock<Duration>, uri: DeviceURI, json: Bool) async throws(CLIFailure) -> Int32 {
        do {
            console.status("looking for \(wanted.map(\.description) ?? "a device with a profile") on \(uri) (up to \(Self.findDeadline.seconds) s)")
            let device = try await find(wanted, explicitKind: explicitKind, given: profile, on: central, clock: clock)
            let chosen = profile ?? CheckProfile.forDriver(registry.claim(.advertisement(device.advertisement))?.descriptor.id,
                                                           advertisement: device.advertisement)
            guard let chosen else {
                throw CLIFailure(kind: .usage, message: "no driver with a profile claims \(device.address); name one with --profile "
                                 + CheckProfile.all.map(\.name).joined(separator: "|"))
            }
            let session = CheckSession(address: device.address, advertisement: device.advertisement, central: central, clock: clock)
            console.status("connecting to \(device.address)")
            do throws(CheckFinding) { _ = try await session.connection() } catch {
                throw CLIFailure(kind: session.pairingFailed ? .incomplete : .device, message: "could not connect to \(device.address): \(error.message)")
            }
            let results = await runChecks(chosen, session: session, clock: clock, json: json)
            await session.disconnect()
            console.status(nil)
            return report(results, profile: chosen, address: device.address, json: json)
        }
    }

    /// The device: by address (either address type unless one was given), or the first a profile
    /// is known for. After it is first heard, reports go on being taken for `settle` (a legacy
    /// advertiser's scan response comes after its advertisement, and the checks judge both merged).
    private func find(_ wanted: BLEAddress?, explicitKind: Bool, given profile: CheckProfile?, on central: BLECentral,
                      clock: any Clock<Duration>) async throws(CLIFailure) -> DiscoveredDevice {
        let registry = registry
        let latest = Locked<DiscoveredDevice?>(nil)
        let heard = AsyncStream.makeStream(of: Void.self)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    for try await device in central.discover() {
                        let matches: Bool
                        if let current = latest.withLock({ $0 }) {
                            matches = device.address == current.address
                        } else if let wanted {
                            matches = device.address.bytes == wanted.bytes && (!explicitKind || device.address.kind == wanted.kind)
                        } else {
                            matches = profile != nil || CheckProfile.forDriver(registry.claim(.advertisement(device.advertisement))?.descriptor.id,
                                                                               advertisement: device.advertisement) != nil
                        }
                        guard matches else { continue }
                        let first = latest.withLock { found -> Bool in
                            defer { found = device }
                            return found == nil
                        }
                        if first { heard.continuation.yield() }
                    }
                } catch {}
            }
            group.addTask {
                try? await clock.sleep(for: Self.findDeadline)
            }
            group.addTask {
                var first = heard.stream.makeAsyncIterator()
                guard await first.next() != nil else { return }
                try? await clock.sleep(for: Self.settle)
            }
            _ = await group.next()
            group.cancelAll()
        }
        heard.continuation.finish()
        guard let found = latest.withLock({ $0 }) else {
            throw CLIFailure(kind: .device, message: "\(wanted.map(\.description) ?? "no device with a profile") not found: nothing matching advertised "
                             + "within \(Self.findDeadline.seconds) s. `hwprobe list --hci …` shows what is advertising")
        }
        return found
    }

    /// The message of a check an interrupt kept from running, and of the one it cut short.
    static let notRun = "not run: the check was interrupted (Ctrl-C or a signal)"
    static let unfinished = "unfinished: interrupted (Ctrl-C or a signal) while it ran"

    /// How long reports of the device are taken after it is first heard.
    static let settle: Duration = .milliseconds(1500)

    /// Every check in order, each raced against its deadline.
    private func runChecks<C: Clock<Duration>>(_ profile: CheckProfile, session: CheckSession, clock: C, json: Bool) async -> [CheckResult] {
        var results: [CheckResult] = []
        for (index, check) in profile.checks.enumerated() {
            if Task.isCancelled {
                // Interrupted: what was not run is in the report as such, not missing from it.
                results.append(CheckResult(id: check.id, title: check.title, result: .skip, message: Self.notRun, seconds: 0))
                continue
            }
            console.status("[\(index + 1)/\(profile.checks.count)] \(check.title)")
            let start = clock.now
            let finding: CheckFinding? = await withTaskGroup(of: CheckFinding?.self) { group in
                group.addTask {
                    do throws(CheckFinding) {
                        try await check.observe(session)
                        return nil
                    } catch {
                        return error
                    }
                }
                group.addTask {
                    guard (try? await clock.sleep(for: check.deadline)) != nil else { return CheckFinding.skip("cancelled") }
                    return .fail(expected: "the check done within \(check.deadline.seconds) s", seen: "it was still waiting")
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
            // A check cut short by the interrupt did not finish: it is not a skip of its own making.
            let cutShort = Task.isCancelled && finding?.kind != .fail
            let elapsed = start.duration(to: clock.now)
            let seconds = elapsed.inSeconds
            let result = CheckResult(id: check.id, title: check.title,
                                     result: cutShort ? .skip : finding.map { $0.kind == .fail ? .fail : .skip } ?? .pass,
                                     message: cutShort ? Self.unfinished : finding?.message, seconds: (seconds * 1000).rounded() / 1000)
            results.append(result)
            if !json {
                let mark = switch result.result { case .pass: "PASS"; case .fail: "FAIL"; case .skip: "SKIP" }
                console.out("\(mark)  \(check.id)  \(check.title)" + (result.message.map { "\n      \($0)" } ?? "") + "\n")
            }
        }
        return results
    }

    private func report(_ results: [CheckResult], profile: CheckProfile, address: BLEAddress, json: Bool) -> Int32 {
        let failed = results.filter { $0.result == .fail }.count
        let skipped = results.filter { $0.result == .skip }.count
        let passed = results.count - failed - skipped
        let cases = results.map { result -> RunReport.Case in
            let outcome: RunReport.Case.Result = switch result.result {
            case .pass: .passed
            case .fail: .failed(kind: "nonconformance", message: result.message ?? "")
            case .skip: .skipped(reason: result.message ?? "")
            }
            return RunReport.Case(id: "\(profile.name).\(result.id)", title: result.title, result: outcome, seconds: result.seconds)
        }
        reportCases.withLock { $0 = (profile.name, cases) }
        if json {
            console.out(JSON.encode(Report(address: address.description, profile: profile.name, passed: passed, failed: failed,
                                           skipped: skipped, checks: results)))
        } else {
            console.out("\(profile.name) on \(address): \(passed) passed, \(failed) failed, \(skipped) skipped\n")
        }
        return failed == 0 ? ExitCode.success : 1
    }
}
