import Synchronization

/// What an interrupt (Ctrl-C, SIGTERM, SIGHUP) cancels in a command made of phases: whichever
/// phase is running. An interrupt that arrives between two phases — the last has ended, the next
/// has not begun — is not lost: the next phase is cancelled as it begins. (A plain "current
/// canceller" variable lost it: the import soak saw a SIGTERM land while the key-derivation
/// estimate was computed, after the scan and before the password prompt, and the prompt then
/// waited for ever.)
final class PhaseCanceller: Sendable {
    private struct State {
        var cancel: @Sendable () -> Void = {}
        var interrupted = false
    }

    private let state = Mutex(State())

    /// The interrupt: cancels the running phase, and every phase that begins afterwards.
    func interrupt() {
        let cancel = state.withLock { s in
            s.interrupted = true
            return s.cancel
        }
        cancel()
    }

    /// A phase begins; `cancel` ends it. Called at once when an interrupt came already.
    func begin(_ cancel: @escaping @Sendable () -> Void) {
        let already = state.withLock { s in
            s.cancel = cancel
            return s.interrupted
        }
        if already { cancel() }
    }

    /// The phase is over: nothing to cancel until the next begins.
    func end() {
        state.withLock { $0.cancel = {} }
    }
}
