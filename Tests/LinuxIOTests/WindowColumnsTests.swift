import Glibc
import Testing
@testable import LinuxIO

/// windowColumns reads the width alone: nil on a pipe and on a pty that reports no columns, the
/// columns of a pty that reports columns but 0 rows, where windowSize has nothing to give, which
/// is the case it exists for.
@Suite struct WindowColumnsTests {
    @Test func aPipeHasNoColumns() throws {
        let (read, write) = try makePipe()
        defer { read.close(); write.close() }
        #expect(read.windowColumns() == nil)
        #expect(write.windowColumns() == nil)
        #expect(try closedDescriptor().windowColumns() == nil)
    }

    @Test func columnsWithoutRowsAreStillColumns() throws {
        let (master, slave) = try openPseudoTerminal()
        defer { slave.close(); master.close() }
        #expect(slave.windowColumns() == nil, "a new pty is 0 × 0")
        var size = winsize(ws_row: 0, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0)
        try master.ioctl(UInt(TIOCSWINSZ), &size)
        #expect(slave.windowColumns() == 80)
        #expect(master.windowColumns() == 80)
        #expect(slave.windowSize() == nil, "0 rows: windowSize has no answer, windowColumns does")
        size = winsize(ws_row: 24, ws_col: 132, ws_xpixel: 0, ws_ypixel: 0)
        try master.ioctl(UInt(TIOCSWINSZ), &size)
        #expect(slave.windowColumns() == 132)
        #expect(slave.windowSize() == WindowSize(rows: 24, columns: 132))
        size = winsize(ws_row: 24, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0)
        try master.ioctl(UInt(TIOCSWINSZ), &size)
        #expect(slave.windowColumns() == nil, "rows without columns are no width")
    }
}
