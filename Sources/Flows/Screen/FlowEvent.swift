import HAL

/// What happened in a flow, as a fact a program can act on. Screens are for people and their
/// words may change; a caller that needs to know "the password was refused" or "the set is
/// damaged" reads these instead of comparing rendered text.
package enum FlowEvent: Hashable, Sendable {
    /// A wait began (or began again after progress): what it waits for, in words that follow
    /// "waiting for", and how long it lasts before the flow gives up.
    case waiting(for: String, limit: Duration)
    /// The body scan entered a state (the same names `hwprobe scan --json` reports).
    case entered(BodyScanState)
    /// The password field takes input now; `attempt` is the number the next submit will be
    /// (1 for the first ask, 2 after one refusal, and again the same number after a cancel).
    case passwordWanted(attempt: Int)
    /// The backup's key derivation is expected to take `expected` here, more than the limit the
    /// flow was given: the person is asked (Continue / Cancel) before anything is derived.
    case slowDerivationAhead(expected: Duration)
    /// An empty password was submitted; nothing was derived and the field asks again.
    case passwordEmpty
    /// The key derivation ran and the password did not open the backup.
    case passwordRefused(attempts: Int)
    /// The scanned codes contradict each other; only starting over helps.
    case setDamaged(reason: String)
    /// The code source ended before the set was complete (the camera stopped); what was scanned
    /// is kept, and the scan can carry on with another source.
    case sourceEnded(scanned: Int, of: Int?)
    /// No new code arrived within the scan's idle limit.
    case idleDeadlinePassed(scanned: Int, of: Int?)
}
