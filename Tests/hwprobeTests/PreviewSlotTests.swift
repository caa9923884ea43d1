import LinuxIO
import Testing
@testable import hwprobe

/// The preview slot: one claim at a time, rows only for the layout they were made for.
@Suite struct PreviewSlotTests {
    static let wide = WindowSize(rows: 36, columns: 120)

    @Test func anEndedOrReplacedClaimCannotBringThePreviewBack() {
        var slot = PreviewSlot()
        let first = slot.claim()
        let began = slot.begin(first, aspect: 4.0 / 3)
        #expect(began)
        let beganAgain = slot.begin(first, aspect: 4.0 / 3)
        #expect(!beganAgain, "the same aspect changes nothing")
        let beganWithoutShape = slot.begin(first, aspect: .nan)
        #expect(!beganWithoutShape)
        let second = slot.claim()
        #expect(!slot.isShown, "a new claim starts with nothing drawn")
        let beganByReplaced = slot.begin(first, aspect: 16.0 / 9)
        #expect(!beganByReplaced)
        let beganByNew = slot.begin(second, aspect: 16.0 / 9)
        #expect(beganByNew)
        let endedByReplaced = slot.end(first)
        #expect(!endedByReplaced)
        #expect(slot.isShown)
        let endedByHolder = slot.end(second)
        #expect(endedByHolder)
        #expect(!slot.isShown)
        let beganAfterEnd = slot.begin(second, aspect: 4.0 / 3)
        #expect(!beganAfterEnd, "an ended claim draws nothing")
    }

    @Test func rowsAreShownOnlyForTheLayoutTheyWereMadeFor() throws {
        var slot = PreviewSlot()
        let claim = slot.claim()
        _ = slot.begin(claim, aspect: 4.0 / 3)
        let beside = try #require(slot.beside(size: Self.wide))
        #expect(slot.layout == nil, "no place until a paint puts it somewhere")
        let blank = slot.placing(in: ["frame"], beside: beside, size: Self.wide)
        #expect(slot.layout == beside)
        #expect(blank.count == beside.rows && blank[0].hasPrefix("frame") && blank.allSatisfy { $0.hasSuffix("G") })
        let made = Array(repeating: "▀▀", count: beside.rows)
        let other = PreviewLayout(placement: .above, columns: 20, imageRows: 5)
        let tookForOtherLayout = slot.show(claim, rows: made, for: other)
        #expect(!tookForOtherLayout)
        let tookForItsLayout = slot.show(claim, rows: made, for: beside)
        #expect(tookForItsLayout)
        let drawn = slot.placing(in: ["frame"], beside: beside, size: Self.wide)
        #expect(drawn.allSatisfy { $0.hasSuffix("▀▀") })
        // A narrower terminal: no room beside, nor above a frame this tall; the rows wait.
        let small = WindowSize(rows: 16, columns: 50)
        let squeezed = slot.placing(in: Array(repeating: "frame", count: 10), beside: slot.beside(size: small), size: small)
        #expect(squeezed == Array(repeating: "frame", count: 10))
        #expect(slot.layout == nil)
        let tookForOldLayout = slot.show(claim, rows: made, for: beside)
        #expect(!tookForOldLayout, "rows for the old layout are not taken")
    }
}
