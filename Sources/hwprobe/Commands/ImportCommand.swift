import Capture
import Flows
import Foundation
import HAL
import LinuxIO
import Transports

/// `hwprobe import`: scan a VB1 backup's codes from a camera, decrypt it with its password, and
/// write the plaintext atomically with mode 0600. Unattended (`--password-file` or `--json`), a
/// damaged set ends with exit 5, a source that ends early with exit 1, and a camera that shows no
/// new code for `--timeout` seconds (120 by default) with exit 1.
///
/// Everything that can be checked before the camera opens is: the output path, the password
/// file (an empty one is a usage error, never sent to the key derivation), the options.
///
/// Secrets (issue 15): core dumps are off from the start; the password is bytes from the file or
/// the field to the derivation, wiped once it has run; the plaintext is the one buffer it was
/// decrypted into, written and wiped at once. A backup whose key derivation would take more than
/// `DerivationTimeEstimate.slowLimit` here is asked about at a terminal and refused unattended
/// (exit 5) unless `--allow-slow-kdf`.
struct ImportCommand: Sendable {
    var console: Console
    var bench: SimulatedBench
    var registry = DriverRegistry.linked
    var questions = ImportQuestions()
    /// For tests: the keys a person presses on each screen, instead of a terminal's.
    var person: (@Sendable (Screen) -> [Key])?
    /// `--record FILE` (the camera's frames and identity, the pad's commands) and `replay:FILE`.
    var media: MediaCassettes?
    /// The decoding pipelines this run opened (one per camera), for `-v`'s account of them.
    private let pipelines = Locked<[DecodingPipeline]>([])

    struct Report: Encodable {
        var backupId: String
        var codes: Int
        var bytes: Int
        var out: String
    }

    static let maximumAttempts = 3
    static let unattendedIdleLimit = Duration.seconds(120)

