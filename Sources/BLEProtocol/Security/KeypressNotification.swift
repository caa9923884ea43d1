/// What a Pairing Keypress Notification says the user did on a keyboard during Passkey Entry
/// (Vol 3 Part H §3.5.8, Table 3.9). hwprobe never asks for them and ignores them if they come.
public enum KeypressNotification: UInt8, Hashable, Sendable {
    case entryStarted = 0
    case digitEntered = 1
    case digitErased = 2
    case cleared = 3
    case entryCompleted = 4
}
