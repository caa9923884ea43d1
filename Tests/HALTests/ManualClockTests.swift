import HAL
import HALFakes
import Synchronization
import Testing

@Suite struct ManualClockTests {
    @Test func sleepersWakeOnlyWhenTimeReachesThem() async throws {
        let clock = ManualClock()
        let woke = Locked<[String]>([])
        let late = Task { try await clock.sleep(for: .seconds(5)); woke.withLock { $0.append("late") } }
        let early = Task { try await clock.sleep(for: .seconds(2)); woke.withLock { $0.append("early") } }
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(1))
        await Task.yield()
        #expect(woke.withLock { $0 }.isEmpty)
        clock.advance(by: .seconds(1))
        try await early.value
        #expect(woke.withLock { $0 } == ["early"])
        #expect(clock.nextDeadline == ManualClock.Instant(offset: .seconds(5)))
        clock.advanceToNextDeadline()
        try await late.value
        #expect(woke.withLock { $0 } == ["early", "late"])
        #expect(clock.now.offset == .seconds(5))
        #expect(clock.sleeperCount == 0)
    }

    @Test func cancellingASleeperEndsItWithCancellationError() async {
        let clock = ManualClock()
        let task = Task { try await clock.sleep(for: .seconds(60)) }
        await clock.waitForSleepers(1)
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(clock.sleeperCount == 0)
    }

    @Test func aDeadlineInThePastReturnsAtOnce() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(3))
        try await clock.sleep(until: ManualClock.Instant(offset: .seconds(1)))
        #expect(clock.sleeperCount == 0)
    }
}
