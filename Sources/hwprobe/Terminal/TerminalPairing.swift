import BLEProtocol
import HAL
import Synchronization
import Transports

/// The pairing prompts at a terminal (hwprobe-cli.md, third edition): a passkey to show is
/// printed ("type 123456 on the device"), a passkey to type is asked for (digits, Backspace,
/// Enter), a numeric comparison is a yes/no question. Esc, Ctrl-C and Ctrl-D cancel — the
/// pairing then fails with 0x08 Unspecified Reason and nothing is stored. The prompt is a few
/// lines on stderr, keys are read from stdin key by key (``TerminalSession/forKeys(console:)``),
/// and the terminal's modes are put back as the prompt ends, however it ends. Each prompt waits
/// at most the SMP timeout (30 s): the pairing is over by then anyway.
final class TerminalPairing: PairingDelegate, Sendable {
    private let console: Console
    private let clock: any Clock<Duration>
    /// The open prompt's way to end, for ``dismiss()``.
    private let open = Mutex<AsyncStream<PairingPromptAction>.Continuation?>(nil)

    init(console: Console, clock: any Clock<Duration> = ContinuousClock()) {
        self.console = console
        self.clock = clock
    }

    func displayPasskey(_ passkey: UInt32, peer: BLEAddress) async {
        console.status(nil)
        console.diagnostic("hwprobe: pairing with \(peer): type \(UnattendedPairing.digits(passkey)) on the device")
    }

    func passkey(for peer: BLEAddress) async -> UInt32? {
        let header = "hwprobe: pairing with \(peer): type the passkey the device shows, then Enter (Esc cancels)\n"
        let answer = await prompt(PasskeyEntry(), header: header, line: { "passkey: " + $0.shown }) { entry, key in entry.handle(key) }
        if case .passkey(let value) = answer { return value }
        return nil
    }

    func confirm(_ value: UInt32, peer: BLEAddress) async -> Bool {
        await compare(value, peer: peer) ?? false
    }

    func compare(_ value: UInt32, peer: BLEAddress) async -> Bool? {
        let header = "hwprobe: pairing with \(peer): does the device show \(UnattendedPairing.digits(value))?\n"
        let answer = await prompt((), header: header, line: { _ in "y  yes, the same number    n  no    Esc  cancel " }) { _, key in
            ComparisonAnswer.handle(key)
        }
        if case .answered(let same) = answer { return same }
        return nil
    }

    /// Ends an open prompt as cancelled (the command is ending: its terminal must be put back).
    func dismiss() {
        open.withLock { $0 }?.yield(.cancelled)
    }

    /// Shows `header` and the line `state` gives, feeds each key to `handle`, and returns the
    /// first action that ends the prompt (cancelled on Ctrl-C, on `dismiss()`, at the deadline,
    /// and when stdin is no terminal).
    private func prompt<State: Sendable>(_ initial: State, header: String, line: @escaping @Sendable (State) -> String,
                                         handle: @escaping @Sendable (inout State, Key) -> PairingPromptAction) async -> PairingPromptAction {
        guard let session = TerminalSession.forKeys(console: console) else { return .cancelled }
        let state = Mutex(initial)
        let (actions, continuation) = AsyncStream.makeStream(of: PairingPromptAction.self)
        let console = console
        session.setKeyHandler { key in
            let (action, text) = state.withLock { s -> (PairingPromptAction, String) in
                let action = handle(&s, key)
                return (action, line(s))
            }
            switch action {
            case .ignored: break
            case .changed: console.errControl("\r\u{1B}[2K" + text)
            default: continuation.yield(action)
            }
        }
        open.withLock { $0 = continuation }
        console.status(nil)
        console.errControl(header + line(initial))
        session.begin()
        let interrupt = SignalHandling.shared.onInterrupt { continuation.yield(.cancelled) }
        let clock = clock
        let deadline = Task {
            try? await clock.sleep(for: SecurityManager.timeout)
            continuation.yield(.cancelled)
        }
        var answer = PairingPromptAction.cancelled
        for await action in actions {
            answer = action
            break
        }
        deadline.cancel()
        interrupt.end()
        open.withLock { $0 = nil }
        continuation.finish()
        session.setKeyHandler(nil)
        session.end()
        console.errControl("\r\u{1B}[2K" + Self.said(answer) + "\n")
        return answer
    }

    /// The prompt's last line, as it ended.
    private static func said(_ answer: PairingPromptAction) -> String {
        switch answer {
        case .passkey: "passkey typed"
        case .answered(true): "the same number: pairing"
        case .answered(false): "not the same number: pairing refused"
        default: "pairing cancelled"
        }
    }
}
