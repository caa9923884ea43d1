import Flows
import HAL
import LinuxIO
import Synchronization

/// Shows what flows publish and, at a terminal, takes the person's keys.
///
/// Screens go to one of two displays (``FlowDisplay``): on a terminal, the whole alternate screen
/// is painted (the frame, a log area for lines of the CLI's own and diagnostics, the key hints);
/// anywhere else one plain line per change (stderr under `--json`, so stdout keeps its one object).
/// Cues play on a haptic sink in order without holding up the screens; announcements are spoken on
/// stderr with `-v`. When the terminal is given back, the log lines and the last screen are printed
/// once, so what happened stays in the person's scrollback.
///
/// Keys (docs/cli.md, "Interactive use") are decided by ``FlowKeys`` and carried out here: the
/// focus moves, the command's controls are called, and a focused password field takes the typed
/// characters into a ``PasswordEntry`` (one fixed secret buffer, handed over as a copy on Enter
/// and wiped at once, never drawn). Cues go to a ``CuePlayer``; the status line's countdown comes
/// from a ``CountdownTicker``; the camera preview's room is a ``PreviewSlot``.
final class FlowPresenter: Sendable, DiagnosticSink {
    private let console: Console
    private let cues: CuePlayer
    private let verbose: Bool
    private let logCues: Bool
    /// Someone is there to press keys: actions are drawn with a focus and key hints.
    let interactive: Bool
    private let terminal: TerminalSession?
    /// The whole terminal painted, or one line per change.
    private let display: any FlowDisplay
    /// For tests: the keys a scripted person presses when each screen appears.
    private let person: (@Sendable (Screen) -> [Key])?
    /// Counts down what the flows wait for, on their clock.
    private let countdown: CountdownTicker

    /// What the command does with the person's choices.
    struct Controls: Sendable {
        /// Enter on an action, or a pick from a list: the action's or the item's id.
        var choose: @Sendable (String) -> Void = { _ in }
        /// Enter in a password field: the typed bytes, which the receiver owns and wipes (the
        /// presenter wipes its own).
        var submitPassword: @Sendable (SecretBytes) -> Void = { $0.wipe() }
        /// When Esc means something other than leaving on `screen`, the words for the key hint
        /// (e.g. "back to the password"); nil lets Esc leave.
        var backLabel: @Sendable (Screen) -> String? = { _ in nil }
        /// Esc where `backLabel` gave words.
        var back: @Sendable () -> Void = {}
        /// Esc, `q`, or Ctrl-D in an empty password field: leave the flow as Ctrl-C does.
        var leave: @Sendable () -> Void = { SignalHandling.shared.interrupt() }
    }

    private struct State {
        var renderer: TerminalRenderer
        var screen: Screen?
        var focus = 0
        /// The password being typed; wiped on submit, whenever the field goes away, and on close.
        var password = PasswordEntry()
        var logs: [String] = []
        var transcript: [LogLine] = []
        var status: String?
        var controls = Controls()
        var started = false
        var closed = false
        /// The camera preview's part of the screen.
        var preview = PreviewSlot()
    }

    private let state: Mutex<State>

    /// A line of the log area, and where it goes when the terminal is given back.
    struct LogLine: Sendable {
        var text: String
        var toStandardError: Bool
    }

    private var drawsScreen: Bool { display.paintsScreen }

    /// The most lines kept for the transcript printed at the end.
    static let transcriptLimit = 2000

