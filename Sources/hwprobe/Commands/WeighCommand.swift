import HAL
import Transports

/// `hwprobe weigh`: one stable weight from a scale, connected or broadcasting. Stable means the
/// device's own stable flag where it has one, otherwise two consecutive readings equal within the
/// resolution (0.005 kg).
///
/// It looks for the scale for at most ``scanWindow`` (or `--timeout`, when shorter) and says what
/// it is doing while it waits: the seconds left of the scan, the connection, each reading while
/// the scale settles. A device that turns out not to be a scale is refused as soon as it is seen.
struct WeighCommand: Sendable {
    var console: Console
    var registry: DriverRegistry
    var transports: TransportFactory
    /// Where `--report` learns the scale used and what it weighed.
    var details: Locked<RunDetails>?
    /// The run's bind keys (the registry's drivers have them): what `--save-key` keeps.
    var bindKeys = BindKeys()

    struct Report: Encodable {
        var address: String
        var driver: String
        var weightKg: Double
        var stable: Bool
        /// The pulse, from scales that measure it (the S400); absent otherwise, so every other
        /// scale's object is as it always was.
        var heartRateBpm: Int?
        /// The scale encrypts its readings (it was read with a bind key): not printed.
        var encrypted = false

        enum CodingKeys: String, CodingKey {
            case address, driver, weightKg, stable, heartRateBpm
        }
    }

    static let resolution = 0.005
    /// How long weigh looks for the scale before saying it is not there: long enough for a scale
    /// that advertises only every few seconds, short enough that a wrong address or a scale that
    /// is off is said within seconds instead of after the whole `--timeout`.
    static let scanWindow: Duration = .seconds(10)

    func run(_ invocation: Invocation) async throws(CLIFailure) -> Int32 {
        guard let text = invocation.value("--hci") else { throw CLIFailure(kind: .usage, message: "--hci is required") }
        let uri: DeviceURI
        uri = try DeviceURIArgument.parse(text, option: "--hci")
        var wanted: BLEAddress?
        if let address = invocation.positionals.first {
            guard let parsed = BLEAddress(string: address) else {
                throw CLIFailure(kind: .usage, message: "ADDRESS must look like AA:BB:CC:DD:EE:FF")
            }
            wanted = parsed
        }
        var seconds = 30.0
        if let timeout = invocation.value("--timeout") {
            guard let value = Double(timeout), value > 0, value <= 3600 else {
                throw CLIFailure(kind: .usage, message: "--timeout must be a number of seconds more than 0 and at most 3600, e.g. 30")
            }
            seconds = value
        }
        let clock = transports.clock(for: uri)
        let console = console
        if !uri.isSimulated { console.status("opening \(uri)…") }
        let transport: any ScaleTransport
        let close: @Sendable () async -> Void
        do { (transport, close) = try await transports.scaleTransport(for: uri, snoopPath: invocation.value("--btsnoop")) } catch {
            console.status(nil)
            throw error
        }
        let outcome = await Self.weigh(on: transport, wanted: wanted, registry: registry, clock: clock,
                                       deadline: .milliseconds(Int64(seconds * 1000)), hci: uri.description,
                                       status: { console.status($0) }, statusTicks: console.errIsTerminal, keys: bindKeys)
        console.status(nil)
        await close()
        switch outcome {
        case .success(let report):
            details?.withLock {
                $0.set("peripheral", report.address)
                $0.set("driver", report.driver)
                $0.set("weightKg", String(report.weightKg))
            }
            let pulse = report.heartRateBpm.map { ", pulse \($0) bpm" } ?? ""
            console.out(invocation.wantsJSON ? JSON.encode(report)
                        : "\(formatKilograms(report.weightKg)) kg from \(report.address) (\(report.driver))\(pulse)\n")
            if invocation.has(BindKeyArguments.save) { return try saveKey(for: report) }
            return 0
        case .failure(let failure):
            throw failure
        }
    }

