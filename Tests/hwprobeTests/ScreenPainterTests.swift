import Flows
import LinuxIO
import Testing
@testable import hwprobe

@Suite struct ScreenPainterTests {
    static let escape = "\u{1B}["

    @Test func theLayoutFillsTheTerminalExactly() {
        let size = WindowSize(rows: 12, columns: 40)
        let rows = ScreenPainter.layout(frame: ["a", "b", "c"], logs: ["log 1", "log 2"], status: "status", hints: "hints", size: size)
        #expect(rows.count == 12)
        #expect(rows[0] == "" && rows[1] == "a" && rows[3] == "c")
        #expect(Array(rows.suffix(4)) == ["log 1", "log 2", "status", "hints"])
        // A frame taller than the terminal keeps its top and the hints.
        let tall = ScreenPainter.layout(frame: (1...30).map(String.init), logs: ["x"], status: nil, hints: "hints",
                                        size: WindowSize(rows: 8, columns: 40))
        #expect(tall.count == 8 && tall.last == "hints" && tall.contains("1"))
        #expect(!tall.contains("x"), "no room left for logs")
        // Older log lines give way to newer ones.
        let logs = ScreenPainter.layout(frame: [], logs: (1...9).map { "log \($0)" }, status: nil, hints: nil, size: size)
        #expect(logs.suffix(ScreenPainter.logRows) == ["log 6", "log 7", "log 8", "log 9"])
    }

    @Test func onlyChangedRowsAreSentAndAResizeRepaintsAll() {
        var painter = ScreenPainter()
        let size = WindowSize(rows: 4, columns: 20)
        let first = painter.paint(["", "one", "two", "hints"], size: size)
        #expect(first.hasPrefix(Self.escape + "H" + Self.escape + "2J"), "the first paint clears")
        #expect(first.contains(Self.escape + "2;1Hone" + Self.escape + "K"))
        let second = painter.paint(["", "one", "TWO", "hints"], size: size)
        #expect(second == Self.escape + "3;1HTWO" + Self.escape + "K", "one row changed, one row sent")
        #expect(painter.paint(["", "one", "TWO", "hints"], size: size).isEmpty)
        let resized = painter.paint(["", "one", "TWO", "hints"], size: WindowSize(rows: 4, columns: 10))
        #expect(resized.hasPrefix(Self.escape + "H" + Self.escape + "2J") && resized.contains("TWO"), "a new size repaints everything")
        painter.invalidate()
        #expect(painter.paint(["", "one", "TWO", "hints"], size: WindowSize(rows: 4, columns: 10)).contains("one"))
        #expect(!resized.contains("\n"), "rows are addressed, never scrolled into")
    }
}
