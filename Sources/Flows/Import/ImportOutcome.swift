/// How a backup scan ended. Each case says what the caller does next: decrypt, explain, reconnect
/// a camera, or simply close.
package enum ImportOutcome: Hashable, Sendable {
    /// Every code of one backup arrived and the joined container matches its ID.
    case completed(container: [UInt8], backupID: String, codeCount: Int)
    /// The codes contradict each other and the scan ran unattended, so nobody can start over.
    case damaged(String)
    /// The camera stopped before the set was complete. What was scanned is kept: hand the flow a
    /// new source with `resume(with:)` to carry on. `of` is nil before the first code.
    case sourceEnded(scanned: Int, of: Int?)
    /// No new code arrived for the idle limit given to the flow. What was scanned is kept.
    case timedOut(scanned: Int, of: Int?)
    /// The person (or the caller) cancelled.
    case cancelled
}

/// How a password attempt session ended.
package enum DecryptOutcome: Hashable, Sendable {
    /// The backup opened; these are its plaintext bytes, the only copy: wipe them once written.
    case decrypted(SecretBytes)
    /// The password was right (or the container was unreadable) but the data was changed.
    case damaged(String)
    /// The backup asks for key-derivation settings this reader refuses; nothing was derived.
    case unsupported(String)
    /// The person left without opening the backup.
    case cancelled
}