    /// `--save-key`: the key that read the scale kept for its address. Only a key that did read
    /// it (its MIC verified, or there would be no weight) is kept; a scale that encrypts
    /// nothing keeps no key. A store that cannot be written ends the run with exit 3, the weight
    /// already printed (as a `--report` that cannot be written does).
    private func saveKey(for report: Report) throws(CLIFailure) -> Int32 {
        guard let address = BLEAddress(string: report.address) else { return 0 }
        guard report.encrypted, let (key, origin) = bindKeys.key(for: address) else {
            console.diagnostic("hwprobe: --save-key: \(address) does not encrypt its readings, so no key was kept for it")
            return 0
        }
        if case .stored(let path) = origin {
            console.diagnostic("hwprobe: --save-key: the key that read \(address) is the one already kept for it in \(path)")
            return 0
        }
        do {
            let path = try BindKeyStore.defaultPath(environment: console.environment)
            _ = try BindKeyStore.update(path: path) { $0.set(key, for: address) }
            console.diagnostic("hwprobe: kept the bind key for \(address) in \(path): later runs read it without --bind-key")
            return 0
        } catch {
            throw CLIFailure(kind: .device, message: "--save-key: \(error)")
        }
    }

    /// Finds the scale within `scanWindow` (or `deadline`, if shorter), then connects and waits
    /// for a stable reading until `deadline` (counted from the start) has passed. `status` hears
    /// what is being waited for; `hci` names the controller in messages.
    static func weigh(on transport: any ScaleTransport, wanted: BLEAddress?, registry: DriverRegistry,
                      clock: any Clock<Duration>, deadline: Duration, scanWindow: Duration = scanWindow,
                      hci: String = "the controller", status: @escaping @Sendable (String?) -> Void = { _ in },
                      statusTicks: Bool = true, keys: BindKeys = BindKeys()) async -> Result<Report, CLIFailure> {
        await weighOpened(on: transport, wanted: wanted, registry: registry, clock: clock, deadline: deadline, scanWindow: scanWindow,
                          hci: hci, status: status, statusTicks: statusTicks, keys: keys)
    }

    /// The clock opened, so instants can be kept and compared.
    private static func weighOpened<C: Clock<Duration>>(on transport: any ScaleTransport, wanted: BLEAddress?, registry: DriverRegistry,
                                                        clock: C, deadline: Duration, scanWindow: Duration, hci: String,
                                                        status: @escaping @Sendable (String?) -> Void,
                                                        statusTicks: Bool, keys: BindKeys) async -> Result<Report, CLIFailure> {
        let start = clock.now
        let search = Search(wanted: wanted, registry: registry, hci: hci, window: min(scanWindow, deadline), ticking: statusTicks)
        let chosen: Search.Found
        switch await search.run(on: transport, clock: clock, status: status) {
        case .success(let found): chosen = found
        case .failure(let failure): return .failure(failure)
        }
        // What is left of --timeout bounds connecting and settling.
        let remaining = deadline - start.duration(to: clock.now)
        let lastReading = Locked<Double?>(nil)
        return await withTaskGroup(of: Result<Report, CLIFailure>.self) { group in
            group.addTask { await connectAndSettle(chosen, on: transport, lastReading: lastReading, status: status, keys: keys) }
            group.addTask {
                try? await clock.sleep(for: remaining)
                let last = lastReading.value.map { " (the last reading was \(formatKilograms($0)) kg)" } ?? ""
                return .failure(CLIFailure(kind: .timedOut, message: "no stable weight within \(describe(deadline))\(last): "
                                           + "stand still on the scale, or give it longer with --timeout"))
            }
            let first = await group.next() ?? .failure(CLIFailure(kind: .timedOut, message: "no stable weight"))
            group.cancelAll()
            return first
        }
    }