    func run(_ invocation: Invocation) async throws(CLIFailure) -> Int32 {
        guard let cameraText = invocation.value("--camera"), let out = invocation.value("--out") else {
            throw CLIFailure(kind: .usage, message: "--camera and --out are required")
        }
        let uri: DeviceURI
        uri = try DeviceURIArgument.parse(cameraText, option: "--camera")
        if case .sim = uri, invocation.value("--record") != nil {
            // The simulated camera hands the flow decoded codes, not frames: a cassette of it
            // would hold nothing (issue 27, item 11).
            throw CLIFailure(kind: .usage, message: "--record keeps a camera's frames, and the simulated camera (sim:) has none: "
                             + "record a real camera (--camera v4l2:/dev/videoN) or a video (--camera file:PATH)")
        }
        let sink = try HapticSinks(registry: registry, console: console, media: media).open(option: invocation.value("--haptics"))
        let requestedIdleLimit = try Self.idleLimit(invocation)
        let force = invocation.has("--force")
        let allowSlow = invocation.has("--allow-slow-kdf")
        try OutputTarget.check(out, replacing: force)
        // Before the first secret: no core file and no ptrace by other users from here on.
        do throws(Errno) { try ProcessSecurity.disableCoreDumps() } catch {
            console.diagnostic("hwprobe: could not turn core dumps off (\(error)); a crash could write the password to disk")
        }
        let passwordFile = invocation.value("--password-file")
        // --json is unattended (docs/cli.md): nobody is asked anything, at a terminal or not.
        // Without a password to read it is refused here, before any scanning, rather than
        // reaching a prompt that nobody is shown (the terminal still cooked: what was typed
        // would be echoed, and the run would wait for ever).
        if invocation.wantsJSON && passwordFile == nil {
            throw CLIFailure(kind: .usage, message: "import --json runs unattended and asks nothing: "
                             + "give the password with --password-file FILE (- reads its first line from standard input), "
                             + "or leave out --json to type it at the prompt")
        }
        let filePassword: SecretBytes? = if let passwordFile { try PasswordFile.read(passwordFile) } else { nil }
        // However the run ends, the password from the file does not outlive it.
        defer { filePassword?.wipe() }
        let unattended = passwordFile != nil || invocation.wantsJSON
        if !unattended && !questions.isInteractive() && person == nil {
            throw CLIFailure(kind: .usage, message: "import asks for the password: run it in a terminal, or pass --password-file")
        }
        let motion = MotionSettings(reduceMotion: invocation.has("--reduce-motion"))
        let terminal = person == nil ? TerminalSession.forProcess(console: console, wantsKeys: !unattended) : nil
        let presenter = FlowPresenter(console: console, sink: sink, noColorFlag: invocation.has("--no-color"),
                                      verbose: invocation.has("--verbose"), json: invocation.wantsJSON,
                                      interactive: !unattended, terminal: terminal, person: person,
                                      clock: uri.isSimulated ? bench.clock : ContinuousClock())
        // One way to cancel for the whole command: whichever phase runs is cancelled.
        let cancelPhase = PhaseCanceller()
        let interrupt = SignalHandling.shared.onInterrupt { cancelPhase.interrupt() }
        defer { interrupt.end() }
        presenter.start()

        // 1. The codes.
        let clock: any Clock<Duration> = uri.isSimulated ? bench.clock : ContinuousClock()
        let scan: ScanEnd
        do {
            scan = try await scanCodes(from: uri, clock: clock, motion: motion, unattended: unattended,
                                       idleLimit: requestedIdleLimit ?? (unattended ? Self.unattendedIdleLimit : nil),
                                       presenter: presenter, cancelPhase: cancelPhase, preview: !invocation.has("--no-preview"))
        } catch {
            if invocation.has("--verbose") { reportPipelines() }
            await presenter.finish()
            throw error
        }
        if invocation.has("--verbose") { reportPipelines() }
        let (container, backupID, codeCount) = scan

        // 2. What the key derivation will cost here, before it is paid.
        let estimate = DerivationTimeEstimate.cached() ?? .reference
        if unattended, !allowSlow, let parameters = (try? VB1Container(parsing: container))?.parameters, estimate.isSlow(parameters) {
            await presenter.finish()
            throw CLIFailure(kind: .unsupported, message: "this backup's key derivation (\(parameters), \(parameters.memoryBytes >> 20) MiB) would take "
                             + "\(estimate.spokenEstimate(for: parameters)) on this machine, more than \(DerivationTimeEstimate.slowLimit.components.seconds) s: "
                             + "nothing was derived; add --allow-slow-kdf to wait for it", exitOverride: 5)
        }

        // 3. The password, then the plaintext.
        let decrypt = BackupDecryptFlow(container: container, timeEstimate: estimate,
                                        slowDerivationLimit: allowSlow ? nil : DerivationTimeEstimate.slowLimit,
                                        attemptLimit: unattended ? nil : Self.maximumAttempts, clock: clock, motion: motion)
        let refusedTooOften = Locked(false)
        cancelPhase.begin { decrypt.dismiss() }
        presenter.setControls(.init(
            choose: { id in
                switch id {
                case BackupDecryptFlow.continueActionID: decrypt.confirmSlowDerivation()
                case BackupDecryptFlow.cancelActionID: decrypt.dismiss()
                default: break
                }
            },
            submitPassword: { password in decrypt.submit(password: password) },
            backLabel: { screen in screen.content == .spinner ? "back to the password" : nil },
            back: { decrypt.cancel() }))
        let decrypting = Task {
            for await output in decrypt.outputs {
                presenter.show(output)
                guard case .event(let event) = output else { continue }
                switch event {
                case .passwordWanted(let attempt):
                    if let filePassword, attempt == 1 { decrypt.submit(password: filePassword) }
                case .passwordRefused(let attempts):
                    if unattended || attempts >= Self.maximumAttempts {
                        refusedTooOften.withLock { $0 = true }
                        decrypt.dismiss()
                    }
                default:
                    break
                }
            }
        }
        let opened = await decrypt.run()
        await decrypting.value
        cancelPhase.end()
        await presenter.finish()
        switch opened {
        case .decrypted(let plaintext):
            // Written, then wiped at once: the only copy there is.
            defer { plaintext.wipe() }
            if let signal = SignalHandling.shared.interruption {
                throw CLIFailure(kind: .cancelled, message: "cancelled: nothing was written", exitOverride: SignalHandling.exitCode(for: signal))
            }
            let written = plaintext.count
            try plaintext.withUnsafeBytes { bytes throws(CLIFailure) in try OutputTarget.write(bytes, to: out, replacing: force) }
            plaintext.wipe()
            if invocation.wantsJSON {
                console.out(JSON.encode(Report(backupId: backupID, codes: codeCount, bytes: written, out: out)))
            } else {
                console.out("Wrote \(written) bytes of backup \(backupID) to \(out).\n")
            }
            return 0
        case .damaged(let why):
            throw CLIFailure(kind: .damaged, message: why)
        case .unsupported(let why):
            throw CLIFailure(kind: .unsupported, message: "unsupported backup: \(why)", exitOverride: 5)
        case .cancelled:
            if refusedTooOften.withLock({ $0 }) {
                let tries = unattended ? "" : " (\(Self.maximumAttempts) attempts)"
                throw CLIFailure(kind: .wrongPassword, message: "incorrect password\(tries): nothing was written")
            }
            throw Self.cancelled("cancelled: nothing was written")
        }
    }

