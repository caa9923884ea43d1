import Flows
import Foundation
import HAL
import Transports

/// `hwprobe demo`: the simulated bench, start to finish and unattended — the body scan against
/// the bench's mirror (through our host stack and the virtual controller, as `scan --hci sim:`),
/// then a freshly made VB1 backup imported from the fake camera and decrypted — drawn live, with
/// every cue shown as the `log:` sink words it.
struct DemoCommand: Sendable {
    var console: Console
    var registry: DriverRegistry
    var speed: Double

    /// The demo's backup password, shown on screen: it is a demonstration, not a secret.
    static let password = "correct horse battery staple"
    static let wrongPassword = "correct horse battery stapel"

    func run(_ invocation: Invocation) async throws(CLIFailure) -> Int32 {
        let bench = SimulatedBench(clock: ScaledClock(speed: speed))
        let central: BLECentral
        do { central = try await bench.central(snoopPath: invocation.value("--btsnoop")) } catch { throw CLIFailure(error) }
        let transport = BLEScaleTransport(central: central, registry: registry, clock: bench.clock)
        do {
            let code = try await run(invocation, bench: bench, transport: transport)
            await central.close()
            return code
        } catch {
            await central.close()
            throw error
        }
    }

    private func run(_ invocation: Invocation, bench: SimulatedBench, transport: any ScaleTransport) async throws(CLIFailure) -> Int32 {
        let motion = MotionSettings(reduceMotion: invocation.has("--reduce-motion"))
        let presenter = FlowPresenter(console: console, sink: nil, noColorFlag: invocation.has("--no-color"),
                                      verbose: invocation.has("--verbose"), json: false, logCues: true,
                                      terminal: TerminalSession.forProcess(console: console, wantsKeys: false), clock: bench.clock)
        // Ctrl-C ends whichever flow is running; the demo then stops with exit 130.
        let cancelPhase = PhaseCanceller()
        let interrupt = SignalHandling.shared.onInterrupt { cancelPhase.interrupt() }
        defer { interrupt.end() }
        presenter.start()
        presenter.note("hwprobe demo: the simulated bench (sim:), \(formatSpeed(speed)) real time")
        let devices = (try? await Discovery.collect(transport.discover(), for: .seconds(1), clock: bench.clock)) ?? []
        for device in devices {
            let claim = registry.claim(.advertisement(device.advertisement))
            presenter.note("  \(device.address)  \(device.name ?? "(no name)")  \(device.rssi) dBm  → \(claim?.reason ?? "no driver")")
        }

        // 1. The body scan, with the engine `hwprobe scan` runs.
        presenter.note("\n1. Body scan against the simulated mirror")
        var configuration = BodyScanConfiguration(recognizingMirrorsWith: registry)
        configuration.autoAnswer = true
        configuration.motion = motion
        let scan = BodyScanFlow(transport: transport, clock: bench.clock, configuration: configuration)
        cancelPhase.begin { scan.cancel() }
        let scanOutcome = await present(scan.outputs, with: presenter) { await scan.run() } after: { scan.close() }
        if SignalHandling.shared.interruption != nil {
            await presenter.finish()
            throw ImportCommand.cancelled("cancelled")
        }
        guard scanOutcome.kind == .complete else {
            presenter.note("The body scan ended \(scanOutcome.kind.rawValue): \(scanOutcome.failure?.description ?? "")")
            await presenter.finish()
            return 1
        }

        // 2. The bench camera shows a backup made with the demo's password: its codes out of order,
        //    with a repeat and a stray code.
        presenter.note("\n2. Importing a VB1 backup from the simulated camera (password: \(Self.password))")
        let plaintext = Array(Self.sampleVault.utf8)
        let camera = bench.backupCodes
        let importer = BackupImportFlow(codes: camera, clock: bench.clock, motion: motion, unattended: true)
        cancelPhase.begin { importer.cancel() }
        let imported = await present(importer.outputs, with: presenter) { await importer.run() } after: {}
        if case .cancelled = imported {
            await presenter.finish()
            throw ImportCommand.cancelled("cancelled")
        }
        guard case .completed(let bytes, let backupID, let count) = imported else {
            presenter.note("The import ended early: \(imported)")
            await presenter.finish()
            return 1
        }
        presenter.note("Backup \(backupID): all \(count) codes scanned.")

        // 3. Decrypting: a typo first, then the right password.
        presenter.note("\n3. Decrypting (first with a typo: \(Self.wrongPassword))")
        let decrypt = BackupDecryptFlow(container: bytes, timeEstimate: DerivationTimeEstimate.cached(), clock: bench.clock, motion: motion)
        cancelPhase.begin { decrypt.dismiss() }
        let outcome = await present(decrypt.outputs, with: presenter, watch: { output in
            switch output {
            case .event(.passwordWanted(attempt: 1)): decrypt.submit(password: Self.wrongPassword)
            case .event(.passwordWanted(attempt: 2)): decrypt.submit(password: Self.password)
            default: break
            }
        }) { await decrypt.run() } after: {}
        if case .cancelled = outcome {
            await presenter.finish()
            throw ImportCommand.cancelled("cancelled")
        }
        guard case .decrypted(let opened) = outcome, opened == SecretBytes(copying: plaintext) else {
            presenter.note("Decryption ended: \(outcome)")
            await presenter.finish()
            return 1
        }
        presenter.note("Decrypted \(opened.count) bytes; they match what was exported.\nDemo complete.")
        opened.wipe()
        await presenter.finish()
        return 0
    }

    /// Runs a flow while its outputs are drawn, and waits until the last one is on screen.
    private func present<T: Sendable>(_ outputs: AsyncStream<FlowOutput>, with presenter: FlowPresenter,
                                      watch: @escaping @Sendable (FlowOutput) -> Void = { _ in },
                                      _ body: () async -> T, after: () -> Void) async -> T {
        let drawing = Task {
            for await output in outputs {
                presenter.show(output)
                watch(output)
            }
        }
        let result = await body()
        after()
        // Every flow ends its stream once it is done, so this returns after the last screen is drawn.
        await drawing.value
        return result
    }

    static let sampleVault = #"{"items":[{"issuer":"Example","account":"alice@example.com","secret":"JBSWY3DPEHPK3PXP","digits":6,"period":30},{"issuer":"Bench","account":"lab@example.org","secret":"KRSXG5CTMVRXEZLU","digits":6,"period":30}]}"#
}

private func formatSpeed(_ speed: Double) -> String {
    speed == 1 ? "in" : (speed.rounded() == speed ? "\(Int(speed))× faster than" : "\(speed)× faster than")
}
