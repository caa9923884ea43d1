import HAL
import Testing

/// Bytes spelled as hexadecimal, the one way every layer spells them.
@Suite struct HexTests {
    @Test func bytesAreSpelledInOrderInEitherCaseWithAnySeparator() {
        let bytes: [UInt8] = [0x00, 0x0A, 0x4F, 0xA0, 0xFF]
        #expect(Hex.string(bytes) == "000A4FA0FF")
        #expect(Hex.string(bytes, .lower) == "000a4fa0ff")
        #expect(Hex.string(bytes, separator: " ") == "00 0A 4F A0 FF")
        #expect(Hex.string(bytes, .lower, separator: ", ") == "00, 0a, 4f, a0, ff")
        #expect(Hex.string([UInt8]()) == "" && Hex.string([UInt8](), separator: " ") == "")
        #expect(Hex.string([0x7E]) == "7E")
    }

    /// A slice, a sequence with no contiguous storage, and every byte value give the same text.
    @Test func everySequenceGivesTheSameText() {
        let all = (0...255).map(UInt8.init)
        let expected = all.map { Hex.byte($0) }.joined()
        #expect(Hex.string(all) == expected)
        #expect(Hex.string(all.dropFirst(3)) == String(expected.dropFirst(6)))
        #expect(Hex.string(AnySequence(all)) == expected)
        #expect(Hex.string(all.lazy.map { $0 }, .lower) == expected.lowercased())
        #expect(Hex.bytes(Hex.string(all, .lower)) == all)
    }
}