    private typealias ScanEnd = (container: [UInt8], backupID: String, count: Int)

    /// Scans until a set is complete. Interactively a camera that stops is not the end: the
    /// person carries on with it or another camera, the codes so far kept.
    private func scanCodes(from uri: DeviceURI, clock: any Clock<Duration>, motion: MotionSettings, unattended: Bool,
                           idleLimit: Duration?, presenter: FlowPresenter,
                           cancelPhase: PhaseCanceller, preview: Bool) async throws(CLIFailure) -> ScanEnd {
        let source = try await codeSource(for: uri, clock: clock)
        // The camera's view beside the screen, while the codes are scanned (a terminal only).
        let previewing: Task<Void, Never>? = if preview && presenter.drawsPreview {
            Task { [pipelines] in
                await CameraPreviewLoop(presenter: presenter, clock: clock, style: presenter.previewStyle,
                                        pipeline: { pipelines.withLock { $0.last } }).run()
            }
        } else { nil }
        defer { previewing?.cancel() }
        let importer = BackupImportFlow(codes: source, clock: clock, motion: motion, unattended: unattended, idleLimit: idleLimit)
        let cameraChoice = AsyncStream.makeStream(of: String?.self)
        cancelPhase.begin { importer.cancel(); cameraChoice.continuation.yield(nil) }
        presenter.setControls(.init(choose: { id in
            if id == BackupImportFlow.startOverActionID { importer.startOver() } else { cameraChoice.continuation.yield(id) }
        }))
        // The person is asked about the camera only once everything the flow said before it
        // stopped is on the screen.
        let sourceEnds = AsyncStream.makeStream(of: Void.self)
        let drawing = Task {
            for await output in importer.outputs {
                presenter.show(output)
                if case .event(.sourceEnded) = output { sourceEnds.continuation.yield() }
            }
            sourceEnds.continuation.finish()
        }
        defer { drawing.cancel() }
        var choices = cameraChoice.stream.makeAsyncIterator()
        var ended = sourceEnds.stream.makeAsyncIterator()
        var scanned = await importer.run()
        var scannedSinceAsking = true
        while case .sourceEnded(let count, let total) = scanned, !unattended {
            // Only a scan that ran has screens still to show (a camera that failed to open has none).
            if scannedSinceAsking { guard await ended.next() != nil else { break } }
            scannedSinceAsking = false
            let cameras = [uri.description] + questions.otherCameras().filter { $0 != uri.description }
            presenter.show(.screen(Self.cameraStoppedScreen(scanned: count, of: total, cameras: cameras)))
            guard let picked = await choices.next(), let text = picked else { break }
            do throws(CLIFailure) {
                let next = try DeviceURIArgument.parse(text, option: "--camera")
                let source = try await codeSource(for: next, clock: clock, reconnected: true)
                scannedSinceAsking = true
                scanned = await importer.resume(with: source)
            } catch {
                presenter.note("hwprobe: \(error.message)")
            }
        }
        // A source that ended leaves the flow open for another camera; end it for good (that
        // also ends its outputs).
        importer.cancel()
        await drawing.value
        cancelPhase.end()
        switch scanned {
        case .completed(let bytes, let id, let count):
            return (bytes, id, count)
        case .damaged(let why):
            throw CLIFailure(kind: .damaged, message: "the backup's codes do not fit together: \(why)")
        case .sourceEnded(let count, let total):
            if SignalHandling.shared.interruption != nil { throw Self.cancelled("cancelled") }
            throw CLIFailure(kind: .incomplete, message: "the camera stopped after \(Self.scannedSoFar(count, of: total))")
        case .timedOut(let count, let total):
            let limit = idleLimit ?? .zero
            throw CLIFailure(kind: .timedOut, message: "no new backup code for \(limit.seconds) s (\(Self.scannedSoFar(count, of: total)) scanned): "
                             + "point the camera at the codes, or give more time with --timeout")
        case .cancelled:
            throw Self.cancelled("cancelled")
        }
    }

