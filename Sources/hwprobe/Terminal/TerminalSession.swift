import Flows
import Foundation
import HAL
import LinuxIO
import Synchronization

/// The terminal, owned in one place while hwprobe draws on it or reads keys from it.
///
/// Taking it: the alternate screen (so a drawn flow never scrolls the person's shell history, and
/// a resize can repaint everything), the cursor hidden, lines never wrapped; keys read one at a
/// time without echo. Every way out — the command ending, an error, an interrupt, Ctrl-Z — goes
/// through ``end()`` or ``suspend()``, which put back exactly the modes found at the start.
final class TerminalSession: Sendable {
    /// stdout is a terminal: flows are painted on the alternate screen.
    let drawsScreen: Bool
    /// stdin is a terminal and the command wants keys: raw key input.
    let readsKeys: Bool
    private let console: Console

    private struct State {
        var saved: TerminalModes?
        var active = false
        var suspended = false
        var size: WindowSize
        var onKey: (@Sendable (Key) -> Void)?
        var repaint: (@Sendable () -> Void)?
        var readerGeneration = 0
        /// Wakes the key reader out of poll(2) when the session ends.
        var readerWake: WakeEvent?
    }

    private let state: Mutex<State>

    static let enterScreen = "\u{1B}[?1049h\u{1B}[?25l\u{1B}[?7l\u{1B}[H\u{1B}[2J"
    /// Clears the alternate screen before leaving it: a terminal (or emulator) that never switched
    /// screens is then left clean for whatever is printed after.
    static let leaveScreen = "\u{1B}[H\u{1B}[2J\u{1B}[?7h\u{1B}[?25h\u{1B}[?1049l"

    /// A session for this process's terminal, or nil when there is nothing to own (stdout is no
    /// terminal and no keys are wanted, or stdin is no terminal either).
    static func forProcess(console: Console, wantsKeys: Bool) -> TerminalSession? {
        // TERM=dumb (Emacs' shell, some CI consoles) cannot take cursor movement or the alternate
        // screen: one line per screen there, keys still read (issue 27, item 17).
        let dumb = (console.environment["TERM"] ?? "") == "dumb"
        let draws = console.isTerminal && FileDescriptor.standardOutput.isTerminal && !dumb
        let keys = wantsKeys && FileDescriptor.standardInput.isTerminal
        guard draws || keys else { return nil }
        return TerminalSession(console: console, drawsScreen: draws, readsKeys: keys)
    }

    /// Keys only, the screen left as it is: a prompt of a few lines on stderr (pairing's), for
    /// any command, whatever stdout is. Nil when stdin is no terminal.
    static func forKeys(console: Console) -> TerminalSession? {
        guard FileDescriptor.standardInput.isTerminal else { return nil }
        return TerminalSession(console: console, drawsScreen: false, readsKeys: true)
    }

    private init(console: Console, drawsScreen: Bool, readsKeys: Bool) {
        self.console = console
        self.drawsScreen = drawsScreen
        self.readsKeys = readsKeys
        let size = FileDescriptor.standardOutput.windowSize() ?? FileDescriptor.standardInput.windowSize()
            ?? WindowSize(rows: 24, columns: 80)
        state = Mutex(State(size: size))
    }

    /// The terminal's size now (kept up to date on SIGWINCH).
    var size: WindowSize { state.withLock { $0.size } }

    /// Who gets the keys (called on the key reader's thread).
    func setKeyHandler(_ handler: (@Sendable (Key) -> Void)?) { state.withLock { $0.onKey = handler } }

    /// Who paints the whole screen again after a resize or a resume.
    func setRepaint(_ repaint: (@Sendable () -> Void)?) { state.withLock { $0.repaint = repaint } }

    /// Takes the terminal. Signals that pause or end the run put it back (SignalHandling).
    func begin() {
        let started = state.withLock { s -> Bool in
            guard !s.active else { return false }
            s.active = true
            s.suspended = false
            if readsKeys { s.saved = try? TerminalModes.of(.standardInput) }
            return true
        }
        guard started else { return }
        SignalHandling.shared.attach(self)
        take()
        if readsKeys { startReader() }
    }

