import Flows
import Testing
@testable import hwprobe

/// The password being typed: whole characters in and out, handed over as a copy, wiped here.
@Suite struct PasswordEntryTests {
    func text(_ bytes: SecretBytes) -> String { bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    @Test func backspaceTakesBackAWholeCharacterAndEnterHandsOverACopy() {
        var entry = PasswordEntry()
        for character in "pé€😀x" { entry.type(character) }
        #expect(entry.byteCount == 1 + 2 + 3 + 4 + 1)
        entry.eraseCharacter()
        entry.eraseCharacter()
        #expect(entry.byteCount == 6)
        #expect(entry.typing == PasswordTyping(isEmpty: false, keystrokes: 7))
        let taken = entry.take()
        #expect(text(taken) == "pé€")
        #expect(entry.isEmpty && entry.keystrokes == 0, "the buffer here is wiped once the copy is taken")
        entry.type("a")
        #expect(text(taken) == "pé€", "the copy is the receiver's own")
    }

    @Test func eraseLineAndWipeEmptyItButOnlyEraseLineCountsAsAKey() {
        var entry = PasswordEntry()
        entry.eraseCharacter()
        #expect(entry.isEmpty && entry.keystrokes == 1, "backspace on nothing still turns the typing mark")
        entry.type("s")
        entry.eraseLine()
        #expect(entry.isEmpty && entry.keystrokes == 3)
        entry.type("t")
        entry.wipe()
        #expect(entry.isEmpty && entry.keystrokes == 4)
        entry.resetKeystrokes()
        #expect(entry.typing == PasswordTyping(isEmpty: true, keystrokes: 0))
    }
}
