import CLinuxShims
import Glibc

/// Signals turned into bytes on a pipe (the self-pipe pattern): the handler, written in C, only
/// writes the signal's number, and ordinary code reads it whenever it likes. Nothing runs in
/// signal context, so the code that reacts may lock, allocate and print.
package final class SignalPipe: Sendable {
    private let readEnd: FileDescriptor
    private let writeEnd: FileDescriptor

    /// Routes each of `signals` to the pipe. Signals arriving together are each delivered (the
    /// pipe holds 64 KiB of them; a full pipe drops the newest, which is the same signal again).
    package init(routing signals: [Int32]) throws(Errno) {
        var ends: [Int32] = [0, 0]
        _ = try check(hal_pipe_nonblocking(&ends))
        readEnd = FileDescriptor(rawValue: ends[0])
        writeEnd = FileDescriptor(rawValue: ends[1])
        for signal in signals {
            _ = try check(hal_signal_to_pipe(signal, writeEnd.rawValue))
        }
    }

    /// The next signal, waiting at most `timeoutMilliseconds` (-1: for ever); nil on timeout.
    package func next(timeoutMilliseconds: Int32) -> Int32? {
        var byte: UInt8 = 0
        while true {
            let n = Glibc.read(readEnd.rawValue, &byte, 1)
            if n == 1 { return Int32(byte) }
            if n < 0, errno == EINTR { continue }
            guard n < 0, errno == EAGAIN else { return nil }
            guard let ready = try? readEnd.poll(for: .readable, timeoutMilliseconds: timeoutMilliseconds), !ready.isEmpty else {
                return nil
            }
        }
    }

    /// Routes `signal` to this pipe again (after it was put back to its default for a moment).
    package func reroute(_ signal: Int32) { _ = hal_signal_to_pipe(signal, writeEnd.rawValue) }

    /// Sends `signal` to this pipe as if it had arrived (for a second reader to wake, or tests).
    package func post(_ signal: Int32) {
        var byte = UInt8(truncatingIfNeeded: signal)
        _ = Glibc.write(writeEnd.rawValue, &byte, 1)
    }

    /// Lets `signals` reach the calling thread (see `hal_signal_unblock`).
    package static func unblock(_ signals: [Int32]) {
        for signal in signals { _ = hal_signal_unblock(signal) }
    }

    /// Back to the default action for `signal`.
    package static func restoreDefault(_ signal: Int32) { _ = hal_signal_default(signal) }
    /// Ignore `signal` altogether.
    package static func ignore(_ signal: Int32) { _ = hal_signal_ignore(signal) }
}