    /// Cancelled by Ctrl-C, Esc or a signal: exit 130, or 128 + the signal that ended the run.
    static func cancelled(_ message: String) -> CLIFailure {
        CLIFailure(kind: .cancelled, message: message,
                   exitOverride: SignalHandling.shared.interruption.map(SignalHandling.exitCode(for:)))
    }

    /// `2 of 4 codes`, `no code`, `1 code` (how many there are is known from the first code on).
    static func scannedSoFar(_ count: Int, of total: Int?) -> String {
        if let total { return "\(count) of \(total) codes" }
        return count == 0 ? "no code" : "\(count) code\(count == 1 ? "" : "s")"
    }

    static func scanSoFarCapitalised(_ count: Int, of total: Int?) -> String {
        let text = scannedSoFar(count, of: total)
        return text.prefix(1).uppercased() + text.dropFirst()
    }

    /// The CLI's own screen, in the flows' shape: the camera stopped; carry on with it (first,
    /// focused) or with another camera attached.
    static func cameraStoppedScreen(scanned: Int, of total: Int?, cameras: [String]) -> Screen {
        Screen(icon: "video.slash", title: "The camera stopped",
               subtitle: scanned == 0 ? "No backup code was scanned. Reconnect the camera and carry on, or pick another."
                   : "\(scanSoFarCapitalised(scanned, of: total)) scanned; they are kept. Reconnect the camera and carry on, or pick another.",
               content: .pickList(cameras.enumerated().map { index, camera in
                   PickItem(id: camera, title: index == 0 ? "Carry on with \(camera)" : "Switch to \(camera)")
               }))
    }

    /// The codes `uri` shows; `reconnected` when the person carries on after a camera stopped.
    private func codeSource(for uri: DeviceURI, clock: any Clock<Duration>, reconnected: Bool = false) async throws(CLIFailure) -> any CodeSource {
        switch uri {
        case .sim:
            return try bench.configured(for: uri).backupCodes(reconnected: reconnected)
        case .file, .v4l2, .replay:
            let decoder = try Self.decoder()
            do {
                let format = ProcessInfo.processInfo.environment["HWPROBE_V4L2_FORMAT"].flatMap { $0.isEmpty ? nil : $0 }
                let opened = if case .replay(let path) = uri { try Self.replayCamera(path, clock: clock) }
                    else { try await CameraSources.open(uri, clock: clock, v4l2Format: format) }
                let camera = try media?.recording(camera: opened) ?? opened
                let pipeline = DecodingPipeline(camera: camera, decoder: decoder)
                pipelines.withLock { $0.append(pipeline) }
                return pipeline
            } catch let error as CameraError {
                throw CLIFailure(kind: .device, message: error.description)
            } catch let error as CLIFailure {
                throw error
            } catch {
                throw CLIFailure(kind: .device, message: "\(error)")
            }
        default:
            throw CLIFailure(kind: .usage, message: "\(uri) is not a camera (use v4l2:/dev/videoN, file:PATH, sim: or replay:FILE)")
        }
    }

