import Foundation
import HAL
import LinuxIO
import Synchronization

/// Where hwprobe writes: the real terminal, or buffers a test reads back.
///
/// Everything meant for the person but not part of a command's result (progress while waiting,
/// `-v` events, warnings) goes through ``diagnostic(_:)`` and ``status(_:)``, never straight to
/// stderr: while a flow is drawn on the terminal the drawing takes these lines into its own log
/// area, so they cannot break the in-place redraw.
final class Console: Sendable {
    enum Stream: Sendable { case out, err }

    private let sink: @Sendable (Stream, String) -> Void
    /// Whether stdout is a terminal (flows are drawn in place there).
    let isTerminal: Bool
    /// Whether stderr is a terminal (status lines are rewritten in place there).
    let errIsTerminal: Bool
    let environment: [String: String]
    /// Set while something (a drawn flow) owns the screen: it receives diagnostics and statuses.
    private let takeover = Mutex<(any DiagnosticSink)?>(nil)
    /// The status line currently shown on a terminal stderr, to clear it before the next line.
    private let shownStatus = Mutex<String?>(nil)

    init(isTerminal: Bool, errIsTerminal: Bool? = nil, environment: [String: String],
         sink: @escaping @Sendable (Stream, String) -> Void) {
        self.isTerminal = isTerminal
        self.errIsTerminal = errIsTerminal ?? isTerminal
        self.environment = environment
        self.sink = sink
    }

    static func standard() -> Console {
        Console(isTerminal: FileDescriptor.standardOutput.isTerminal, errIsTerminal: FileDescriptor.standardError.isTerminal,
                environment: ProcessInfo.processInfo.environment) { stream, text in
            writeFully(stream == .out ? .standardOutput : .standardError, text)
        }
    }

    /// Text for people, on stdout: every control character in it but newline and tab is shown
    /// as a visible escape (issue 27). This is where device names, file contents, paths and
    /// messages quoting them reach the terminal, so it is escaped here once rather than at each
    /// of the places that put such text into a message. JSON passes unchanged (it has no
    /// control characters left: ``JSON`` escapes them).
    /// A status line shown on a terminal stderr is cleared first: stdout is usually the same
    /// terminal, and a result printed after `[1/46] …` would otherwise run on from it.
    func out(_ text: String) {
        clearStatus()
        sink(.out, PrintableText.escaping(text, keepingLayout: true))
    }
    /// Text for people, on stderr, escaped as ``out(_:)``.
    func err(_ text: String) { sink(.err, PrintableText.escaping(text, keepingLayout: true)) }

    /// The program's own terminal control on stdout, passed as it is: entering and leaving the
    /// drawn screen, and painted frames, whose text ``TerminalRenderer`` escaped span by span.
    func draw(_ bytes: String) { sink(.out, bytes) }
    /// The program's own terminal control on stderr (clearing a status line, the bell).
    func errControl(_ bytes: String) { sink(.err, bytes) }

    /// One line for the person (no trailing newline needed): on stderr, or into the log area of
    /// the flow being drawn.
    func diagnostic(_ line: String) {
        if let owner = takeover.withLock({ $0 }) {
            owner.diagnostic(line)
            return
        }
        clearStatus()
        sink(.err, PrintableText.escaping(line, keepingLayout: true) + "\n")
    }

    /// Lines for the person on stderr, as ``err(_:)``, but into the log area of a flow being
    /// drawn while one owns the screen (issue 27, item 8): raw lines written under a full-screen
    /// view would land over it, and be gone when it ends; the log area keeps them for the
    /// transcript printed at the end.
    func errLines(_ text: String) {
        if let owner = takeover.withLock({ $0 }) {
            for line in text.split(separator: "\n") { owner.diagnostic(String(line)) }
            return
        }
        clearStatus()
        err(text)
    }

    /// What is being waited for right now, e.g. `scanning tcp:127.0.0.1:9101: 2 s left`; nil
    /// clears it. On a terminal the line is rewritten in place; elsewhere each new text is printed
    /// once as a line of its own (so a log shows the wait, not every tick of it).
    func status(_ line: String?) {
        if let owner = takeover.withLock({ $0 }) {
            owner.status(line)
            return
        }
        if errIsTerminal {
            let previous = shownStatus.withLock { shown -> String? in
                defer { shown = line }
                return shown
            }
            if let line { sink(.err, "\r\u{1B}[2K" + PrintableText.escaping(line)) } else if previous != nil { sink(.err, "\r\u{1B}[2K") }
        } else if let line {
            let changed = shownStatus.withLock { shown -> Bool in
                defer { shown = line }
                return shown != line
            }
            if changed { sink(.err, PrintableText.escaping(line) + "\n") }
        }
    }

    private func clearStatus() {
        guard errIsTerminal else { return }
        if shownStatus.withLock({ shown in defer { shown = nil }; return shown != nil }) { sink(.err, "\r\u{1B}[2K") }
    }

    /// Routes diagnostics and statuses to `owner` until ``release(_:)``.
    func takeOver(_ owner: any DiagnosticSink) {
        clearStatus()
        takeover.withLock { $0 = owner }
    }

    func release() { takeover.withLock { $0 = nil } }
}

/// What takes diagnostics over while it owns the screen.
protocol DiagnosticSink: AnyObject, Sendable {
    func diagnostic(_ line: String)
    func status(_ line: String?)
}

/// write(2) until everything is out; a closed pipe (EPIPE) or any other error drops the rest
/// instead of killing the process, since there is nobody left to read it.
func writeFully(_ descriptor: FileDescriptor, _ text: String) {
    try? descriptor.writeAll(Array(text.utf8))
}

/// A console whose output a test reads back.
final class CapturedConsole: Sendable {
    private final class Buffers: Sendable {
        let text = Mutex<(out: String, err: String)>(("", ""))
    }

    private let buffers = Buffers()
    let console: Console

    init(isTerminal: Bool = false, environment: [String: String] = [:]) {
        let buffers = buffers
        console = Console(isTerminal: isTerminal, environment: environment) { stream, text in
            buffers.text.withLock { if stream == .out { $0.out += text } else { $0.err += text } }
        }
    }

    var stdout: String { buffers.text.withLock { $0.out } }
    var stderr: String { buffers.text.withLock { $0.err } }
}
