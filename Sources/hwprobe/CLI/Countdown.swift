/// The "N s left" of a wait: a person watching a silent terminal cannot tell a scan from a hang.
enum Countdown {
    /// Calls `show` with the whole seconds left (rounded up) at the start and, when `ticking`,
    /// each time that number drops, on `clock`, until `duration` has passed. Returns true when it
    /// has, false when the task was cancelled first. Each tick sleeps until an instant computed
    /// from the start, so the ticks do not drift and the end is exactly `duration` after the call.
    ///
    /// Tick on a terminal, where the status line is rewritten in place; elsewhere (a log, a pipe)
    /// every tick would be a line of its own, so the wait is said once, with its length.
    static func run<C: Clock<Duration>>(_ duration: Duration, on clock: C, ticking: Bool = true,
                                        show: (Int) -> Void) async -> Bool {
        let end = clock.now.advanced(by: duration)
        while true {
            let left = clock.now.duration(to: end)
            if left <= .zero { return true }
            let seconds = max(1, Int((left / .seconds(1)).rounded(.up)))
            show(seconds)
            do {
                try await clock.sleep(until: ticking ? end.advanced(by: .seconds(-(seconds - 1))) : end, tolerance: nil)
            } catch {
                return false
            }
        }
    }
}
