import TestKit
import Flows
import Testing

@Suite("VB1 code collector")
struct VB1CodeCollectorTests {
    /// A second, unrelated backup in two codes.
    private static let otherCodes: [String] = {
        let container = craftedContainer(logN: 10, r: 8, p: 1, tailLength: 40)
        return (try? VB1Code.split(container: container, into: 2).map(\.text)) ?? []
    }()

    @Test func theVectorCodesInEveryOrderOpenWithThePassword() throws {
        let orders = permutations(Array(VB1Vector.codes.indices))
        #expect(orders.count == 6)
        for order in orders {
            var collector = VB1CodeCollector()
            var outcomes: [VB1CodeCollector.Outcome] = []
            for position in order {
                outcomes.append(collector.accept(VB1Vector.codes[position]))
            }
            #expect(outcomes[0] == .accepted(order[0] + 1, of: 3))
            #expect(outcomes[1] == .accepted(order[1] + 1, of: 3))
            #expect(outcomes[2] == .completed(VB1Vector.container))
            #expect(collector.currentID == VB1Vector.id)
            #expect(collector.currentCount == 3)
            #expect(collector.scannedIndexes == [1, 2, 3])
            #expect(collector.completedContainer == VB1Vector.container)
        }
        // Opening once is enough: every order joined the same bytes.
        #expect(try VB1Container.open(VB1Vector.container, password: VB1Vector.password) == VB1Vector.plaintext)
    }

    @Test func progressIsVisibleForTiles() {
        var collector = VB1CodeCollector()
        #expect(collector.currentID == nil)
        #expect(collector.currentCount == nil)
        #expect(collector.scannedIndexes.isEmpty)
        #expect(collector.accept(VB1Vector.codes[1]) == .accepted(2, of: 3))
        #expect(collector.currentID == VB1Vector.id)
        #expect(collector.currentCount == 3)
        #expect(collector.scannedIndexes == [2])
    }

    @Test func duplicatesChangeNothing() {
        var collector = VB1CodeCollector()
        #expect(collector.accept(VB1Vector.codes[0]) == .accepted(1, of: 3))
        #expect(collector.accept(VB1Vector.codes[0]) == .duplicate)
        #expect(collector.accept(VB1Vector.codes[0]) == .duplicate)
        #expect(collector.scannedIndexes == [1])
        #expect(collector.accept(VB1Vector.codes[2]) == .accepted(3, of: 3))
        #expect(collector.accept(VB1Vector.codes[2]) == .duplicate)
        #expect(collector.accept(VB1Vector.codes[1]) == .completed(VB1Vector.container))
        // After completion the same codes are still just duplicates.
        #expect(collector.accept(VB1Vector.codes[1]) == .duplicate)
    }

