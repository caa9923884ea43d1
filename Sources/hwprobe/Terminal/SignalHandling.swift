import Foundation
import HAL
import LinuxIO
import Synchronization

/// The one interrupt policy of a hwprobe run (docs/cli.md, "Interactive use").
///
/// Every signal that ends or pauses a run is handled here, for the whole command, in ordinary
/// code (a C handler only writes the signal's number to a pipe, read by one thread):
/// - Ctrl-C (SIGINT), SIGTERM, SIGHUP and Ctrl-\ (SIGQUIT) cancel whatever phase is running — a
///   flow, a key derivation, a scan — through the cancellers that phase registered; the command
///   then ends as cancelled (exit 130 for Ctrl-C, 128 + the signal's number for the others). An
///   interrupt that arrives between phases is remembered, so the next phase is cancelled the
///   moment it registers. With nothing registered, or on a second interrupt, the run ends at once.
/// - Ctrl-Z (SIGTSTP) puts the terminal back the way it was found before the process stops; on
///   SIGCONT the terminal is taken again and the screen repainted.
/// - SIGWINCH repaints at the new size.
/// In every way out the terminal's modes are restored first, and what was registered to be
/// cleaned up on an interrupt (a temporary holding a plaintext) is removed before anything else.
final class SignalHandling: Sendable {
    static let shared = SignalHandling()

    private struct State {
        var interruption: Int32?
        var cancellers: [Int: @Sendable () -> Void] = [:]
        /// What must be undone however the run ends by a signal (a temporary file to remove).
        var cleanups: [Int: @Sendable () -> Void] = [:]
        var nextToken = 0
        var terminal: TerminalSession?
        /// What to print when the run must end at once (the --json error object, say).
        var lastWords: (@Sendable (Int32) -> Void)?
        var started = false
    }

    private let state = Mutex(State())
    private let pipe = Mutex<SignalPipe?>(nil)

    static let interrupts: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]
    static let routed: [Int32] = interrupts + [SIGTSTP, SIGCONT, SIGWINCH]

    /// Takes the signals over for the rest of the process. Safe to call more than once.
    func start() {
        let first = state.withLock { s in
            defer { s.started = true }
            return !s.started
        }
        guard first else { return }
        guard let signals = try? SignalPipe(routing: Self.routed) else { return }
        pipe.withLock { $0 = signals }
        BlockingWork.start("hwprobe signals") { [self] in
            // This thread stops the process for Ctrl-Z with raise(), which must reach it.
            SignalPipe.unblock([SIGTSTP])
            while true {
                guard let signal = signals.next(timeoutMilliseconds: -1) else { continue }
                handle(signal)
            }
        }
    }

    /// A new command begins: no interrupt has arrived for it yet, and nothing is registered.
    /// `lastWords` is printed if a signal must end it at once.
    func beginRun(lastWords: (@Sendable (Int32) -> Void)? = nil) {
        start()
        state.withLock { s in
            s.interruption = nil
            s.cancellers = [:]
            s.cleanups = [:]
            s.lastWords = lastWords
        }
    }

    /// The first interrupting signal of this run, if one arrived.
    var interruption: Int32? { state.withLock { $0.interruption } }

    /// The exit code a run cancelled by `interruption` ends with (130 for Ctrl-C).
    static func exitCode(for signal: Int32) -> Int32 { 128 + signal }

    /// Calls `cancel` when an interrupt arrives while the returned registration lives (at once
    /// if one already arrived). End the registration when the phase is over.
    func onInterrupt(_ cancel: @escaping @Sendable () -> Void) -> Registration {
        let (token, already) = state.withLock { s -> (Int, Bool) in
            s.nextToken += 1
            s.cancellers[s.nextToken] = cancel
            return (s.nextToken, s.interruption != nil)
        }
        if already { cancel() }
        return Registration(owner: self, token: token)
    }

    /// Calls `cleanup` if an interrupt arrives while the returned registration lives, on every
    /// way the run then ends: before the phase is cancelled, and before an immediate exit (a
    /// second Ctrl-C, or nothing registered to cancel) too. For what must not outlive the run,
    /// such as a named temporary holding a plaintext. Unlike ``onInterrupt(_:)`` it cancels
    /// nothing, so a cleanup alone still lets the run end at once.
    func onInterruptCleanup(_ cleanup: @escaping @Sendable () -> Void) -> Registration {
        let (token, already) = state.withLock { s -> (Int, Bool) in
            s.nextToken += 1
            s.cleanups[s.nextToken] = cleanup
            return (s.nextToken, s.interruption != nil)
        }
        if already { cleanup() }
        return Registration(owner: self, token: token)
    }

    struct Registration: Sendable {
        fileprivate let owner: SignalHandling
        fileprivate let token: Int
        func end() {
            owner.state.withLock { s in
                s.cancellers.removeValue(forKey: token)
                s.cleanups.removeValue(forKey: token)
            }
        }
    }

    /// The terminal to put back on every way out, and to repaint after a pause or a resize.
    func attach(_ terminal: TerminalSession?) {
        state.withLock { $0.terminal = terminal }
    }

    /// What to write (on stdout, say) if the run must end at once without its command's help.
    func setLastWords(_ words: (@Sendable (Int32) -> Void)?) {
        state.withLock { $0.lastWords = words }
    }

    /// For tests and for a key that means Ctrl-C (a terminal that passes 0x03 through).
    func interrupt(with signal: Int32 = SIGINT) { handle(signal) }

    private func handle(_ signal: Int32) {
        switch signal {
        case SIGTSTP:
            let terminal = state.withLock { $0.terminal }
            terminal?.suspend()
            SignalPipe.restoreDefault(SIGTSTP)
            raise(SIGTSTP) // stops here; the shell's `fg` continues us
            if let signals = pipe.withLock({ $0 }) { signals.reroute(SIGTSTP) }
            terminal?.resume()
        case SIGCONT:
            state.withLock { $0.terminal }?.resume()
        case SIGWINCH:
            state.withLock { $0.terminal }?.resized()
        default:
            let (cancellers, cleanups, second, terminal, words) = state.withLock { s in
                let second = s.interruption != nil
                if !second { s.interruption = signal }
                return (Array(s.cancellers.values), Array(s.cleanups.values), second, s.terminal, s.lastWords)
            }
            for cleanup in cleanups { cleanup() }
            if second || cancellers.isEmpty {
                terminal?.end()
                words?(signal)
                // _exit, not exit: other threads may still be running code whose static destructors
                // exit() would run under them.
                _exit(Self.exitCode(for: second ? (state.withLock { $0.interruption } ?? signal) : signal))
            }
            for cancel in cancellers { cancel() }
        }
    }
}
