import HAL

/// The words and screens of the password step. The header never changes (the seed asks for a
/// calm header); every status, good or bad, is told in the footer.
extension BackupDecryptFlow {
    static let lockedIcon = "lock.shield.fill"
    static let unlockedIcon = "lock.open.fill"
    static let title = "Enter Backup Password"
    static let subtitle = "Use the password this backup was made with."

    static let incorrectPasswordMessage = "Incorrect password"
    static let damagedMessage = "This backup is damaged and can't be opened. Scan its codes again, or make a new export."
    static let unsupportedMessage = "This backup was made with settings this device can't open safely."
    package static let emptyPasswordMessage = "Type the backup's password, then press Enter."
    static let cryptoFailureMessage = "Decrypting failed on this device. Try again."
    static let unlockedMessage = "Backup unlocked."
    /// When nothing was measured, promise nothing about how long it takes.
    static let unmeasuredDecryptingLine = "Decrypting. This can take a while."

    private func header(icon: String = lockedIcon, content: ScreenContent, motion: MotionHint? = nil,
                        footer: Footer? = nil) -> Screen {
        Screen(icon: icon, title: Self.title, subtitle: Self.subtitle, content: content, motion: motion, footer: footer)
    }

    /// Ready for typing: the field has the focus, so Return is all it takes.
    func idleScreen(motion: MotionHint? = nil, footer: Footer? = nil) -> Screen {
        header(content: .passwordField(PasswordField(maskedLength: 0, status: .normal, focused: true)),
               motion: motion, footer: footer)
    }

    /// The field gives way to a spinner; the footer says how long this may take on this machine.
    func decryptingScreen(for container: VB1Container) -> Screen {
        let line = timeEstimateLine(for: container.parameters)
        return header(content: .spinner, footer: Footer(line, tone: .secondary))
    }

    func timeEstimateLine(for parameters: ScryptParameters) -> String {
        timeEstimate?.decryptingLine(for: parameters) ?? Self.unmeasuredDecryptingLine
    }

    /// The field in the error state, shaken, with the reason in red below.
    /// `attemptsLeft`: how many tries the caller still allows, said beside the reason.
    func wrongPasswordScreen(maskedLength: Int, attemptsLeft: Int? = nil) -> Screen {
        let left = attemptsLeft.map { $0 > 0 ? " — \($0) attempt\($0 == 1 ? "" : "s") left" : "" } ?? ""
        return header(content: .passwordField(PasswordField(maskedLength: maskedLength, status: .error, focused: true)),
                      motion: motion.apply(.shake), footer: Footer(Self.incorrectPasswordMessage + left, tone: .error))
    }

    /// The only screen where the header moves: the shield turns into an open lock.
    func unlockedScreen() -> Screen {
        header(icon: Self.unlockedIcon, content: .none, motion: motion.apply(.replace),
               footer: Footer(Self.unlockedMessage, tone: .success))
    }

    /// Asked before anything is typed or derived: this backup's key derivation costs more here
    /// than anyone would expect (hostile parameters, or a very slow machine).
    func slowDerivationScreen(for parameters: ScryptParameters, estimate: DerivationTimeEstimate) -> Screen {
        let memory = parameters.memoryBytes >= 1 << 30 ? "\(parameters.memoryBytes >> 30) GiB" : "\(parameters.memoryBytes >> 20) MiB"
        return Screen(icon: "hourglass", title: Self.slowTitle,
                      subtitle: "Opening it takes \(estimate.spokenEstimate(for: parameters)) and \(memory) of memory on this device, "
                          + "for each password tried (\(parameters)). Continue only if you made it so.",
                      content: .actions([ScreenAction(id: Self.continueActionID, title: "Continue", role: .primary),
                                         ScreenAction(id: Self.cancelActionID, title: "Cancel", role: .secondary)]))
    }

    static let slowTitle = "This backup is slow to open"

    /// A backup that can't be opened with any password: no field to type in.
    func refusedScreen(_ message: String) -> Screen {
        header(content: .none, footer: Footer(message, tone: .error))
    }
}
