import HAL
import Testing

/// Text from outside is printed with its control characters shown, never obeyed (issue 27).
@Suite struct PrintableTextTests {
    @Test func controlCharactersAreShown() {
        #expect(PrintableText.escaping("\u{1B}]0;T\u{07}\u{1B}[2J\u{1B}[31mEvil") == "\\x1B]0;T\\x07\\x1B[2J\\x1B[31mEvil")
        #expect(PrintableText.escaping("a\u{7F}b\u{9B}2J\u{85}") == "a\\x7Fb\\u{9B}2J\\u{85}")
        #expect(PrintableText.escaping("line\r\nnext\tcell") == "line\\x0D\\x0Anext\\x09cell")
        #expect(PrintableText.escaping("line\r\nnext\tcell", keepingLayout: true) == "line\\x0D\nnext\tcell")
    }

    @Test func printableTextIsUnchanged() {
        // U+00A0 and U+00BF share the C1 controls' lead byte (0xC2) and are not controls.
        for text in ["", "Bench Scale", "Mirror 4F2A", "ÄÖÜ ✓ 体重計 🔒", "a\\x1Bb", "no\u{A0}break ¿", "line\nnext\tcell"] {
            #expect(PrintableText.escaping(text, keepingLayout: true) == text)
        }
        #expect(PrintableText.escaping("no\u{A0}break ¿") == "no\u{A0}break ¿")
    }

    @Test func bytesThatAreNotUTF8AreShownAsBytes() {
        #expect(PrintableText.escaping(bytes: Array("ok".utf8) + [0xFF, 0xC3, 0x28, 0xE2, 0x82, 0xAC, 0x1B]) == "ok\\xFF\\xC3(€\\x1B")
        #expect(PrintableText.escaping(bytes: [0xED, 0xA0, 0x80]) == "\\xED\\xA0\\x80", "a surrogate is not UTF-8")
        #expect(PrintableText.escaping(bytes: [0xF0, 0x9F, 0x94]) == "\\xF0\\x9F\\x94", "cut short")
    }
}
