import Capture
import Flows
import Foundation
import HAL

/// `hwprobe import`: scan a VB1 backup's codes from a camera, decrypt it with its password, and
/// write the plaintext atomically with mode 0600. Unattended (`--password-file` or `--json`), a
/// damaged set ends with exit 5 and a source that ends early with exit 1.
struct ImportCommand: Sendable {
    var console: Console
    var bench: SimulatedBench
    var registry = DriverRegistry(drivers: linkedDrivers)
    var questions = ImportQuestions()

    struct Report: Encodable {
        var backupId: String
        var codes: Int
        var bytes: Int
        var out: String
    }

    static let wrongPasswordMarker = "Incorrect password"
    static let maximumAttempts = 3

    func run(_ invocation: Invocation) async throws(CLIFailure) -> Int32 {
        guard let cameraText = invocation.value("--camera"), let out = invocation.value("--out") else {
            throw CLIFailure(kind: .usage, message: "--camera and --out are required")
        }
        let uri: DeviceURI
        uri = try DeviceURIArgument.parse(cameraText, option: "--camera")
        let sink = try HapticSinks(registry: registry, console: console).open(option: invocation.value("--haptics"))
        let requestedIdleLimit = try Self.idleLimit(invocation)
        let force = invocation.has("--force")
        if FileManager.default.fileExists(atPath: out) && !force {
            throw CLIFailure(kind: .usage, message: "\(out) exists: choose another --out, or add --force to replace it on success")
        }
        let passwordFile = invocation.value("--password-file")
        var filePassword: String?
        if let passwordFile {
            filePassword = try Self.readPassword(from: passwordFile)
        }
        let unattended = passwordFile != nil || invocation.wantsJSON
        if !unattended && !questions.isInteractive() {
            throw CLIFailure(kind: .usage, message: "import asks for the password: run it in a terminal, or pass --password-file")
        }
        let motion = MotionSettings(reduceMotion: invocation.has("--reduce-motion"))
        let presenter = FlowPresenter(console: console, sink: sink, noColorFlag: invocation.has("--no-color"),
                                      verbose: invocation.has("--verbose"), json: invocation.wantsJSON)

        // 1. The codes.
        let clock: any Clock<Duration> = uri == .sim ? bench.clock : ContinuousClock()
        let source = try await codeSource(for: uri, clock: clock)
        let importer = BackupImportFlow(codes: source, clock: clock, motion: motion, unattended: unattended)
        let drawing = Task { await presenter.present(importer.outputs) }
        let interrupt = CancelOnInterrupt { importer.cancel() }
        // Unattended, a live camera that never shows the next code must not hold the run forever.
        let idleLimit = requestedIdleLimit ?? (unattended ? .seconds(120) : nil)
        let idle = Locked(false)
        let watchdog = Task {
            guard let idleLimit else { return }
            let step = Duration.milliseconds(100)
            var last = importer.progress.scanned
            var quiet = Duration.zero
            while !Task.isCancelled {
                do { try await clock.sleep(for: step) } catch { return }
                let now = importer.progress.scanned
                quiet = now == last ? quiet + step : .zero
                last = now
                if quiet >= idleLimit {
                    idle.withLock { $0 = true }
                    importer.cancel()
                    return
                }
            }
        }
        defer { watchdog.cancel() }
        var scanned = await importer.run()
        // Interactively, a camera that stops early (unplugged, or a file that ran out) is not the
        // end: the codes so far are kept and the scan carries on from another source.
        while case .sourceEnded(let count, let total) = scanned, !unattended {
            presenter.note("The camera stopped after \(count) of \(total.map(String.init) ?? "?") codes; they are kept.")
            guard let answer = questions.nextCamera("Reconnect it and press Enter to carry on, give another camera URI, or type q to stop: "),
                  answer.trimmingCharacters(in: .whitespaces) != "q" else { break }
            let text = answer.trimmingCharacters(in: .whitespaces)
            do {
                let next = text.isEmpty ? uri : try DeviceURI(parsing: text)
                scanned = await importer.resume(with: try await codeSource(for: next, clock: clock))
            } catch let error as CLIFailure {
                presenter.note("hwprobe: \(error.message)")
            } catch {
                presenter.note("hwprobe: \(error)")
            }
        }
        interrupt.stop()
        // A source that ended leaves the flow open for another camera; this command has no other,
        // so end the flow for good (that also ends its outputs).
        if case .sourceEnded = scanned { importer.cancel() }
        await drawing.value
        let container: [UInt8]
        let backupID: String
        let codeCount: Int
        switch scanned {
        case .completed(let bytes, let id, let count):
            (container, backupID, codeCount) = (bytes, id, count)
        case .damaged(let why):
            await presenter.finish()
            throw CLIFailure(kind: .damaged, message: "the backup's codes do not fit together: \(why)")
        case .sourceEnded(let scanned, let total):
            await presenter.finish()
            throw CLIFailure(kind: .incomplete, message: "the camera stopped after \(scanned) of \(total.map(String.init) ?? "?") codes")
        case .cancelled:
            await presenter.finish()
            if idle.withLock({ $0 }), let idleLimit {
                let (count, total) = importer.progress
                throw CLIFailure(kind: .timedOut, message: "no new backup code for \(idleLimit.seconds) s (\(count) of \(total.map(String.init) ?? "?") scanned): "
                                 + "point the camera at the codes, or give more time with --timeout")
            }
            throw CLIFailure(kind: .cancelled, message: "cancelled")
        }

        // 2. The password.
        let decrypt = BackupDecryptFlow(container: container, timeEstimate: DerivationTimeEstimate.cached(), clock: clock, motion: motion)
        let attempts = Locked(0)
        let wrong = Locked(false)
        let decrypting = Task {
            for await output in decrypt.outputs {
                presenter.show(output)
                guard case .screen(let screen) = output, case .passwordField(let field) = screen.content else { continue }
                let refused = screen.footer?.text == Self.wrongPasswordMarker
                guard field.status != .disabled, field.maskedLength == 0 || refused else { continue }
                let attempt = attempts.withLock { count -> Int in
                    count += 1
                    return count
                }
                if refused && (unattended || attempt > Self.maximumAttempts) {
                    wrong.withLock { $0 = true }
                    decrypt.dismiss()
                    continue
                }
                if let filePassword {
                    decrypt.submit(password: filePassword)
                } else if let typed = questions.password("Backup password: ") {
                    decrypt.submit(password: typed)
                } else {
                    decrypt.dismiss()
                }
            }
        }
        let interruptDecrypt = CancelOnInterrupt { decrypt.dismiss() }
        let opened = await decrypt.run()
        interruptDecrypt.stop()
        await decrypting.value
        await presenter.finish()
        switch opened {
        case .decrypted(let plaintext):
            do { try AtomicFile.write(plaintext, to: out, replacing: force) } catch {
                throw CLIFailure(kind: .device, message: "could not write \(out): \(error)")
            }
            if invocation.wantsJSON {
                console.out(JSON.encode(Report(backupId: backupID, codes: codeCount, bytes: plaintext.count, out: out)))
            } else {
                console.out("Wrote \(plaintext.count) bytes of backup \(backupID) to \(out).\n")
            }
            return 0
        case .damaged(let why):
            throw CLIFailure(kind: .damaged, message: why)
        case .unsupported(let why):
            throw CLIFailure(kind: .unsupported, message: "unsupported backup: \(why)", exitOverride: 5)
        case .cancelled:
            if wrong.withLock({ $0 }) { throw CLIFailure(kind: .wrongPassword, message: "incorrect password: nothing was written") }
            throw CLIFailure(kind: .cancelled, message: "cancelled: nothing was written")
        }
    }

