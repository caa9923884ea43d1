import LinuxIO
import Synchronization

/// The alternate screen of a terminal, painted whole: only the rows that changed are written, and
/// when the terminal is given back the log lines and the last frame are printed once.
final class TerminalScreenDisplay: FlowDisplay {
    private let console: Console
    private let terminal: TerminalSession
    /// Held from working out a paint's bytes until they are written, so paints from different
    /// tasks (a screen, the countdown, the camera preview) reach the terminal in the order their
    /// differences were computed: the painter's idea of the screen stays the screen's.
    private let painter = Mutex(ScreenPainter())

    init(console: Console, terminal: TerminalSession) {
        self.console = console
        self.terminal = terminal
    }

    var paintsScreen: Bool { true }

    func begin(owner: any DiagnosticSink) {
        console.takeOver(owner)
    }

    func paint(full: Bool, _ rows: (WindowSize) -> [String]?) {
        painter.withLock { painter in
            let size = terminal.size
            guard let rows = rows(size) else { return }
            if full { painter.invalidate() }
            let bytes = painter.paint(rows, size: size)
            if !bytes.isEmpty { console.draw(bytes) }
        }
    }

    func settled<T: Sendable>(_ body: () -> T) -> T {
        painter.withLock { _ in body() }
    }

    func write(_ text: String, toStandardError: Bool) {
        if toStandardError { console.err(text) } else { console.out(text) }
    }

    func end(transcript: [FlowPresenter.LogLine], lastFrame: [String]) {
        console.release()
        for line in transcript {
            write(line.text + "\n", toStandardError: line.toStandardError)
        }
        // The last frame as drawn: styled, its text escaped span by span in the renderer.
        if !lastFrame.isEmpty { console.draw(lastFrame.joined(separator: "\n") + "\n\n") }
    }
}