    private static func connectAndSettle(_ chosen: Search.Found, on transport: any ScaleTransport, lastReading: Locked<Double?>,
                                         status: @Sendable (String?) -> Void, keys: BindKeys) async -> Result<Report, CLIFailure> {
        let device = chosen.device
        let who = "\(device.name ?? "the scale") (\(device.address))"
        let broadcasts = chosen.claim.driver is any BroadcastScaleDriver
        status(broadcasts ? "listening to \(who) for its broadcast readings…" : "connecting to \(who)…")
        let connection: any ScaleConnection
        do { connection = try await transport.connect(to: device) } catch {
            // A pairing that failed is exit 1 with its reason (hwprobe-cli.md, third edition).
            if case .notSecured = error { return .failure(CLIFailure(kind: .incomplete, message: error.description)) }
            return .failure(CLIFailure(kind: .device, message: error.description))
        }
        if !broadcasts { status("waiting for a reading from \(who)…") }
        var previous: Double?
        for await event in connection.events {
            switch event {
            case .weight(let reading):
                defer { previous = reading.kilograms }
                let stableByFlag = reading.stable == true
                let stableByRepeat = reading.stable == nil && previous.map { abs($0 - reading.kilograms) <= resolution + 1e-9 } == true
                guard stableByFlag || stableByRepeat, !reading.loadRemoved else {
                    if !reading.loadRemoved {
                        lastReading.withLock { $0 = reading.kilograms }
                        status("\(formatKilograms(reading.kilograms)) kg, settling…")
                    }
                    continue
                }
                await connection.disconnect()
                let encrypted = (chosen.claim.driver as? any BindKeyDriver)?.encryptsReadings(device.advertisement) ?? false
                return .success(Report(address: device.address.description, driver: chosen.claim.descriptor.id,
                                       weightKg: (reading.kilograms * 1000).rounded() / 1000, stable: true,
                                       heartRateBpm: reading.heartRateBpm, encrypted: encrypted))
            case .unreadable(let problem):
                await connection.disconnect()
                return .failure(unreadable(problem, from: device, keys: keys))
            case .disconnected(let reason):
                return .failure(CLIFailure(kind: .disconnected, message: "the scale disconnected before a stable reading: \(reason)"))
            default:
                continue
            }
        }
        return .failure(CLIFailure(kind: .disconnected, message: "the scale went away before a stable reading"))
    }

    /// A broadcast that carries a reading no key here reads. No key: a usage error (exit 2: the
    /// command needs `--bind-key`). A wrong key: `wrongPassword`, exit 1 (the flow ended in
    /// failure), with where the key came from when it was a kept one.
    static func unreadable(_ problem: BroadcastReadingError, from device: DiscoveredDevice, keys: BindKeys) -> CLIFailure {
        let address = device.address
        switch problem {
        case .needsKey(let words):
            return CLIFailure(kind: .usage, message: "\(address): \(words); e.g. \(BindKeyArguments.option) \(address)=HEX")
        case .wrongKey(let words):
            var message = "\(address): \(words)"
            if case .stored(let path)? = keys.key(for: address)?.origin {
                message += "; the key was the one kept for it in \(path): give the new one with \(BindKeyArguments.option) \(address)=HEX \(BindKeyArguments.save)"
            }
            return CLIFailure(kind: .wrongPassword, message: message, exitOverride: 1)
        }
    }

    /// `10 s`, `2.5 s`: how the CLI says a duration to a person.
    static func describe(_ duration: Duration) -> String {
        let seconds = duration.inSeconds
        let tenths = (seconds * 10).rounded() / 10
        return tenths == tenths.rounded() ? "\(Int(tenths)) s" : "\(tenths) s"
    }
}

extension WeighCommand {
    /// Looking for the scale: the one at `wanted`, or the first one any driver claims as a scale.
    struct Search: Sendable {
        struct Found: Sendable {
            var device: DiscoveredDevice
            var claim: Claim
        }

        var wanted: BLEAddress?
        var registry: DriverRegistry
        var hci: String
        var window: Duration
        /// Whether the countdown ticks each second (on a terminal) or is said once.
        var ticking: Bool

        /// What discovery saw that was not the scale, for the words when none turns up.
        private struct Sightings: Sendable {
            /// The wanted device, seen once without any driver claiming it.
            var unclaimed: DiscoveredDevice?
            var others: [BLEAddress: String] = [:]
        }

        func run<C: Clock<Duration>>(on transport: any ScaleTransport, clock: C,
                                     status: @escaping @Sendable (String?) -> Void) async -> Result<Found, CLIFailure> {
            let sightings = Locked(Sightings())
            let target = wanted.map(\.description) ?? "a scale"
            return await withTaskGroup(of: Result<Found, CLIFailure>?.self) { group in
                group.addTask { await discover(on: transport, sightings: sightings) }
                group.addTask {
                    guard await Countdown.run(window, on: clock, ticking: ticking, show: { status("scanning \(hci) for \(target): \($0) s left") }) else {
                        return nil
                    }
                    return .failure(sightings.withLock { notFound($0) })
                }
                // The discovery ending without an answer (a stream that stops) leaves the window to decide.
                return await group.firstAnswer(orElse: .failure(CLIFailure(kind: .device, message: "no scale found")))
            }
        }

