import LinuxIO

/// One plain line per change, on stdout, or on stderr under `--json` so stdout keeps its one
/// object: for pipes, logs and terminals that cannot be painted. Nothing is painted, so there is
/// no console to take, no log area and nothing to leave behind at the end.
struct LinePerScreenDisplay: FlowDisplay {
    let console: Console
    /// Every line goes to stderr (`--json`).
    let toStandardError: Bool

    var paintsScreen: Bool { false }

    func begin(owner: any DiagnosticSink) {}

    func paint(full: Bool, _ rows: (WindowSize) -> [String]?) {}

    func settled<T: Sendable>(_ body: () -> T) -> T { body() }

    func write(_ text: String, toStandardError: Bool) {
        if toStandardError || self.toStandardError { console.err(text) } else { console.out(text) }
    }

    func end(transcript: [FlowPresenter.LogLine], lastFrame: [String]) {}
}