    /// Gives the terminal back as it was found. Idempotent; safe from any thread.
    func end() {
        let (wasActive, wake) = state.withLock { s -> (Bool, WakeEvent?) in
            defer { s.active = false; s.readerGeneration += 1; s.readerWake = nil }
            return (s.active, s.readerWake)
        }
        wake?.signal()
        guard wasActive else { return }
        giveBack()
        SignalHandling.shared.attach(nil)
    }

    /// Ctrl-Z: the shell gets its terminal back while we are stopped.
    func suspend() {
        let active = state.withLock { s -> Bool in
            guard s.active, !s.suspended else { return false }
            s.suspended = true
            return true
        }
        if active { giveBack() }
    }

    /// After SIGCONT: take the terminal again (the shell may have changed its modes meanwhile)
    /// and paint everything.
    func resume() {
        let repaint = state.withLock { s -> (@Sendable () -> Void)?? in
            guard s.active else { return nil }
            s.suspended = false
            if let size = FileDescriptor.standardOutput.windowSize() { s.size = size }
            return .some(s.repaint)
        }
        guard let repaint else { return }
        take()
        repaint?()
    }

    /// SIGWINCH: note the new size and paint everything at it.
    func resized() {
        let repaint = state.withLock { s -> (@Sendable () -> Void)? in
            if let size = FileDescriptor.standardOutput.windowSize() ?? FileDescriptor.standardInput.windowSize() { s.size = size }
            return s.active && !s.suspended ? s.repaint : nil
        }
        repaint?()
    }

    private func take() {
        if readsKeys, let saved = state.withLock({ $0.saved }) {
            try? saved.keyByKey.apply(to: .standardInput)
        }
        if drawsScreen { console.draw(Self.enterScreen) }
    }

    private func giveBack() {
        if drawsScreen { console.draw(Self.leaveScreen) }
        if readsKeys, let saved = state.withLock({ $0.saved }) {
            try? saved.apply(to: .standardInput)
        }
    }

    /// One thread reads stdin for the whole session and hands each key to the handler. It waits
    /// in poll(2) with no timeout (a timeout only while an escape sequence may still be coming)
    /// and stops when the session ends (which wakes it) or when the terminal hangs up.
    private func startReader() {
        let wake = try? WakeEvent()
        let generation = state.withLock { s in
            s.readerWake = wake
            return s.readerGeneration
        }
        BlockingWork.start("hwprobe keys") { [self] in
            defer { wake?.close() }
            var decoder = KeyDecoder()
            var buffer = [UInt8](repeating: 0, count: 256)
            let input = FileDescriptor.standardInput
            while state.withLock({ $0.readerGeneration == generation }) {
                // Waiting for the rest of an escape sequence: 30 ms of quiet makes it a lone Esc.
                let timeout: Int32 = decoder.isWaiting ? 30 : (wake == nil ? 50 : -1)
                let ready: FileDescriptor.PollEvents
                if let wake {
                    guard let polled = try? input.poll(for: .readable, orWake: wake, timeoutMilliseconds: timeout) else { return }
                    if polled.woken { continue }
                    ready = polled.events
                } else {
                    ready = (try? input.poll(for: .readable, timeoutMilliseconds: timeout)) ?? .error
                }
                if ready.isEmpty {
                    deliver(decoder.flush())
                    continue
                }
                if ready.contains(.invalid) { return }
                let count = buffer.withUnsafeMutableBytes { raw in (try? input.read(into: raw)) ?? -1 }
                // End of input or an error (the terminal hung up): no more keys will come.
                guard count > 0 else { return }
                deliver(decoder.feed(buffer[0..<count]))
                // A password typed (or pasted) in one burst is all in here: gone once decoded.
                Secrets.wipe(&buffer)
            }
        }
    }

    private func deliver(_ keys: [Key]) {
        guard !keys.isEmpty, let handler = state.withLock({ $0.active && !$0.suspended ? $0.onKey : nil }) else { return }
        for key in keys { handler(key) }
    }
}
