import CLinuxShims
import Glibc

/// A terminal's line discipline settings (termios), read and applied as one value so that a
/// program can always put back exactly what it found.
package struct TerminalModes: Sendable {
    fileprivate var settings: termios

    /// What the terminal on `descriptor` is set to now; `Errno.notTTY` if it is no terminal.
    package static func of(_ descriptor: FileDescriptor) throws(Errno) -> TerminalModes {
        var settings = termios()
        guard tcgetattr(descriptor.rawValue, &settings) == 0 else { throw Errno.current }
        return TerminalModes(settings: settings)
    }

    /// Applies these settings. `discardingInput` also drops typed-ahead input (what a password
    /// prompt wants, so keys pressed before it appeared are not taken as the password).
    package func apply(to descriptor: FileDescriptor, discardingInput: Bool = false) throws(Errno) {
        var settings = settings
        while tcsetattr(descriptor.rawValue, discardingInput ? TCSAFLUSH : TCSADRAIN, &settings) != 0 {
            if errno != EINTR { throw Errno.current }
        }
    }

    /// Keys one at a time, not echoed, Return as `\r`, nothing held back for line editing; the
    /// kernel still turns Ctrl-C, Ctrl-\ and Ctrl-Z into signals (so one interrupt policy covers
    /// a key and a `kill` alike), and output still turns `\n` into `\r\n`.
    package var keyByKey: TerminalModes {
        var raw = settings
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ECHONL | IEXTEN)
        raw.c_iflag &= ~tcflag_t(ICRNL | INLCR | IGNCR | IXON | ISTRIP)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        return TerminalModes(settings: raw)
    }

    /// Whether typed characters are echoed.
    package var echoes: Bool { settings.c_lflag & tcflag_t(ECHO) != 0 }
    /// Whether input is collected line by line (cooked).
    package var lineByLine: Bool { settings.c_lflag & tcflag_t(ICANON) != 0 }
}

/// A terminal's size in character cells.
package struct WindowSize: Hashable, Sendable {
    package var rows: Int
    package var columns: Int

    package init(rows: Int, columns: Int) {
        self.rows = rows
        self.columns = columns
    }
}

extension FileDescriptor {
    /// Whether this descriptor is a terminal.
    package var isTerminal: Bool { isatty(rawValue) == 1 }

    /// The terminal's size (TIOCGWINSZ); nil when it is no terminal or reports 0 × 0.
    package func windowSize() -> WindowSize? {
        var size = winsize()
        guard hal_ioctl(rawValue, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return nil }
        return WindowSize(rows: Int(size.ws_row), columns: Int(size.ws_col))
    }

    /// The terminal's width alone (TIOCGWINSZ), for output that wraps: some terminals (a serial
    /// console, an emulator mid-resize) report columns but 0 rows. Nil when not a terminal.
    package func windowColumns() -> Int? {
        var size = winsize()
        guard hal_ioctl(rawValue, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    package static let standardInput = FileDescriptor(rawValue: STDIN_FILENO)
    package static let standardOutput = FileDescriptor(rawValue: STDOUT_FILENO)
    package static let standardError = FileDescriptor(rawValue: STDERR_FILENO)
}
