import Dispatch
import Glibc
import Testing
@testable import LinuxIO

/// SignalPipe turns real signals (raised on this thread, so delivered before `raise` returns) into
/// bytes read in order by `next`, returns nil at a deadline with nothing pending, wakes a waiting
/// reader when a signal is posted, and `ignore`/`reroute` take a signal off the pipe and back.
///
/// The C handler writes to the last pipe routed to, process-wide, and a SignalPipe keeps its pipe
/// for the life of the process; the tests therefore run one after another and leave the signals
/// they used ignored.
@Suite(.serialized) struct SignalPipeTests {
    /// Runs `body` with `signals` unblocked on this thread, then ignores and blocks them again.
    static func withSignals(_ signals: [Int32], _ body: () throws -> Void) rethrows {
        var set = sigset_t()
        var previous = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        pthread_sigmask(SIG_BLOCK, nil, &previous)
        SignalPipe.unblock(signals)
        defer {
            for signal in signals { SignalPipe.ignore(signal) }
            pthread_sigmask(SIG_SETMASK, &previous, nil)
        }
        try body()
    }

    @Test func aRaisedSignalIsReadFromThePipe() throws {
        try Self.withSignals([SIGUSR2]) {
            let pipe = try SignalPipe(routing: [SIGUSR2])
            #expect(pipe.next(timeoutMilliseconds: 0) == nil, "nothing raised yet")
            #expect(raise(SIGUSR2) == 0)
            #expect(pipe.next(timeoutMilliseconds: 0) == SIGUSR2)
            #expect(pipe.next(timeoutMilliseconds: 0) == nil, "each signal read once")
        }
    }

    @Test func signalsArriveInTheOrderRaised() throws {
        try Self.withSignals([SIGUSR2, SIGPWR]) {
            let pipe = try SignalPipe(routing: [SIGUSR2, SIGPWR])
            #expect(raise(SIGPWR) == 0)
            #expect(raise(SIGUSR2) == 0)
            #expect(raise(SIGPWR) == 0)
            pipe.post(SIGUSR2)
            let read = (0..<4).map { _ in pipe.next(timeoutMilliseconds: 0) }
            #expect(read == [SIGPWR, SIGUSR2, SIGPWR, SIGUSR2])
            #expect(pipe.next(timeoutMilliseconds: 0) == nil)
        }
    }

    @Test func aPostedSignalWakesAWaitingReader() throws {
        try Self.withSignals([SIGUSR2]) {
            let pipe = try SignalPipe(routing: [SIGUSR2])
            DispatchQueue.global().async { pipe.post(SIGUSR2) }
            #expect(pipe.next(timeoutMilliseconds: -1) == SIGUSR2, "waits for ever until the post")
        }
    }

    @Test func anIgnoredSignalIsNotOnThePipeUntilRerouted() throws {
        try Self.withSignals([SIGUSR2]) {
            let pipe = try SignalPipe(routing: [SIGUSR2])
            SignalPipe.ignore(SIGUSR2)
            #expect(raise(SIGUSR2) == 0)
            #expect(pipe.next(timeoutMilliseconds: 0) == nil)
            pipe.reroute(SIGUSR2)
            #expect(raise(SIGUSR2) == 0)
            #expect(pipe.next(timeoutMilliseconds: 0) == SIGUSR2)
        }
    }

    @Test func aSignalThatCannotBeCaughtIsRefused() {
        #expect(throws: Errno.invalid) { _ = try SignalPipe(routing: [SIGKILL]) }
    }
}
