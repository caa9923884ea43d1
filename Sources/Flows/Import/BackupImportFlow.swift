import HAL
import Synchronization

/// Scans the QR codes of a VB1 backup (docs/flows.md §1): turns each decoded symbol into a screen
/// update, a haptic cue and, where it matters, words for a screen reader.
///
/// All state lives behind one lock, and every change publishes its output while holding it, so
/// the buttons (`startOver()`, `cancel()`) and the camera can never interleave screens out of
/// order. A screen identical to the last one is never published again: a camera reports the same
/// code many times a second, and a duplicate must stay silent.
package final class BackupImportFlow: Sendable {
    /// The navigation title, shared with the rest of the import sheet.
    package static let navigationTitle = "Scan Backup"
    /// The `ScreenAction.id` of the button that throws a damaged set away.
    package static let startOverActionID = "startOver"

    /// Screens, cues and announcements in order. Buffered without limit so a slow reader (or a
    /// test reading after the fact) sees every one. Finishes when the scan ends for good.
    package let outputs: AsyncStream<FlowOutput>

    private let output: AsyncStream<FlowOutput>.Continuation
    private let initialSource: any CodeSource
    /// The idle limit runs on this clock, so tests move time by hand.
    private let clock: any Clock<Duration>
    let motion: MotionSettings
    private let unattended: Bool
    private let idleLimit: Duration?
    private let state = Mutex(State())

    private enum Phase: Sendable {
        case scanning
        /// The set contradicts itself; scanning pauses until the person starts over.
        case waitingForStartOver
    }

    private struct State: Sendable {
        var collector = VB1CodeCollector()
        var phase = Phase.scanning
        var outcome: ImportOutcome?
        var lastScreen: Screen?
        /// The scan now reading a source, and how to wake it for a button press.
        var scan: (id: Int, wake: AsyncStream<ScanEvent>.Continuation)?
        var scanCount = 0
        /// The idle timer now running; a newer one (or none) makes an older one's firing moot.
        var idleTimer: (generation: Int, task: Task<Void, Never>)?
        var idleGeneration = 0
    }

    private enum ScanEvent: Sendable {
        case frame(DecodedFrame)
        case sourceEnded((any Error)?)
        case cancelled
        /// A newer `resume(with:)` took over.
        case superseded
        case idle(generation: Int)
    }

    /// - Parameters:
    ///   - codes: where decoded symbols come from (a camera, a file, a fake).
    ///   - clock: the time source; tests pass a `ManualClock`.
    ///   - motion: the motion preferences in effect (Reduce Motion turns every hint into a crossfade).
    ///   - unattended: nobody is there to press Start Over, so a damaged set ends the run.
    ///   - idleLimit: when set, a source that shows no new code for this long ends the scan as
    ///     `.timedOut` (a live camera pointed at nothing must not hold an unattended run for ever).
    ///     The limit counts only while a source is being read, and starts again with each new code.
    package init(codes: any CodeSource, clock: some Clock<Duration>, motion: MotionSettings = .standard,
                unattended: Bool = false, idleLimit: Duration? = nil) {
        (outputs, output) = AsyncStream.makeStream(of: FlowOutput.self, bufferingPolicy: .unbounded)
        initialSource = codes
        self.clock = clock
        self.motion = motion
        self.unattended = unattended
        self.idleLimit = idleLimit
    }

    // MARK: Inputs

    /// Scans the source given at creation until a set completes, the source ends, or the scan is
    /// cancelled. Calling it again after it ended returns the same outcome.
    public func run() async -> ImportOutcome {
        await scan(initialSource)
    }

    /// Carries on with another source (a reconnected camera) after `.sourceEnded`, keeping every
    /// code already scanned. Only one source is read at a time: a scan still running is ended.
    package func resume(with source: any CodeSource) async -> ImportOutcome {
        await scan(source)
    }

    /// Forgets every code scanned so far and shows the first screen again: the way out of a
    /// damaged set. Ignored once the scan has ended.
    package func startOver() {
        state.withLock { s in
            guard s.outcome == nil else { return }
            s.collector.reset()
            s.phase = .scanning
            if s.scan != nil { armIdleTimer(in: &s) }
            publish(introScreen(motion: motion.apply(.crossfade)), in: &s)
        }
    }

    /// Ends the scan as `.cancelled`, now or as soon as it starts.
    public func cancel() {
        state.withLock { s in
            finish(.cancelled, in: &s)
        }
    }

    /// Codes of the backup shown that have been scanned, and how many it has.
    package var progress: (scanned: Int, of: Int?) {
        state.withLock { s in (s.collector.scannedIndexes.count, s.collector.currentCount) }
    }

    // MARK: Scanning

    private func scan(_ source: any CodeSource) async -> ImportOutcome {
        let (events, wake) = AsyncStream.makeStream(of: ScanEvent.self, bufferingPolicy: .unbounded)
        let scanID: Int? = state.withLock { s in
            guard s.outcome == nil else { return nil }
            s.scan?.wake.yield(.superseded)
            s.scanCount += 1
            s.scan = (s.scanCount, wake)
            armIdleTimer(in: &s)
            // The first screen, or the progress again after a "camera gone" screen.
            if case .waitingForStartOver = s.phase {
                publish(damagedScreen(), in: &s)
            } else {
                publish(progressScreen(for: s.collector, motion: s.lastScreen == nil ? nil : motion.apply(.crossfade)),
                        in: &s)
            }
            return s.scanCount
        }
        guard let scanID else { return currentOutcome() }

        // The source is read by its own task so a button press can end the scan between frames.
        let pump = Task {
            do {
                for try await frame in source.codes() {
                    wake.yield(.frame(frame))
                }
                wake.yield(.sourceEnded(nil))
            } catch {
                wake.yield(.sourceEnded(error))
            }
        }
        defer {
            pump.cancel()
            wake.finish()
            state.withLock { s in
                if s.scan?.id == scanID {
                    s.scan = nil
                    disarmIdleTimer(in: &s)
                }
            }
        }

        return await withTaskCancellationHandler {
            for await event in events {
                if let outcome = handle(event) { return outcome }
            }
            return currentOutcome()
        } onCancel: {
            cancel()
        }
    }

    private func currentOutcome() -> ImportOutcome {
        state.withLock { s in
            s.outcome ?? .sourceEnded(scanned: s.collector.scannedIndexes.count, of: s.collector.currentCount)
        }
    }

    /// One event from the source or a button. Returns the outcome when this scan is over.
    private func handle(_ event: ScanEvent) -> ImportOutcome? {
        state.withLock { s in
            if let outcome = s.outcome { return outcome }
            switch event {
            case .frame(let frame):
                for symbol in frame.symbols {
                    if let outcome = take(symbol, in: &s) { return outcome }
                }
                return nil
            case .sourceEnded(let error):
                publish(cameraGoneScreen(for: s.collector, error: error), in: &s)
                output.yield(.announcement(Announcement(
                    "Camera disconnected. The codes you scanned are kept.", priority: .assertive)))
                output.yield(.event(.sourceEnded(scanned: s.collector.scannedIndexes.count, of: s.collector.currentCount)))
                return .sourceEnded(scanned: s.collector.scannedIndexes.count, of: s.collector.currentCount)
            case .cancelled:
                return .cancelled
            case .superseded:
                return .sourceEnded(scanned: s.collector.scannedIndexes.count, of: s.collector.currentCount)
            case .idle(let generation):
                guard s.idleTimer?.generation == generation else { return nil }
                let scanned = s.collector.scannedIndexes.count, total = s.collector.currentCount
                output.yield(.event(.idleDeadlinePassed(scanned: scanned, of: total)))
                let outcome = ImportOutcome.timedOut(scanned: scanned, of: total)
                finish(outcome, in: &s)
                return outcome
            }
        }
    }

    /// Feeds one symbol to the collector and publishes what that means.
    private func take(_ symbol: DecodedSymbol, in s: inout State) -> ImportOutcome? {
        if case .waitingForStartOver = s.phase { return nil }
        // The text goes in exactly as decoded: spaces and colons are Base45 digits.
        guard let text = symbol.text else {
            showMessage(Self.notABackupMessage, in: &s)
            return nil
        }
        switch s.collector.accept(text) {
        case .accepted:
            armIdleTimer(in: &s)
            publish(progressScreen(for: s.collector, motion: motion.apply(.bounce)), in: &s)
            output.yield(.cue(.lightImpact))
            return nil
        case .duplicate:
            return nil
        case .completed(let container):
            let count = s.collector.currentCount ?? 0
            publish(progressScreen(for: s.collector, motion: motion.apply(.bounce)), in: &s)
            output.yield(.cue(.success))
            output.yield(.announcement(Announcement("All \(count) codes scanned.")))
            let outcome = ImportOutcome.completed(
                container: container, backupID: s.collector.currentID ?? "", codeCount: count)
            finish(outcome, in: &s)
            return outcome
        case .notABackupCode:
            showMessage(Self.notABackupMessage, in: &s)
            return nil
        case .otherBackup:
            showMessage(Self.otherBackupMessage, in: &s)
            return nil
        case .damaged(let reason):
            output.yield(.cue(.warning))
            if unattended {
                publish(progressScreen(for: s.collector, footer: Footer(Self.damagedMessage, tone: .error)), in: &s)
                output.yield(.event(.setDamaged(reason: reason)))
                let outcome = ImportOutcome.damaged(reason)
                finish(outcome, in: &s)
                return outcome
            }
            s.phase = .waitingForStartOver
            publish(damagedScreen(), in: &s)
            output.yield(.announcement(Announcement(Self.damagedMessage, priority: .assertive)))
            output.yield(.event(.setDamaged(reason: reason)))
            return nil
        }
    }

    /// A footer note over the unchanged content: the count stays exactly as it was.
    private func showMessage(_ text: String, in s: inout State) {
        let screen = progressScreen(for: s.collector, footer: Footer(text, tone: .warning))
        guard screen != s.lastScreen else { return }
        publish(screen, in: &s)
        output.yield(.announcement(Announcement(text)))
    }

    // MARK: The idle limit

    /// (Re)starts the idle limit, if there is one: at the start of each scan and with each new code.
    private func armIdleTimer(in s: inout State) {
        disarmIdleTimer(in: &s)
        guard let idleLimit, s.outcome == nil else { return }
        s.idleGeneration += 1
        let generation = s.idleGeneration
        let task = Self.timer(on: clock, after: idleLimit) { [weak self] in self?.idleTimerFired(generation: generation) }
        s.idleTimer = (generation, task)
        output.yield(.event(.waiting(for: s.collector.currentCount == nil ? "a backup code" : "the next code", limit: idleLimit)))
    }

    /// Fires `action` once `delay` has passed since now — the deadline is fixed here, not when the
    /// task first runs, so the limit counts from the code that armed it.
    private static func timer<C: Clock>(on clock: C, after delay: Duration,
                                        _ action: @escaping @Sendable () -> Void) -> Task<Void, Never> where C.Duration == Duration {
        let deadline = clock.now.advanced(by: delay)
        return Task {
            guard (try? await clock.sleep(until: deadline, tolerance: nil)) != nil else { return }
            action()
        }
    }

    private func disarmIdleTimer(in s: inout State) {
        s.idleTimer?.task.cancel()
        s.idleTimer = nil
    }

    private func idleTimerFired(generation: Int) {
        state.withLock { s in
            guard s.idleTimer?.generation == generation else { return }
            s.scan?.wake.yield(.idle(generation: generation))
        }
    }

    private func finish(_ outcome: ImportOutcome, in s: inout State) {
        guard s.outcome == nil else { return }
        disarmIdleTimer(in: &s)
        s.outcome = outcome
        s.scan?.wake.yield(.cancelled)
        output.finish()
    }

    private func publish(_ screen: Screen, in s: inout State) {
        guard screen != s.lastScreen else { return }
        s.lastScreen = screen
        output.yield(.screen(screen))
    }
}