    /// - Parameters:
    ///   - interactive: a person answers (focus, key hints and actions drawn); otherwise
    ///     actions are left out, since nobody can press them.
    ///   - terminal: the terminal to paint and read keys from; nil prints lines.
    ///   - logCues: each cue is also written as a log line (the `log:` sink's words), so the demo
    ///     shows its haptics without a pad.
    ///   - person: for tests, the keys a scripted person presses as each screen appears.
    init(console: Console, sink: (any HapticSink)?, noColorFlag: Bool, verbose: Bool, json: Bool,
         logCues: Bool = false, interactive: Bool = false, terminal: TerminalSession? = nil,
         person: (@Sendable (Screen) -> [Key])? = nil, clock: (any Clock<Duration>)? = nil) {
        self.console = console
        countdown = CountdownTicker(clock: clock)
        self.verbose = verbose
        self.logCues = logCues
        self.interactive = interactive || person != nil
        self.person = person
        let drawn = !json && terminal?.drawsScreen == true
        self.terminal = drawn || interactive ? terminal : nil
        if drawn, let terminal {
            display = TerminalScreenDisplay(console: console, terminal: terminal)
        } else {
            display = LinePerScreenDisplay(console: console, toStandardError: json)
        }
        var renderer = TerminalRenderer(console: console, noColorFlag: noColorFlag)
        if drawn, let size = terminal?.size { renderer.width = max(TerminalRenderer.minimumWidth, size.columns) }
        if !drawn { renderer.isTerminal = false }
        state = Mutex(State(renderer: renderer))
        cues = CuePlayer(sink: sink, console: console)
    }

    /// What the command does with Enter, Esc and typed passwords from now on.
    func setControls(_ controls: Controls) {
        state.withLock { $0.controls = controls }
    }

    /// Takes the terminal (if there is one) before the first screen. Called by `present`/`show`
    /// on first use; call it earlier to own the terminal from the start.
    func start() {
        let first = state.withLock { s -> Bool in
            defer { s.started = true }
            return !s.started && !s.closed
        }
        guard first, let terminal else { return }
        if display.paintsScreen {
            display.begin(owner: self)
            terminal.setRepaint { [weak self] in self?.repaint(full: true) }
        }
        if interactive { terminal.setKeyHandler { [weak self] key in self?.handle(key) } }
        terminal.begin()
        repaint(full: true)
    }

    /// Presents everything `outputs` publishes until it ends or the task is cancelled.
    func present(_ outputs: AsyncStream<FlowOutput>) async {
        for await output in outputs { show(output) }
    }

    /// The screen shown last, for answering questions about it.
    var lastScreen: Screen? { state.withLock { $0.screen } }

    func show(_ output: FlowOutput) {
        start()
        switch output {
        case .screen(let screen):
            let line = state.withLock { s -> String? in
                let sameChoices = s.screen.map { FlowKeys.choiceIDs($0.content) == FlowKeys.choiceIDs(screen.content) } ?? false
                if !sameChoices { s.focus = 0 }
                if !FlowKeys.acceptsPassword(screen) { s.password.wipe() }
                if FlowKeys.choiceIDs(s.screen?.content ?? .none) != FlowKeys.choiceIDs(screen.content) || !FlowKeys.acceptsPassword(screen) {
                    s.password.resetKeystrokes()
                }
                s.screen = screen
                guard !display.paintsScreen else { return nil }
                let line = s.renderer.line(for: displayed(screen, in: s))
                // With keys but no drawing (stdout piped), the keys are said under the line.
                guard interactive, person == nil, !line.isEmpty else { return line }
                return line + "  keys: " + keyHints(for: screen, focus: s.focus, controls: s.controls) + "\n"
            }
            if let line { emitLine(line) } else { repaint() }
            for key in person?(screen) ?? [] { press(key) }
        case .cue(let cue):
            if logCues { note("  ♪ " + describeCue(cue)) }
            cues.play(cue)
        case .announcement(let announcement):
            if verbose { console.diagnostic("» \(announcement.text)") }
        case .event(.waiting(let what, let limit)):
            countDown(what, limit: limit)
        case .event(.entered), .event(.idleDeadlinePassed), .event(.sourceEnded):
            countDown(nil, limit: .zero)
        case .event:
            break
        }
    }

