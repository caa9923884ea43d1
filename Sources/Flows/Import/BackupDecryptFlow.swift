import Foundation
import HAL
import Synchronization

/// Asks for a backup's password and opens it (docs/flows.md §2).
///
/// The key derivation is scrypt: synchronous, seconds to minutes long, and impossible to stop
/// part way. It therefore runs on a thread of its own, and Cancel never waits for it: the idle
/// screen comes back at once and the derivation's late result is dropped when it lands.
///
/// At most one abandoned derivation is ever kept alive. scrypt's table is 128·r·N bytes, which
/// is 1 GiB at the largest parameters a reader accepts (N = 2^20 with r = 8), so letting a person
/// cancel and retry five times in a row must not mean five tables at once. A submit that arrives
/// while an abandoned derivation still runs shows the decrypting screen and starts its own
/// derivation only when the old one has returned.
///
/// Secrets: each password arrives as ``SecretBytes`` and is wiped as soon as its derivation has
/// returned (or when it is dropped unused); the plaintext is handed over in the one buffer it was
/// decrypted into, so wiping the outcome's bytes wipes every copy there is.
///
/// Costs: given a `slowDerivationLimit`, a backup whose parameters would take longer than that
/// to derive on this machine (by the time estimate) is not derived until the person says so: the
/// flow opens on a question with Continue and Cancel, before any password is typed.
package final class BackupDecryptFlow: Sendable {
    /// Screens, cues and announcements in order, buffered without limit. Finishes with the flow.
    package let outputs: AsyncStream<FlowOutput>

    private let output: AsyncStream<FlowOutput>.Continuation
    /// Nil when the bytes were refused before any password was asked for.
    private let container: VB1Container?
    private let deriver: any KeyDeriver
    let timeEstimate: DerivationTimeEstimate?
    private let clock: any Clock<Duration>
    /// How many passwords the caller allows, said on the wrong-password screen; nil says nothing.
    let attemptLimit: Int?
    let motion: MotionSettings
    private let endings: AsyncStream<Ending>
    private let ending: AsyncStream<Ending>.Continuation
    private let state = Mutex(State())

    private enum Phase: Sendable, Equatable {
        /// The backup is slow to open here: waiting for Continue or Cancel.
        case confirmingCost
        case idle
        case decrypting(attempt: Int)
        /// Opened: the open lock is on screen and `run()` is pausing before it returns.
        case unlocking
        case finished
    }

    private struct State: Sendable {
        var phase = Phase.idle
        var attempts = 0
        /// Derivations whose thread has not returned yet, abandoned or not.
        var running = 0
        /// A submit held back until the abandoned derivation returns.
        var waiting: (attempt: Int, password: SecretBytes)?
        var outcome: DecryptOutcome?
        var lastScreen: Screen?
        /// Characters in the last attempt, so the refused field still shows what was typed.
        var typedLength = 0
    }

    private enum Ending: Sendable {
        case unlocked(SecretBytes)
        case ended(DecryptOutcome)
    }

    /// - Parameters:
    ///   - container: the joined container bytes from the scan. Bytes that are not a readable
    ///     container, or that ask for refused parameters, end the flow at once: no password is
    ///     asked for and nothing is derived.
    ///   - deriver: the key derivation; tests pass a fake.
    ///   - timeEstimate: this machine's measured derivation speed, so the decrypting line
    ///     promises only what is true; nil gives a line that promises nothing.
    ///   - slowDerivationLimit: when set, a derivation expected to take longer than this (by
    ///     `timeEstimate`, or the reference estimate when nothing was measured) is asked about
    ///     first (``continueActionID`` / ``cancelActionID``).
    ///   - clock: the time source for the short pause on the open lock.
    ///   - motion: the motion preferences in effect.
    package init(container bytes: [UInt8], deriver: any KeyDeriver = ScryptKeyDeriver(),
                timeEstimate: DerivationTimeEstimate? = nil, slowDerivationLimit: Duration? = nil,
                attemptLimit: Int? = nil, clock: some Clock<Duration>, motion: MotionSettings = .standard) {
        self.attemptLimit = attemptLimit
        (outputs, output) = AsyncStream.makeStream(of: FlowOutput.self, bufferingPolicy: .unbounded)
        (endings, ending) = AsyncStream.makeStream(of: Ending.self, bufferingPolicy: .unbounded)
        self.deriver = deriver
        self.timeEstimate = timeEstimate
        self.clock = clock
        self.motion = motion

        let refusal: DecryptOutcome?
        do throws(VB1ContainerError) {
            container = try VB1Container(parsing: bytes)
            refusal = nil
        } catch {
            container = nil
            switch error {
            case .unsupportedParameters(let reason): refusal = .unsupported(reason)
            default: refusal = .damaged(error.description)
            }
        }

        let estimate = timeEstimate ?? .reference
        let slow = container.flatMap { container in
            slowDerivationLimit.flatMap { estimate.isSlow(container.parameters, limit: $0) ? container.parameters : nil }
        }
        state.withLock { s in
            if let slow {
                s.phase = .confirmingCost
                publish(slowDerivationScreen(for: slow, estimate: estimate), in: &s)
                output.yield(.event(.slowDerivationAhead(expected: .milliseconds(Int64(estimate.seconds(for: slow) * 1000)))))
                return
            }
            guard let refusal else {
                publish(idleScreen(), in: &s)
                output.yield(.event(.passwordWanted(attempt: 1)))
                return
            }
            let message: String
            if case .unsupported = refusal { message = Self.unsupportedMessage } else { message = Self.damagedMessage }
            end(refusal, message: message, in: &s)
        }
    }

    // MARK: Inputs

    /// Waits for the flow to end and says how. Calling it again returns the same outcome.
    public func run() async -> DecryptOutcome {
        await withTaskCancellationHandler {
            for await next in endings {
                switch next {
                case .unlocked(let plaintext):
                    // Only for show: long enough to see the lock open, nothing with Reduce Motion.
                    let pause = motion.showPause(.milliseconds(600))
                    if pause > .zero { try? await clock.sleep(for: pause) }
                    return finish(.decrypted(plaintext))
                case .ended(let outcome):
                    return finish(outcome)
                }
            }
            return state.withLock { $0.outcome ?? .cancelled }
        } onCancel: {
            dismiss()
        }
    }

    /// Continue on the question about a slow backup: the password field comes, and each attempt
    /// derives without asking again. Ignored on any other screen.
    package func confirmSlowDerivation() {
        state.withLock { s in
            guard s.phase == .confirmingCost else { return }
            s.phase = .idle
            publish(idleScreen(motion: motion.apply(.crossfade)), in: &s)
            output.yield(.event(.passwordWanted(attempt: 1)))
        }
    }

    /// The action ids of the slow-backup question (Cancel ends the flow as `.cancelled`).
    package static let continueActionID = "continue"
    package static let cancelActionID = "cancel"

    /// Return in the password field. Ignored unless the field accepts input. An empty password
    /// never reaches the key derivation (a stray Return should not start minutes of work): the
    /// field asks again, saying why.
    ///
    /// The flow owns `password` from here: it is wiped once its derivation has returned, or at
    /// once if it is not used (the field did not accept input, or it was empty).
    public func submit(password: SecretBytes) {
        state.withLock { s in
            guard s.phase == .idle, let container else {
                password.wipe()
                return
            }
            guard !password.isEmpty else {
                publish(idleScreen(footer: Footer(Self.emptyPasswordMessage, tone: .warning)), in: &s)
                output.yield(.event(.passwordEmpty))
                output.yield(.event(.passwordWanted(attempt: s.attempts + 1)))
                return
            }
            s.attempts += 1
            let attempt = s.attempts
            s.phase = .decrypting(attempt: attempt)
            // Characters, as the field showed them: UTF-8 lead bytes, never the bytes themselves.
            s.typedLength = password.withUnsafeBytes { bytes in bytes.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) } }
            publish(decryptingScreen(for: container), in: &s)
            if s.running == 0 {
                startDerivation(attempt: attempt, password: password, container: container, in: &s)
            } else {
                s.waiting?.password.wipe()
                s.waiting = (attempt, password)
            }
        }
    }

    /// The same for a password given as a string (tests, the demo's known password): a string
    /// cannot be wiped, so the CLI hands over bytes instead.
    public func submit(password: String) {
        submit(password: SecretBytes(copying: password.utf8))
    }

    /// Cancel while decrypting: back to the password field at once. The derivation can't be
    /// stopped, so it is abandoned and its result dropped. Ignored in any other state.
    public func cancel() {
        state.withLock { s in
            guard case .decrypting = s.phase else { return }
            s.phase = .idle
            s.waiting?.password.wipe()
            s.waiting = nil
            publish(idleScreen(motion: motion.apply(.crossfade)), in: &s)
            output.yield(.event(.passwordWanted(attempt: s.attempts + 1)))
        }
    }

    /// Leaves without opening the backup: the flow ends as `.cancelled`. Ignored once the backup
    /// has opened or the flow has ended.
    package func dismiss() {
        state.withLock { s in
            switch s.phase {
            case .confirmingCost, .idle, .decrypting:
                s.phase = .finished
                s.waiting?.password.wipe()
                s.waiting = nil
                ending.yield(.ended(.cancelled))
            case .unlocking, .finished:
                return
            }
        }
    }

    /// Key derivations still running, abandoned ones included. Never more than one.
    package var runningDerivations: Int {
        state.withLock { $0.running }
    }

    // MARK: Deriving

    private func startDerivation(attempt: Int, password: SecretBytes, container: VB1Container, in s: inout State) {
        s.running += 1
        let deriver = deriver
        // A thread rather than a task: the deriver blocks for its whole run and would otherwise
        // hold one of the few threads every task in the process shares.
        BlockingWork.start("backup key derivation") { [self] in
            let result: Result<SecretBytes, VB1ContainerError>
            do throws(VB1ContainerError) {
                var key = try container.deriveKey(password: password, deriver: deriver)
                // The password's work is done: gone before the slow part's result is even looked at.
                password.wipe()
                defer { key.overwriteWithZeros() }
                result = .success(try container.open(key: key))
            } catch {
                result = .failure(error)
            }
            password.wipe()
            derivationReturned(attempt: attempt, result: result)
        }
    }

    private func derivationReturned(attempt: Int, result: Result<SecretBytes, VB1ContainerError>) {
        state.withLock { s in
            s.running -= 1
            if s.phase == .decrypting(attempt: attempt) {
                apply(result, in: &s)
            } else if case .success(let plaintext) = result {
                // Abandoned: the person cancelled, so this secret must go nowhere.
                plaintext.wipe()
            }
            if let waiting = s.waiting, let container {
                s.waiting = nil
                if s.phase == .decrypting(attempt: waiting.attempt) {
                    startDerivation(attempt: waiting.attempt, password: waiting.password, container: container, in: &s)
                }
            }
        }
    }

    private func apply(_ result: Result<SecretBytes, VB1ContainerError>, in s: inout State) {
        switch result {
        case .success(let plaintext):
            s.phase = .unlocking
            publish(unlockedScreen(), in: &s)
            output.yield(.cue(.success))
            output.yield(.announcement(Announcement(Self.unlockedMessage)))
            ending.yield(.unlocked(plaintext))
        case .failure(.incorrectPassword):
            s.phase = .idle
            publish(wrongPasswordScreen(maskedLength: s.typedLength, attemptsLeft: attemptLimit.map { max(0, $0 - s.attempts) }), in: &s)
            output.yield(.cue(.error))
            output.yield(.announcement(Announcement("Incorrect password. Try again.", priority: .assertive)))
            output.yield(.event(.passwordRefused(attempts: s.attempts)))
            output.yield(.event(.passwordWanted(attempt: s.attempts + 1)))
        case .failure(.damaged(let reason)):
            end(.damaged(reason), message: Self.damagedMessage, in: &s)
        case .failure(.notABackup):
            end(.damaged(VB1ContainerError.notABackup.description), message: Self.damagedMessage, in: &s)
        case .failure(.unsupportedParameters(let reason)):
            end(.unsupported(reason), message: Self.unsupportedMessage, in: &s)
        case .failure(.cryptoFailure):
            // The machine failed, not the person or the backup: let them try again.
            s.phase = .idle
            publish(idleScreen(footer: Footer(Self.cryptoFailureMessage, tone: .error)), in: &s)
            output.yield(.cue(.error))
            output.yield(.announcement(Announcement(Self.cryptoFailureMessage, priority: .assertive)))
            output.yield(.event(.passwordWanted(attempt: s.attempts + 1)))
        }
    }

    private func end(_ outcome: DecryptOutcome, message: String, in s: inout State) {
        s.phase = .finished
        publish(refusedScreen(message), in: &s)
        output.yield(.cue(.error))
        output.yield(.announcement(Announcement(message, priority: .assertive)))
        ending.yield(.ended(outcome))
    }

    private func finish(_ outcome: DecryptOutcome) -> DecryptOutcome {
        state.withLock { s in
            if let earlier = s.outcome { return earlier }
            s.phase = .finished
            s.outcome = outcome
            output.finish()
            ending.finish()
            return outcome
        }
    }

    private func publish(_ screen: Screen, in s: inout State) {
        guard screen != s.lastScreen else { return }
        s.lastScreen = screen
        output.yield(.screen(screen))
    }
}
