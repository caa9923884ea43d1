import Glibc
import Testing
@testable import LinuxIO

/// TerminalModes and the terminal questions of FileDescriptor on a real pseudo-terminal: the modes
/// read back are the ones applied, key-by-key input turns off echo and line editing and can be put
/// back exactly, a pipe is no terminal (ENOTTY, no size), and the size is the one the pty was given.
@Suite struct TerminalModesTests {
    @Test func keyByKeyIsAppliedAndTheOriginalRestored() throws {
        let (master, slave) = try openPseudoTerminal()
        defer { slave.close(); master.close() }
        let original = try TerminalModes.of(slave)
        #expect(original.echoes && original.lineByLine, "a new pty is cooked and echoes")
        let raw = original.keyByKey
        #expect(!raw.echoes && !raw.lineByLine)
        #expect(original.echoes, "keyByKey is a new value; the original is untouched")
        try raw.apply(to: slave)
        let applied = try TerminalModes.of(slave)
        #expect(!applied.echoes && !applied.lineByLine)
        var settings = termios()
        #expect(tcgetattr(slave.rawValue, &settings) == 0)
        #expect(settings.c_lflag & tcflag_t(IEXTEN | ECHONL) == 0)
        #expect(settings.c_iflag & tcflag_t(ICRNL | IXON) == 0)
        #expect(settings.c_lflag & tcflag_t(ISIG) != 0, "Ctrl-C still makes a signal")
        #expect(settings.c_oflag & tcflag_t(OPOST) != 0, "output still turns \\n into \\r\\n")
        try original.apply(to: slave)
        let restored = try TerminalModes.of(slave)
        #expect(restored.echoes && restored.lineByLine)
    }

    /// Key by key, one byte typed is one byte read, at once, not echoed back.
    @Test func keyByKeyDeliversEachKeyAtOnce() throws {
        let (master, slave) = try openPseudoTerminal()
        defer { slave.close(); master.close() }
        try TerminalModes.of(slave).keyByKey.apply(to: slave)
        try master.writeAll(Array("q".utf8))
        #expect(try slave.poll(for: .readable, timeoutMilliseconds: -1) == .readable)
        #expect(try readExactly(slave, 1) == Array("q".utf8))
        #expect(try master.poll(for: .readable, timeoutMilliseconds: 0).isEmpty, "nothing echoed")
    }

    @Test func discardingInputDropsWhatWasTypedAhead() throws {
        let (master, slave) = try openPseudoTerminal()
        defer { slave.close(); master.close() }
        let raw = try TerminalModes.of(slave).keyByKey
        try raw.apply(to: slave)
        try master.writeAll(Array("typed ahead".utf8))
        #expect(try slave.poll(for: .readable, timeoutMilliseconds: -1) == .readable)
        try raw.apply(to: slave, discardingInput: true)
        #expect(try slave.poll(for: .readable, timeoutMilliseconds: 0).isEmpty)
    }

    @Test func aPipeIsNoTerminal() throws {
        let (read, write) = try makePipe()
        defer { read.close(); write.close() }
        #expect(throws: Errno.notTTY) { _ = try TerminalModes.of(read) }
        let (master, slave) = try openPseudoTerminal()
        defer { slave.close(); master.close() }
        let modes = try TerminalModes.of(slave)
        #expect(throws: Errno.notTTY) { try modes.apply(to: write) }
        #expect(!read.isTerminal && !write.isTerminal)
        #expect(slave.isTerminal && master.isTerminal)
        #expect(read.windowSize() == nil)
    }

    @Test func theSizeIsTheOneThePtyWasGiven() throws {
        let (master, slave) = try openPseudoTerminal()
        defer { slave.close(); master.close() }
        #expect(slave.windowSize() == nil, "a new pty is 0 × 0, which is no size")
        var size = winsize(ws_row: 40, ws_col: 132, ws_xpixel: 0, ws_ypixel: 0)
        try master.ioctl(UInt(TIOCSWINSZ), &size)
        #expect(slave.windowSize() == WindowSize(rows: 40, columns: 132))
        #expect(master.windowSize() == WindowSize(rows: 40, columns: 132))
        size = winsize(ws_row: 0, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0)
        try slave.ioctl(UInt(TIOCSWINSZ), &size)
        #expect(slave.windowSize() == nil, "no rows is no size")
    }

    @Test func theStandardDescriptorsAreZeroOneTwo() {
        #expect(FileDescriptor.standardInput.rawValue == 0)
        #expect(FileDescriptor.standardOutput.rawValue == 1)
        #expect(FileDescriptor.standardError.rawValue == 2)
    }
}
