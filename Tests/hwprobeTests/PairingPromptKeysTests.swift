import Testing
@testable import hwprobe

/// The pairing prompts' keys, without a terminal: what typing, correcting, answering and
/// cancelling do (the pty tests in Tests/Terminal see the same through a real terminal).
struct PairingPromptKeysTests {
    static func type(_ text: String, into entry: inout PasskeyEntry) -> [PairingPromptAction] {
        text.map { entry.handle(.character($0)) }
    }

    @Test func sixDigitsThenEnterIsThePasskeyLeadingZerosKept() {
        var entry = PasskeyEntry()
        #expect(entry.handle(.enter) == .ignored)
        #expect(Self.type("012345", into: &entry) == Array(repeating: .changed, count: 6))
        #expect(entry.shown == "012345")
        #expect(entry.handle(.enter) == .passkey(12_345))
    }

    @Test func aSeventhDigitAndAnythingButDigitsAreIgnored() {
        var entry = PasskeyEntry()
        #expect(Self.type("12a-3", into: &entry) == [.changed, .changed, .ignored, .ignored, .changed])
        #expect(entry.shown == "123___")
        #expect(entry.handle(.enter) == .ignored, "Enter before six digits ended the prompt")
        #expect(Self.type("4567", into: &entry) == [.changed, .changed, .changed, .ignored])
        #expect(entry.handle(.character("٣")) == .ignored, "a non-ASCII digit was taken")
        #expect(entry.handle(.enter) == .passkey(123_456))
    }

    @Test func backspaceAndCtrlUCorrectWhatWasTyped() {
        var entry = PasskeyEntry()
        _ = Self.type("1299", into: &entry)
        #expect(entry.handle(.backspace) == .changed)
        #expect(entry.handle(.delete) == .changed)
        #expect(entry.shown == "12____")
        _ = Self.type("3456", into: &entry)
        #expect(entry.handle(.enter) == .passkey(123_456))
        #expect(entry.handle(.eraseLine) == .changed)
        #expect(entry.handle(.backspace) == .ignored)
        #expect(entry.shown == "______")
    }

    @Test(arguments: [Key.escape, .interrupt, .endOfInput])
    func escCtrlCAndCtrlDCancelBothPrompts(key: Key) {
        var entry = PasskeyEntry()
        _ = Self.type("123", into: &entry)
        #expect(entry.handle(key) == .cancelled)
        #expect(ComparisonAnswer.handle(key) == .cancelled)
    }

    @Test func theComparisonIsYesOrNoAndEnterAloneDecidesNothing() {
        #expect(ComparisonAnswer.handle(.character("y")) == .answered(true))
        #expect(ComparisonAnswer.handle(.character("Y")) == .answered(true))
        #expect(ComparisonAnswer.handle(.character("n")) == .answered(false))
        #expect(ComparisonAnswer.handle(.character("N")) == .answered(false))
        #expect(ComparisonAnswer.handle(.enter) == .ignored)
        #expect(ComparisonAnswer.handle(.character("1")) == .ignored)
    }
}
