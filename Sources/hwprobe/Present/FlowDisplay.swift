import LinuxIO

/// Where a ``FlowPresenter``'s screens and lines end up: the whole alternate screen of a terminal
/// (``TerminalScreenDisplay``), or one plain line per change (``LinePerScreenDisplay``).
///
/// The presenter decides what is shown (the screen, the focus, the log lines, the status); a
/// display decides how that reaches the person. Keeping the two apart lets the presenter stay the
/// same whether stdout is a terminal, a pipe, or stderr under `--json`.
protocol FlowDisplay: Sendable {
    /// Whether the whole terminal is painted: the frame, a log area, a status line, key hints and a
    /// camera preview. A display that does not paint has none of those and prints lines instead.
    var paintsScreen: Bool { get }

    /// Takes the console before the first paint: its diagnostics and statuses go to `owner`
    /// until ``end(transcript:lastFrame:)``.
    func begin(owner: any DiagnosticSink)

    /// Paints the rows `rows` makes for the terminal's size (nil: nothing to paint), only those
    /// that changed, or everything when `full`. Paints never interleave.
    func paint(full: Bool, _ rows: (WindowSize) -> [String]?)

    /// Runs `body` while no paint is under way, so nothing painted comes after what `body` decides.
    func settled<T: Sendable>(_ body: () -> T) -> T

    /// Writes `text` as it is: a screen's line, a key hint line, or a log line nothing painted holds.
    func write(_ text: String, toStandardError: Bool)

    /// Gives the console back and leaves what happened in the person's scrollback: the log lines
    /// of `transcript`, then the last frame as drawn.
    func end(transcript: [FlowPresenter.LogLine], lastFrame: [String])
}