    /// A line of the CLI's own between screens: in the log area on a terminal, else on its own line.
    func note(_ text: String) {
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            log(String(line), toStandardError: false)
        }
    }

    // MARK: DiagnosticSink (while the screen is ours)

    func diagnostic(_ line: String) { log(line, toStandardError: true) }

    func status(_ line: String?) {
        let changed = state.withLock { s -> Bool in
            defer { s.status = line }
            return s.status != line
        }
        if changed { repaint() }
    }

    // MARK: Camera preview

    /// Whether a preview can be drawn at all: only on the alternate screen of a terminal.
    var drawsPreview: Bool { drawsScreen }

    /// The preview's colours follow the screen's (`--no-color`, `NO_COLOR`, `COLORTERM`).
    var previewStyle: CameraPreview.Style {
        state.withLock { CameraPreview.Style(color: !$0.renderer.noColor, trueColor: $0.renderer.trueColor) }
    }

    /// A preview's claim on the screen: calls with an ended claim change nothing, so a preview
    /// still finishing a picture after it was ended cannot bring itself back.
    typealias PreviewClaim = PreviewSlot.Claim

    /// Starts a preview's claim; nothing is drawn until `beginPreview`.
    func claimPreview() -> PreviewClaim {
        state.withLock { $0.preview.claim() }
    }

    /// Makes room for a camera preview of a camera `aspect` times as wide as it is tall (beside or
    /// above the frame, as the terminal allows); the rows come with `showPreview`.
    func beginPreview(_ claim: PreviewClaim, aspect: Double) {
        guard drawsScreen else { return }
        if state.withLock({ $0.preview.begin(claim, aspect: aspect) }) { repaint() }
    }

    /// The preview's place and size as last painted: what `showPreview` rows must be made for.
    var previewLayout: PreviewLayout? { state.withLock { $0.preview.layout } }

    /// Draws `rows` (made for `layout`) as the preview, unless the layout has changed since.
    func showPreview(_ claim: PreviewClaim, rows: [String], for layout: PreviewLayout) {
        if state.withLock({ $0.preview.show(claim, rows: rows, for: layout) }) { repaint() }
    }

    /// Takes the preview away for good; the frame gets the whole terminal again.
    func endPreview(_ claim: PreviewClaim) {
        if state.withLock({ $0.preview.end(claim) }) { repaint() }
    }

    /// While a flow waits with a deadline, the status line says for what and how long is left.
    private func countDown(_ what: String?, limit: Duration) {
        guard drawsScreen else { return }
        countdown.count(what, limit: limit) { [weak self] line, stillCurrent in
            guard let self else { return }
            let changed = state.withLock { s -> Bool in
                guard stillCurrent(), s.status != line else { return false }
                s.status = line
                return true
            }
            if changed { repaint() }
        }
    }

    /// Waits for queued cues to finish playing, then gives the terminal back and prints the log
    /// lines and the last screen as they stood (without actions nobody can press any more).
    func finish() async {
        await cues.finish()
        close()
    }

    /// Gives the terminal back (idempotent); see ``finish()``.
    func close() {
        countdown.stop()
        let drawn = drawsScreen
        // With no paint under way: one that was is written before the screen is given back, and
        // none comes after.
        let ending = display.settled { state.withLock { s -> (transcript: [LogLine], last: [String])? in
            guard !s.closed else { return nil }
            s.closed = true
            s.password.wipe()
            guard drawn, s.started else { return ([], []) }
            var last: [String] = []
            s.preview.clear()
            if let columns = terminal?.size.columns { s.renderer.width = max(TerminalRenderer.minimumWidth, columns) }
            if var plain = s.screen {
                switch plain.content {
                case .actions, .passwordField: plain.content = .none
                default: break
                }
                last = s.renderer.frame(for: plain)
            }
            return (s.transcript, last)
        } }
        guard let ending else { return }
        terminal?.setKeyHandler(nil)
        terminal?.setRepaint(nil)
        terminal?.end()
        guard drawn else { return }
        display.end(transcript: ending.transcript, lastFrame: ending.last)
    }

    // MARK: Keys

    /// A key, as if pressed at the terminal.
    func press(_ key: Key) { handle(key) }

    private func handle(_ key: Key) {
        enum Deed {
            case none, repaint(full: Bool), choose(String), submit(SecretBytes), back, leave
        }
        let (deed, controls) = state.withLock { s -> (Deed, Controls) in
            guard let screen = s.screen else { return (.none, s.controls) }
            let keys = FlowKeys(screen: screen, focus: s.focus, typedBytes: s.password.byteCount,
                                escapeGoesBack: s.controls.backLabel(screen) != nil)
            switch keys.action(for: key) {
            case .ignore:
                return (.none, s.controls)
            case .focus(let index):
                s.focus = index
                return (.repaint(full: false), s.controls)
            case .choose(let id, let index):
                s.focus = index
                return (.choose(id), s.controls)
            case .type(let character):
                s.password.type(character)
                return (.repaint(full: false), s.controls)
            case .eraseCharacter:
                s.password.eraseCharacter()
                return (.repaint(full: false), s.controls)
            case .eraseLine:
                s.password.eraseLine()
                return (.repaint(full: false), s.controls)
            case .submitPassword:
                return (.submit(s.password.take()), s.controls)
            case .back:
                return (.back, s.controls)
            case .leave:
                return (.leave, s.controls)
            case .repaint:
                return (.repaint(full: false), s.controls)
            case .redraw:
                return (.repaint(full: true), s.controls)
            }
        }
        switch deed {
        case .none: break
        case .repaint(let full):
            if drawsScreen { repaint(full: full) } else if person == nil, let screen = lastScreen, !FlowKeys.choiceIDs(screen.content).isEmpty {
                // Line mode: say where the focus went.
                let focus = state.withLock { $0.focus }
                emitLine("  keys: " + keyHints(for: screen, focus: focus, controls: controls) + "\n")
            }
        case .choose(let id): controls.choose(id)
        case .submit(let password):
            // Handed over: the receiver wipes it once it is done with it (after the derivation).
            controls.submitPassword(password)
            repaint()
        case .back: controls.back()
        case .leave: controls.leave()
        }
    }

    // MARK: Drawing

    private func log(_ text: String, toStandardError: Bool) {
        let drawn = drawsScreen
        let line: String? = state.withLock { s in
            guard drawn, s.started, !s.closed else {
                s.renderer.detach()
                return text
            }
            s.logs.append(text)
            if s.logs.count > ScreenPainter.logRows { s.logs.removeFirst(s.logs.count - ScreenPainter.logRows) }
            s.transcript.append(LogLine(text: text, toStandardError: toStandardError))
            if s.transcript.count > Self.transcriptLimit { s.transcript.removeFirst() }
            return nil
        }
        if let line {
            display.write(line + "\n", toStandardError: toStandardError)
        } else {
            repaint()
        }
    }

    private func emitLine(_ line: String) {
        guard !line.isEmpty else { return }
        display.write(line, toStandardError: false)
    }

    /// Paints the screen as it stands: only rows that changed, or everything when `full`.
    private func repaint(full: Bool = false) {
        display.paint(full: full) { size in
            state.withLock { s -> [String]? in
                guard s.started, !s.closed else { return nil }
                let fullWidth = max(TerminalRenderer.minimumWidth, size.columns)
                s.renderer.width = fullWidth
                let beside = s.preview.beside(size: size)
                if let beside {
                    s.renderer.width = max(TerminalRenderer.minimumWidth, size.columns - beside.columns - PreviewLayout.gap - 1)
                }
                var frame: [String] = []
                var hints: String?
                if let screen = s.screen {
                    let shown = displayed(screen, in: s)
                    let typing = FlowKeys.acceptsPassword(shown) && interactive ? s.password.typing : nil
                    frame = s.renderer.frame(for: shown, focus: interactive && !FlowKeys.choiceIDs(shown.content).isEmpty ? s.focus : nil, typing: typing)
                    hints = interactive ? keyHints(for: shown, focus: s.focus, controls: s.controls) : nil
                }
                frame = s.preview.placing(in: frame, beside: beside, size: size)
                var renderer = s.renderer
                renderer.width = fullWidth
                let quiet = { (text: String) in renderer.quietLine(TextLayout.truncate(text, width: renderer.width)) }
                return ScreenPainter.layout(frame: frame, logs: s.logs.map(quiet), status: s.status.map(quiet),
                                            hints: hints.map { renderer.quietLine(renderer.centred(TextLayout.truncate($0, width: renderer.width))) },
                                            size: size)
            }
        }
    }

    /// The screen as drawn here: without actions when nobody can press them.
    private func displayed(_ screen: Screen, in s: State) -> Screen {
        guard !interactive, case .actions = screen.content else { return screen }
        var shown = screen
        shown.content = .none
        return shown
    }

    /// The key hint line: which keys do what on this screen.
    private func keyHints(for screen: Screen, focus: Int, controls: Controls) -> String {
        FlowKeys.hints(for: screen, focus: focus, back: controls.backLabel(screen))
    }
}
