/// What a Pairing Keypress Notification says the user did on a keyboard during Passkey Entry
/// (Vol 3 Part H §3.5.8, Table 3.9). hwprobe never asks for them and ignores them if they come.
public enum KeypressNotification: UInt8, Hashable, Sendable {
    /// The user began typing.
    case entryStarted = 0
    /// One digit more.
    case digitEntered = 1
    /// One digit less.
    case digitErased = 2
    /// Everything typed was cleared.
    case cleared = 3
    /// The user finished typing.
    case entryCompleted = 4
}
