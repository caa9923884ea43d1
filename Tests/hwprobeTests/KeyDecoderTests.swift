import Testing
@testable import hwprobe

/// The key decoder gets the swift-nio treatment: the same bytes in every split give the same keys.
@Suite struct KeyDecoderTests {
    static let sample: [(bytes: [UInt8], keys: [Key])] = [
        (Array("\u{1B}[A".utf8), [.up]), (Array("\u{1B}[B".utf8), [.down]),
        (Array("\u{1B}[C".utf8), [.right]), (Array("\u{1B}[D".utf8), [.left]),
        (Array("\u{1B}OA".utf8), [.up]), (Array("\u{1B}[Z".utf8), [.backTab]),
        (Array("\u{1B}[1;5C".utf8), [.right]), (Array("\u{1B}[3~".utf8), [.delete]),
        (Array("\u{1B}[H".utf8), [.home]), (Array("\u{1B}[4~".utf8), [.end]),
        ([0x0D], [.enter]), ([0x09], [.tab]), ([0x7F], [.backspace]), ([0x04], [.endOfInput]),
        ([0x15], [.eraseLine]), ([0x03], [.interrupt]),
        (Array("q1".utf8), [.character("q"), .character("1")]),
        (Array("é😀".utf8), [.character("é"), .character("😀")]),
    ]

    func decodeAll(_ chunks: [[UInt8]]) -> [Key] {
        var decoder = KeyDecoder()
        var keys: [Key] = []
        for chunk in chunks { keys += decoder.feed(chunk) }
        return keys + decoder.flush()
    }

    @Test func eachKeyDecodes() {
        for (bytes, keys) in Self.sample {
            #expect(decodeAll([bytes]) == keys, "\(bytes)")
        }
    }

    @Test func everySplitOfAStreamGivesTheSameKeys() {
        let stream = Self.sample.flatMap(\.bytes)
        let expected = Self.sample.flatMap(\.keys)
        #expect(decodeAll([stream]) == expected)
        #expect(decodeAll(stream.map { [$0] }) == expected, "one byte at a time")
        for cut in 1..<stream.count {
            #expect(decodeAll([Array(stream[..<cut]), Array(stream[cut...])]) == expected, "split at \(cut)")
        }
    }

    @Test func aLoneEscIsEscOnlyOnceTheLineGoesQuiet() {
        var decoder = KeyDecoder()
        #expect(decoder.feed([0x1B]).isEmpty, "it may be the start of an arrow")
        #expect(decoder.isWaiting)
        #expect(decoder.flush() == [.escape])
        #expect(!decoder.isWaiting)
        #expect(decoder.feed([0x1B, 0x1B]) == [.escape], "Esc twice: the first stands alone")
        #expect(decoder.flush() == [.escape])
    }

    @Test func hostileInputIsBoundedAndLosesNoLaterKey() {
        var decoder = KeyDecoder()
        let endless = [0x1B, UInt8(ascii: "[")] + Array(repeating: UInt8(ascii: "1"), count: 10_000)
        let keys = decoder.feed(endless + Array("q".utf8))
        #expect(keys.contains(.unknown))
        #expect(keys.last == .character("q"))
        #expect(!decoder.isWaiting)
        #expect(decodeAll([[0xFF, 0xC3, UInt8(ascii: "a")]]) == [.unknown, .unknown, .character("a")], "broken UTF-8")
    }
}