    private func codeSource(for uri: DeviceURI, clock: any Clock<Duration>) async throws(CLIFailure) -> any CodeSource {
        switch uri {
        case .sim:
            return bench.backupCodes
        case .file, .v4l2:
            let decoder = try Self.decoder()
            do {
                let camera = try await CameraSources.open(uri, clock: clock)
                return DecodingPipeline(camera: camera, decoder: decoder)
            } catch {
                throw CLIFailure(kind: .device, message: error.description)
            }
        default:
            throw CLIFailure(kind: .usage, message: "\(uri) is not a camera (use v4l2:/dev/videoN, file:PATH or sim:)")
        }
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

    /// The file's text; exactly one trailing newline is not part of the password.
    static func readPassword(from path: String) throws(CLIFailure) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIFailure(kind: .usage, message: "cannot read the password file \(path)")
        }
        var text = String(decoding: data, as: UTF8.self)
        if text.hasSuffix("\r\n") { text.removeLast(2) } else if text.hasSuffix("\n") { text.removeLast() }
        return text
    }
}

/// What `import` asks a person, from the terminal unless a test answers instead.
struct ImportQuestions: Sendable {
    var isInteractive: @Sendable () -> Bool = { isatty(STDIN_FILENO) == 1 }
    /// The password, typed without echo; nil when input ended.
    var password: @Sendable (String) -> String? = { PasswordPrompt.read($0) }
    /// After the camera stopped early: a camera URI to carry on with (empty: the same one
    /// again), "q" or nil to stop.
    var nextCamera: @Sendable (String) -> String? = { prompt in
        FileHandle.standardError.write(Data(prompt.utf8))
        return readLine(strippingNewline: true)
    }
}

/// Asks for a password on the terminal without echoing it.
enum PasswordPrompt {
    static func read(_ prompt: String) -> String? {
        FileHandle.standardError.write(Data(prompt.utf8))
        var saved = termios()
        let isTerminal = tcgetattr(STDIN_FILENO, &saved) == 0
        if isTerminal {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet)
        }
        defer {
            if isTerminal { tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved) }
            FileHandle.standardError.write(Data("\n".utf8))
        }
        return readLine(strippingNewline: true)
    }
}

/// Writes a file so that it either appears whole, with mode 0600, or not at all.
enum AtomicFile {
    struct Failure: Error, CustomStringConvertible { var description: String }

    static func write(_ bytes: [UInt8], to path: String, replacing: Bool) throws {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = (directory.isEmpty ? "." : directory) + "/.\((path as NSString).lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: String(cString: strerror(errno))) }
        var ok = false
        defer {
            close(fd)
            if !ok { unlink(temporary) }
        }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in raw.baseAddress.map { Glibc.write(fd, $0 + offset, raw.count - offset) } ?? 0 }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: String(cString: strerror(errno)))
            }
            offset += n
        }
        guard fsync(fd) == 0 else { throw Failure(description: String(cString: strerror(errno))) }
        if !replacing && FileManager.default.fileExists(atPath: path) {
            throw Failure(description: "\(path) appeared meanwhile; nothing was replaced")
        }
        guard rename(temporary, path) == 0 else { throw Failure(description: String(cString: strerror(errno))) }
        ok = true
    }
}
