import TestKit
import Flows
import Testing

@Suite("VB1 codes")
struct VB1CodeTests {
    @Test func splittingTheSpecVectorReproducesItsCodes() throws {
        #expect(try VB1Code.backupID(of: VB1Vector.container) == VB1Vector.id)
        let codes = try VB1Code.split(container: VB1Vector.container, into: 3)
        #expect(codes.map(\.text) == VB1Vector.codes)
        #expect(codes.map(\.data.count) == [58, 58, 58])
    }

    @Test func parsingTheSpecVectorCodes() throws {
        var joined: [UInt8] = []
        for (offset, text) in VB1Vector.codes.enumerated() {
            let code = try VB1Code(parsing: text)
            #expect(code.id == VB1Vector.id)
            #expect(code.index == offset + 1)
            #expect(code.count == 3)
            #expect(code.text == text)
            joined += code.data
        }
        #expect(joined == VB1Vector.container)
    }

    @Test func theSpacesAndColonsInsideDataAreDigits() throws {
        // The third code's data holds ':' and ' '; neither may be taken for a separator.
        let code = try VB1Code(parsing: VB1Vector.codes[2])
        #expect(code.data == Array(VB1Vector.container[116...]))
    }

    @Test("malformed codes are not backup codes", arguments: [
        "",
        "hello",
        "https://example.com/VB1:32966C6C:1/3:BB8",
        "vb1:32966C6C:1/3:BB8",
        "VB1",
        "VB1:",
        "VB1:32966C6C",
        "VB1:32966C6C:",
        "VB1:32966C6C:1/3",
        "VB1:32966C6C:1/3:",
        "VB1:32966c6c:1/3:BB8",
        "VB1:32966C6:1/3:BB8",
        "VB1:32966C6C0:1/3:BB8",
        "VB1:32966G6C:1/3:BB8",
        "VB1:32966C6C:4/3:BB8",
        "VB1:32966C6C:0/3:BB8",
        "VB1:32966C6C:1/0:BB8",
        "VB1:32966C6C:1/100:BB8",
        "VB1:32966C6C:100/100:BB8",
        "VB1:32966C6C:01/3:BB8",
        "VB1:32966C6C:1/03:BB8",
        "VB1:32966C6C:1/99999999999999999999999:BB8",
        "VB1:32966C6C:13:BB8",
        "VB1:32966C6C:1//3:BB8",
        "VB1:32966C6C:/3:BB8",
        "VB1:32966C6C:1/:BB8",
        "VB1:32966C6C:+1/3:BB8",
        "VB1:32966C6C:1/3:bb8",
        "VB1:32966C6C:1/3:BB8B",
        "VB1:32966C6C:1/3:GGW",
        "VB1:32966C6C:1/3:BB8\n",
        " VB1:32966C6C:1/3:BB8",
        "VB1:32966C6C:1 /3:BB8",
        "VB1:32966C6C:\u{661}/3:BB8",
    ])
    func malformed(text: String) {
        #expect {
            try VB1Code(parsing: text)
        } throws: { error in
            guard case VB1CodeError.notABackupCode = error else { return false }
            return true
        }
    }

    @Test func boundsThatAreFine() throws {
        let last = try VB1Code(parsing: "VB1:0123ABCD:99/99:BB8")
        #expect(last.index == 99)
        #expect(last.count == 99)
        #expect(last.data == Array("AB".utf8))
        let single = try VB1Code(parsing: "VB1:FFFFFFFF:1/1:00")
        #expect(single.data == [0])
    }

    @Test func splitRefusesCountsThatLeaveAPartEmpty() throws {
        #expect(throws: VB1CodeError.self) { try VB1Code.split(container: [1, 2, 3], into: 0) }
        #expect(throws: VB1CodeError.self) { try VB1Code.split(container: [UInt8](repeating: 1, count: 500), into: 100) }
        #expect(throws: VB1CodeError.self) { try VB1Code.split(container: [], into: 1) }
        // 4 bytes in 3 parts: ceil(4/3) = 2, so the parts are 2, 2, 0.
        #expect(throws: VB1CodeError.self) { try VB1Code.split(container: [1, 2, 3, 4], into: 3) }
        #expect(try VB1Code.split(container: [1, 2, 3], into: 3).map(\.data) == [[1], [2], [3]])
        #expect(try VB1Code.split(container: [1, 2, 3, 4, 5], into: 3).map(\.data) == [[1, 2], [3, 4], [5]])
        #expect(VB1Code.partSize(containerLength: 174, count: 3) == 58)
        #expect(VB1Code.partSize(containerLength: 175, count: 3) == 59)
        #expect(VB1Code.partSize(containerLength: 4, count: 3) == nil)
    }

    @Test func everySplitCoversTheContainerInOrder() throws {
        let container = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var refused: [Int] = []
        for n in 1...99 {
            guard VB1Code.partSize(containerLength: container.count, count: n) != nil else {
                // e.g. 37 parts of ceil(1000/37) = 28 bytes would leave the 37th empty.
                #expect(throws: VB1CodeError.self) { try VB1Code.split(container: container, into: n) }
                refused.append(n)
                continue
            }
            let codes = try VB1Code.split(container: container, into: n)
            #expect(codes.count == n)
            #expect(codes.allSatisfy { !$0.data.isEmpty && $0.count == n })
            #expect(codes.flatMap(\.data) == container)
            #expect(try codes.map { try VB1Code(parsing: $0.text) } == codes)
            let longest = codes.map { $0.text.utf8.count }.max()
            #expect(longest == VB1Code.longestTextLength(containerLength: container.count, count: n))
        }
        #expect(refused.contains(37))
        // While n·(n − 1) < length no part can come out empty: 1...32 always work for 1000 bytes.
        #expect(refused.allSatisfy { $0 > 32 })
    }

    @Test func choosingACodeCount() {
        // The vector's codes are 104 characters at n = 3; n = 2 needs 148, n = 4 needs 83.
        #expect(VB1Code.longestTextLength(containerLength: 174, count: 3) == 104)
        #expect(VB1Code.recommendedCount(containerLength: 174, maxCharactersPerCode: 104) == 3)
        #expect(VB1Code.recommendedCount(containerLength: 174, maxCharactersPerCode: 103) == 4)
        #expect(VB1Code.recommendedCount(containerLength: 174, maxCharactersPerCode: 148) == 2)
        #expect(VB1Code.recommendedCount(containerLength: 174, maxCharactersPerCode: 10_000) == 1)
        #expect(VB1Code.recommendedCount(containerLength: 174, maxCharactersPerCode: 20) == nil)
        #expect(VB1Code.recommendedCount(containerLength: 0, maxCharactersPerCode: 1000) == nil)
        // A large export for QR version 25-ish capacity (about 1,200 alphanumeric characters).
        let count = VB1Code.recommendedCount(containerLength: 4000, maxCharactersPerCode: 1200)
        #expect(count == 6)
    }

    @Test func buildingCodesChecksFields() {
        #expect(throws: VB1CodeError.self) { try VB1Code(id: "abcdef01", index: 1, count: 1, data: [1]) }
        #expect(throws: VB1CodeError.self) { try VB1Code(id: "ABCDEF01", index: 2, count: 1, data: [1]) }
        #expect(throws: VB1CodeError.self) { try VB1Code(id: "ABCDEF01", index: 1, count: 1, data: []) }
    }
}
