import Flows
import HAL
import Synchronization

/// Shows what a flow publishes: screens through the terminal renderer, cues on a haptic sink
/// (in order, without holding up the screens), announcements on stderr when verbose. With
/// `--json` nothing reaches stdout: screens go to stderr as one line each.
final class FlowPresenter: Sendable {
    private let console: Console
    private let renderer: Locked<TerminalRenderer>
    private let cues: AsyncStream<HapticCue>.Continuation
    private let player: Task<Void, Never>
    private let verbose: Bool
    private let quiet: Bool
    private let logCues: Bool

    /// `logCues` prints each cue between the screens (the `log:` sink's words), so the demo
    /// shows its haptics without a pad and without breaking the in-place redraw.
    init(console: Console, sink: (any HapticSink)?, noColorFlag: Bool, verbose: Bool, json: Bool, logCues: Bool = false) {
        self.console = console
        self.verbose = verbose
        self.logCues = logCues
        quiet = json
        renderer = Locked(TerminalRenderer(console: console, noColorFlag: noColorFlag))
        let (stream, continuation) = AsyncStream.makeStream(of: HapticCue.self, bufferingPolicy: .unbounded)
        cues = continuation
        let reported = Locked(false)
        player = Task {
            guard let sink else {
                for await _ in stream {}
                return
            }
            // A new cue cuts the one still playing short (the sink's scheduler stops its motors),
            // and starts only after that stop went out, so commands never interleave.
            var playing: Task<Void, Never>?
            for await cue in stream {
                playing?.cancel()
                playing = Task { [previous = playing] in
                    await previous?.value
                    do { try await sink.play(cue) } catch {
                        // A vanished pad is reported once; the flow goes on without haptics.
                        if reported.withLock({ let first = !$0; $0 = true; return first }) {
                            console.err("hwprobe: \(error)\n")
                        }
                    }
                }
            }
            await playing?.value
            await sink.close()
        }
    }

    /// Presents everything `outputs` publishes until it ends or the task is cancelled.
    func present(_ outputs: AsyncStream<FlowOutput>) async {
        for await output in outputs { show(output) }
    }

    /// The screen shown last, for answering questions about it.
    var lastScreen: Screen? { shown.withLock { $0 } }
    private let shown = Locked<Screen?>(nil)

    func show(_ output: FlowOutput) {
        switch output {
        case .screen(let screen):
            shown.withLock { $0 = screen }
            if quiet {
                let line = renderer.withLock { $0.summary(for: screen) }
                console.err(line + "\n")
            } else {
                let bytes = renderer.withLock { $0.update(screen) }
                console.out(bytes)
            }
        case .cue(let cue):
            if logCues { note("  ♪ " + describeCue(cue)) }
            cues.yield(cue)
        case .announcement(let announcement):
            if verbose { console.err("» \(announcement.text)\n") }
        }
    }

    /// A line of the CLI's own between screens: the next screen starts below it.
    func note(_ text: String) {
        renderer.withLock { $0.detach() }
        (quiet ? console.err : console.out)(text + "\n")
    }

    /// Waits for queued cues to finish playing.
    func finish() async {
        cues.finish()
        await player.value
    }
}