    @Test func notBackupCodesAreNotCounted() {
        var collector = VB1CodeCollector()
        #expect({
            if case .notABackupCode = collector.accept("https://example.com") { return true }
            return false
        }())
        #expect({
            if case .notABackupCode = collector.accept("VB1:32966C6C:4/3:BB8") { return true }
            return false
        }())
        #expect(collector.currentID == nil)
        #expect(collector.accept(VB1Vector.codes[0]) == .accepted(1, of: 3))
        #expect({
            if case .notABackupCode = collector.accept("VB1:32966C6C:2/3:bad data") { return true }
            return false
        }())
        #expect(collector.scannedIndexes == [1])
    }

    @Test func anotherBackupsCodeIsNotCountedOnScreen() {
        var collector = VB1CodeCollector()
        #expect(collector.accept(VB1Vector.codes[0]) == .accepted(1, of: 3))
        let otherID = String(Self.otherCodes[0].dropFirst(4).prefix(8))
        #expect(collector.accept(Self.otherCodes[0]) == .otherBackup(otherID))
        #expect(collector.currentID == VB1Vector.id)
        #expect(collector.scannedIndexes == [1])
        #expect(collector.otherBackupIDs == [otherID])
        #expect(collector.accept(VB1Vector.codes[1]) == .accepted(2, of: 3))
        #expect(collector.accept(VB1Vector.codes[2]) == .completed(VB1Vector.container))
        // Finished: the other backup can no longer complete.
        #expect(collector.accept(Self.otherCodes[1]) == .otherBackup(otherID))
        #expect(collector.completedContainer == VB1Vector.container)
    }

    @Test func aStrayCodeSeenFirstDoesNotLockOutTheRealSet() {
        var collector = VB1CodeCollector()
        let strayID = String(Self.otherCodes[1].dropFirst(4).prefix(8))
        #expect(collector.accept(Self.otherCodes[1]) == .accepted(2, of: 2))
        #expect(collector.currentID == strayID)
        #expect(collector.accept(VB1Vector.codes[2]) == .otherBackup(VB1Vector.id))
        #expect(collector.accept(VB1Vector.codes[2]) == .otherBackup(VB1Vector.id))
        #expect(collector.accept(VB1Vector.codes[0]) == .otherBackup(VB1Vector.id))
        #expect(collector.scannedIndexes == [2])
        #expect(collector.accept(VB1Vector.codes[1]) == .completed(VB1Vector.container))
        #expect(collector.currentID == VB1Vector.id)
        #expect(collector.scannedIndexes == [1, 2, 3])
    }

    @Test func switchingToTheOtherBackup() {
        var collector = VB1CodeCollector()
        #expect(collector.accept(Self.otherCodes[0]) == .accepted(1, of: 2))
        #expect(collector.accept(VB1Vector.codes[0]) == .otherBackup(VB1Vector.id))
        let switched = collector.switchTo(backupID: VB1Vector.id)
        #expect(switched)
        #expect(collector.currentID == VB1Vector.id)
        #expect(collector.scannedIndexes == [1])
        #expect(collector.accept(VB1Vector.codes[1]) == .accepted(2, of: 3))
        let switchedToUnknown = collector.switchTo(backupID: "00000000")
        #expect(!switchedToUnknown)
    }

    @Test func conflictingDataForAnIndexIsDamaged() throws {
        var collector = VB1CodeCollector()
        #expect(collector.accept(VB1Vector.codes[0]) == .accepted(1, of: 3))
        let original = try VB1Code(parsing: VB1Vector.codes[0])
        var data = original.data
        data[10] ^= 0xFF
        let forged = try VB1Code(id: original.id, index: 1, count: 3, data: data)
        #expect({
            if case .damaged = collector.accept(forged.text) { return true }
            return false
        }())
        // The first data is kept: the real set still completes.
        #expect(collector.accept(VB1Vector.codes[1]) == .accepted(2, of: 3))
        #expect(collector.accept(VB1Vector.codes[2]) == .completed(VB1Vector.container))
    }

    @Test func theSameIDWithAnotherCountIsDamaged() throws {
        var collector = VB1CodeCollector()
        #expect(collector.accept(VB1Vector.codes[0]) == .accepted(1, of: 3))
        // The same container cut into four codes carries the same ID.
        let fourWay = try VB1Code.split(container: VB1Vector.container, into: 4)
        #expect(fourWay[1].id == VB1Vector.id)
        #expect({
            if case .damaged = collector.accept(fourWay[1].text) { return true }
            return false
        }())
        #expect(collector.currentCount == 3)
        #expect(collector.scannedIndexes == [1])
    }

    @Test func partsThatDoNotMatchTheirIDAreDamagedAndCanBeRescanned() throws {
        var collector = VB1CodeCollector()
        let codes = try VB1Code.split(container: VB1Vector.container, into: 3)
        let wrongSecond = try VB1Code(id: VB1Vector.id, index: 2, count: 3, data: [1, 2, 3])
        #expect(collector.accept(codes[0]) == .accepted(1, of: 3))
        #expect(collector.accept(wrongSecond) == .accepted(2, of: 3))
        #expect({
            if case .damaged = collector.accept(codes[2]) { return true }
            return false
        }())
        #expect(collector.completedContainer == nil)
        #expect(collector.scannedIndexes.isEmpty)
        #expect(collector.currentID == VB1Vector.id)
        for code in codes.dropLast() {
            #expect(collector.accept(code) == .accepted(code.index, of: 3))
        }
        #expect(collector.accept(codes[2]) == .completed(VB1Vector.container))
    }

    @Test func aSingleCodeBackupCompletesAtOnce() throws {
        let code = try VB1Code.split(container: VB1Vector.container, into: 1)[0]
        var collector = VB1CodeCollector()
        #expect(collector.accept(code.text) == .completed(VB1Vector.container))
    }

    @Test func resetStartsOver() {
        var collector = VB1CodeCollector()
        _ = collector.accept(VB1Vector.codes[0])
        _ = collector.accept(Self.otherCodes[0])
        collector.reset()
        #expect(collector.currentID == nil)
        #expect(collector.scannedIndexes.isEmpty)
        #expect(collector.otherBackupIDs.isEmpty)
        #expect(collector.accept(Self.otherCodes[0]) == .accepted(1, of: 2))
    }

    @Test func manyStrayBackupsDoNotStopTheRealOne() throws {
        var collector = VB1CodeCollector()
        #expect(collector.accept(VB1Vector.codes[0]) == .accepted(1, of: 3))
        for seed in 0..<40 {
            let id = VB1Code.hexForTests(UInt32(seed) &* 0x9E37_79B9)
            let stray = try VB1Code(id: id, index: 1, count: 5, data: [UInt8(seed)])
            #expect(collector.accept(stray) == .otherBackup(id))
        }
        #expect(collector.otherBackupIDs.count < VB1CodeCollector.maximumTrackedBackups)
        #expect(collector.accept(VB1Vector.codes[1]) == .accepted(2, of: 3))
        #expect(collector.accept(VB1Vector.codes[2]) == .completed(VB1Vector.container))
    }

    @Test("random plaintexts round-trip through codes", arguments: [1, 2, 3, 5, 8, 13, 40, 99])
    func randomRoundTrip(count: Int) throws {
        var generator = SplitMix64(state: UInt64(count))
        for _ in 0..<3 {
            let length = Int.random(in: 0...600, using: &generator)
            let plaintext = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let container = try VB1Container.write(plaintext: plaintext, password: "pässword \(length)",
                                                   parameters: VB1Vector.parameters)
            guard VB1Code.partSize(containerLength: container.bytes.count, count: count) != nil else {
                #expect(throws: VB1CodeError.self) { try VB1Code.split(container: container.bytes, into: count) }
                continue
            }
            var texts = try VB1Code.split(container: container.bytes, into: count).map(\.text)
            texts.shuffle(using: &generator)
            var collector = VB1CodeCollector()
            var result: [UInt8]?
            for (position, text) in texts.enumerated() {
                switch collector.accept(text) {
                case .completed(let bytes):
                    #expect(position == texts.count - 1)
                    result = bytes
                case .accepted:
                    #expect(position < texts.count - 1)
                default:
                    Issue.record("unexpected outcome for \(text)")
                }
            }
            let joined = try #require(result)
            #expect(try VB1Container.open(joined, password: "pa\u{308}ssword \(length)") == plaintext)
        }
    }
}

extension VB1Code {
    static func hexForTests(_ value: UInt32) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 8 - text.count) + text
    }
}
