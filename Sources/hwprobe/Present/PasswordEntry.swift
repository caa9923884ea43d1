import Flows

/// The password being typed into a focused field, and how many keys went into it.
///
/// The characters are kept in one fixed secret buffer, as long as a password file may be
/// (``PasswordFile/limit``): never a string, never an array that grows and leaves old copies
/// behind. They leave it only as a copy on ``take()``, which wipes the buffer at once, and the
/// buffer is wiped whenever the field goes away and when the presenter ends. The buffer is a
/// reference: copies of this value share it, so there is only ever one place to wipe.
struct PasswordEntry: Sendable {
    private let typed = SecretBytes(capacity: PasswordFile.limit)
    /// Keys that changed the password since it was last taken (the field's typing mark turns with them).
    private(set) var keystrokes = 0

    /// How many bytes are typed (UTF-8).
    var byteCount: Int { typed.count }
    var isEmpty: Bool { typed.isEmpty }
    /// What the renderer may know of it: whether anything is typed and how many keys were pressed.
    var typing: PasswordTyping { PasswordTyping(isEmpty: typed.isEmpty, keystrokes: keystrokes) }

    /// Adds `character`, straight from its own bytes (no string or array in between); the
    /// caller keeps to the limit (``FlowKeys`` ignores a character that would pass it).
    mutating func type(_ character: Character) {
        typed.append(contentsOf: character.utf8)
        keystrokes += 1
    }

    /// Takes back one whole character: its UTF-8 continuation bytes, then its lead byte.
    mutating func eraseCharacter() {
        while let last = typed.last, last & 0xC0 == 0x80 { typed.removeLast() }
        if !typed.isEmpty { typed.removeLast() }
        keystrokes += 1
    }

    /// Clears what is typed, as Ctrl-U does.
    mutating func eraseLine() {
        typed.wipe()
        keystrokes += 1
    }

    /// A copy of what is typed, for the receiver to own and wipe; the buffer here is wiped.
    mutating func take() -> SecretBytes {
        let password = typed.withUnsafeBytes { SecretBytes(copying: $0) }
        typed.wipe()
        keystrokes = 0
        return password
    }

    /// Wipes what is typed (the field went away, or the presenter ended).
    func wipe() {
        if !typed.isEmpty { typed.wipe() }
    }

    /// Starts the typing mark over (a new field, or a screen that takes no password).
    mutating func resetKeystrokes() {
        keystrokes = 0
    }
}
