import TestKit
import Flows
import Testing

@Suite("Base45 (RFC 9285)")
struct Base45Tests {
    @Test("RFC 9285 examples encode", arguments: [
        ("AB", "BB8"),
        ("Hello!!", "%69 VD92EX0"),
        ("base-45", "UJCLQE7W581"),
        ("ietf!", "QED8WEX0"),
    ])
    func encodesExamples(input: String, expected: String) {
        #expect(Base45.encode(Array(input.utf8)) == expected)
    }

    @Test("RFC 9285 examples decode", arguments: [
        ("QED8WEX0", "ietf!"),
        ("BB8", "AB"),
        ("%69 VD92EX0", "Hello!!"),
        ("UJCLQE7W581", "base-45"),
    ])
    func decodesExamples(input: String, expected: String) throws {
        #expect(try Base45.decode(input) == Array(expected.utf8))
    }

    @Test func emptyRoundTrips() throws {
        #expect(Base45.encode([UInt8]()) == "")
        #expect(try Base45.decode("") == [])
    }

    @Test func rejectsCharactersOutsideTheAlphabet() {
        #expect(throws: Base45Error.invalidCharacter(offset: 0)) { try Base45.decode("aB8") }
        #expect(throws: Base45Error.invalidCharacter(offset: 2)) { try Base45.decode("BB=") }
        #expect(throws: Base45Error.invalidCharacter(offset: 1)) { try Base45.decode("B\u{E9}") }
        #expect(throws: Base45Error.invalidCharacter(offset: 3)) { try Base45.decode("BB8\n\n") }
    }

    @Test func rejectsImpossibleLengths() {
        #expect(throws: Base45Error.invalidLength(1)) { try Base45.decode("B") }
        #expect(throws: Base45Error.invalidLength(4)) { try Base45.decode("BB8B") }
    }

    @Test func rejectsOutOfRangeGroups() throws {
        // 16 + 16·45 + 32·45² = 65536, one more than two bytes hold.
        #expect(throws: Base45Error.valueOutOfRange(offset: 0)) { try Base45.decode("GGW") }
        #expect(try Base45.decode("FGW") == [0xFF, 0xFF])
        // A trailing pair must fit in one byte: "U5" = 30 + 5·45 = 255 is the largest.
        #expect(try Base45.decode("U5") == [0xFF])
        #expect(throws: Base45Error.valueOutOfRange(offset: 3)) { try Base45.decode("BB8V5") }
    }

    @Test func roundTripsEveryByteAndManyLengths() throws {
        let everyByte = (0...255).map { UInt8($0) }
        #expect(try Base45.decode(Base45.encode(everyByte)) == everyByte)
        var generator = SplitMix64(state: 45)
        for length in 0..<64 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let text = Base45.encode(bytes)
            #expect(text.utf8.count == Base45.encodedLength(byteCount: length))
            #expect(try Base45.decode(text) == bytes)
        }
    }
}