        /// Nil when discovery ended without finding the scale or being cancelled.
        private func discover(on transport: any ScaleTransport, sightings: Locked<Sightings>) async -> Result<Found, CLIFailure>? {
            do {
                for try await device in transport.discover() {
                    let claim = registry.claim(.advertisement(device.advertisement))
                    if let wanted, device.address.bytes != wanted.bytes {
                        sightings.withLock { $0.others[device.address] = Self.describe(device, claim) }
                        continue
                    }
                    if let claim, claim.descriptor.kind == .scale { return .success(Found(device: device, claim: claim)) }
                    guard wanted != nil else {
                        sightings.withLock { $0.others[device.address] = Self.describe(device, claim) }
                        continue
                    }
                    if let claim { return .failure(notAScale(device, claimedBy: claim)) }
                    // Unclaimed: its next report carries the scan response too (discovery merges
                    // them), which may name the service a driver looks for. Judge it then.
                    let seenBefore = sightings.withLock { state -> Bool in
                        defer { state.unclaimed = device }
                        return state.unclaimed != nil
                    }
                    if seenBefore { return .failure(notAScale(device, claimedBy: nil)) }
                }
            } catch is CancellationError {
                return nil
            } catch {
                return .failure(CLIFailure(kind: .device, message: "scanning \(hci) failed: \(error)"))
            }
            return nil
        }

        private func notAScale(_ device: DiscoveredDevice, claimedBy claim: Claim?) -> CLIFailure {
            let named = device.name.map { " (\"\($0)\")" } ?? ""
            guard let claim else {
                if let likeness = ScaleResemblance.likeness(of: .advertisement(device.advertisement)) {
                    return CLIFailure(kind: .device, message: "\(device.address)\(named) " + likeness.hint)
                }
                let services = device.advertisement.allServiceUUIDs.map(\.description)
                let advertised = services.isEmpty ? "it advertises no service UUIDs" : "it advertises services \(services.joined(separator: ", "))"
                return CLIFailure(kind: .device, message: "\(device.address)\(named) is not a scale: no driver claims it as a scale "
                                  + "(\(advertised)); `hwprobe list --hci \(hci)` shows what each peripheral is")
            }
            var message = "\(device.address) is \(Self.words(claim.descriptor.kind)) (\(claim.descriptor.id)), not a scale"
            if claim.descriptor.kind == .mirror {
                message += ": weigh reads scales; run `hwprobe scan --hci \(hci) --mirror \(device.address)` for the mirror's body scan"
            } else {
                message += ": give weigh the address of a scale (`hwprobe list --hci \(hci)` shows them)"
            }
            return CLIFailure(kind: .device, message: message)
        }

        private func notFound(_ sightings: Sightings) -> CLIFailure {
            if let device = sightings.unclaimed { return notAScale(device, claimedBy: nil) }
            let within = "within \(WeighCommand.describe(window)) on \(hci)"
            let seen = sightings.others.values.sorted()
            let others = seen.isEmpty ? "" : " (seen instead: " + seen.prefix(3).joined(separator: ", ")
                + (seen.count > 3 ? " and \(seen.count - 3) more" : "") + ")"
            if let wanted {
                return CLIFailure(kind: .device, message: "\(wanted) not found: it did not advertise \(within)\(others). Is it switched "
                                  + "on (many scales wake only when stepped on) and in range? `hwprobe list --hci \(hci)` shows what is advertising")
            }
            return CLIFailure(kind: .device, message: "no scale found: none advertised \(within)\(others). Step on the scale to wake "
                              + "it and try again, or give its address")
        }

        private static func describe(_ device: DiscoveredDevice, _ claim: Claim?) -> String {
            let name = device.name ?? device.address.description
            if let claim { return "\(name) (\(claim.descriptor.id))" }
            // A scale no driver reads is worth naming as one: it may be the scale the person means.
            if let likeness = ScaleResemblance.likeness(of: .advertisement(device.advertisement)) {
                return "\(name) (a \(likeness.resemblance.family) scale, no driver here)"
            }
            return name
        }

        static func words(_ kind: DeviceKind) -> String {
            switch kind {
            case .mirror: "a body-scan mirror"
            case .scale: "a scale"
            case .hapticPad: "a haptic pad"
            }
        }
    }
}
