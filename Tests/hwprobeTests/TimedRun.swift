import Foundation
@testable import hwprobe

/// A command run in-process, with how long it took on the wall clock: for the peer tests, where
/// "at once" and "within the window" are claims about real time.
struct TimedRun {
    var code: Int32
    var out: String
    var err: String
    var seconds: Double

    var lines: [String] { err.split(separator: "\n").map(String.init) }

    static func run(_ arguments: [String]) async -> TimedRun {
        let captured = CapturedConsole()
        let clock = ContinuousClock()
        let start = clock.now
        let code = await HWProbe(console: captured.console, listSources: .empty).run(arguments)
        let elapsed = start.duration(to: clock.now)
        return TimedRun(code: code, out: captured.stdout, err: captured.stderr,
                        seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
}