    /// `--camera replay:FILE`: the cassette's (first) camera, its frames at their recorded times
    /// on the bench's clock.
    static func replayCamera(_ path: String, clock: any Clock<Duration>) throws -> any CameraSource {
        let cassette: Cassette
        do { cassette = try CassetteReader.readAll(path: path) } catch { throw CLIFailure(kind: .device, message: error.described(as: "replay:\(path)")) }
        guard let camera = cassette.cameras.first else {
            throw CLIFailure(kind: .device, message: "replay:\(path) recorded no camera: record one with `hwprobe import --camera URI … --record FILE`")
        }
        return try CassetteCameraSource(camera, directory: PrivateFile.directoryPath(of: path), clock: clock)
    }

    /// `-v`: what each camera's decoding cost, for someone judging a camera or a decoder:
    /// `camera file:codes.y4m (zxing+zbar): 306 frames decoded, 41 with codes, 12 skipped; decode latency p50 4.5 ms, p99 7.0 ms,
    /// max 9.4 ms; 14 second-lane runs, the slowest done 38.1 ms after its frame; looked at 40 whole, 12 in part, 254 unchanged`
    /// (zbar's turns run in a lane of their own; the change gate says how many frames showed something new).
    private func reportPipelines() {
        for pipeline in pipelines.withLock({ $0 }) {
            let looks = (pipeline.decoder as? ZXingThenZBarDecoder)?.gate?.counts
            console.diagnostic(Self.describe(pipeline.stats, of: pipeline.description, looks: looks))
        }
    }

    static func describe(_ stats: DecodingPipeline.Stats, of name: String, looks: ChangeGate.Counts? = nil) -> String {
        func ms(_ duration: Duration?) -> String {
            guard let duration else { return "–" }
            let (seconds, attoseconds) = duration.components
            return String(format: "%.1f ms", Double(seconds) * 1000 + Double(attoseconds) / 1e15)
        }
        var line = "camera \(name): \(stats.framesDecoded) frames decoded, \(stats.framesWithSymbols) with codes, "
            + "\(stats.framesSkipped) skipped"
        if stats.framesDecoded > 0 {
            line += "; decode latency p50 \(ms(stats.latencyPercentile(0.5))), p99 \(ms(stats.latencyPercentile(0.99))), "
                + "max \(ms(stats.maximumLatency))"
        }
        if stats.secondRuns > 0 {
            line += "; \(stats.secondRuns) second-lane runs, the slowest done \(ms(stats.secondMaximumLatency)) after its frame"
        }
        if let looks {
            line += "; looked at \(looks.whole) whole, \(looks.cropped) in part, \(looks.skipped) unchanged"
        }
        return line
    }

    /// How long the scan waits for the next new code, from `--timeout S`. Without it an
    /// unattended run waits 120 s and an interactive one has no limit (a person can press Ctrl-C).
    static func idleLimit(_ invocation: Invocation) throws(CLIFailure) -> Duration? {
        guard let text = invocation.value("--timeout") else { return nil }
        guard let value = Double(text), value > 0, value <= 86_400 else {
            throw CLIFailure(kind: .usage, message: "--timeout must be a number of seconds more than 0 and at most 86400, e.g. 120")
        }
        return .milliseconds(Int64(value * 1000))
    }

    /// The QR decoder for camera frames: `HWPROBE_DECODER` names one of `CodeDecoders.names`
    /// (`zxing+zbar` unless set), so a decoder can be tried against a real camera without a rebuild.
    static func decoder(environment: [String: String] = ProcessInfo.processInfo.environment) throws(CLIFailure) -> any CodeDecoder {
        let name = environment["HWPROBE_DECODER"] ?? CodeDecoders.defaultName
        do { return try CodeDecoders.decoder(named: name) } catch {
            throw CLIFailure(kind: .usage, message: "HWPROBE_DECODER: \(error.description)")
        }
    }
}

/// What `import` needs to know about the person's surroundings, from the machine unless a test
/// answers instead.
struct ImportQuestions: Sendable {
    /// Whether a person is at the keyboard (stdin is a terminal).
    var isInteractive: @Sendable () -> Bool = { FileDescriptor.standardInput.isTerminal }
    /// Cameras a person can switch to when the camera stops: the V4L2 cameras attached.
    var otherCameras: @Sendable () -> [String] = { ((try? V4L2Probe().probe())?.cameras ?? []).map(\.uri) }
}
