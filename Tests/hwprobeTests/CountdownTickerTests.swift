import HAL
import HALFakes
import Testing
@testable import hwprobe

/// The status line's countdown: once a second on the flow's clock, and never over what replaced it.
@Suite struct CountdownTickerTests {
    @Test func countsDownOnceASecondOnTheFlowsClockRoundingUp() async {
        let clock = ManualClock()
        let ticker = CountdownTicker(clock: clock)
        let lines = Locked<[String?]>([])
        ticker.count("the scale", limit: .milliseconds(2500)) { line, current in
            if current() { lines.withLock { $0.append(line) } }
        }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers(1)
        #expect(lines.withLock { $0 } == ["waiting for the scale: 3 s left", "waiting for the scale: 2 s left",
                                          "waiting for the scale: 1 s left"])
        ticker.stop()
        #expect(clock.sleeperCount == 0, "stopping cancels the wait")
    }

    @Test func aNewCountdownOrStopMakesTheOldLinesStale() async {
        let clock = ManualClock()
        let ticker = CountdownTicker(clock: clock)
        let checks = Locked<[@Sendable () -> Bool]>([])
        let lines = Locked<[String?]>([])
        let show: CountdownTicker.Show = { line, current in
            checks.withLock { $0.append(current) }
            lines.withLock { $0.append(line) }
        }
        ticker.count("the mirror", limit: .seconds(5), show: show)
        await clock.waitForSleepers(1)
        ticker.count("the scale", limit: .seconds(9), show: show)
        await clock.waitForSleepers(1)
        var current = checks.withLock { $0.map { $0() } }
        #expect(current == [false, true])
        #expect(lines.withLock { $0 } == ["waiting for the mirror: 5 s left", "waiting for the scale: 9 s left"])
        ticker.stop()
        current = checks.withLock { $0.map { $0() } }
        #expect(current == [false, false])
        ticker.count(nil, limit: .zero, show: show)
        #expect(lines.withLock { $0.last } == .some(nil), "nothing to wait for clears the line at once")
        #expect(checks.withLock { $0.last?() } == true)
    }

    @Test func withoutAClockTheLineIsClearedInsteadOfCounted() {
        let ticker = CountdownTicker(clock: nil)
        let lines = Locked<[String?]>([])
        ticker.count("the scale", limit: .seconds(3)) { line, _ in lines.withLock { $0.append(line) } }
        #expect(lines.withLock { $0 } == [nil])
    }
}
