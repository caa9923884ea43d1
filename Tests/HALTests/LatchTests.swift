import HAL
import HALFakes
import Testing

@Suite struct LatchTests {
    @Test func waitersGoOnOnceItOpensAndLaterWaitsReturnAtOnce() async {
        let latch = Latch()
        let waiter = Task { await latch.wait(); return latch.isOpen }
        latch.open()
        #expect(await waiter.value)
        await latch.wait()
        latch.open() // twice is harmless
        #expect(latch.isOpen)
    }

    @Test func aBoundedWaitGivesUpAtItsLimitOnTheClock() async {
        let latch = Latch()
        let clock = ManualClock()
        let waiter = Task { await latch.wait(atMost: .seconds(1), on: clock) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        #expect(await waiter.value == false)
        #expect(!latch.isOpen)
    }

    @Test func aBoundedWaitSeesTheOpening() async {
        let latch = Latch()
        let clock = ManualClock()
        let waiter = Task { await latch.wait(atMost: .seconds(1), on: clock) }
        latch.open()
        #expect(await waiter.value)
    }

    @Test func aCancelledWaiterReturnsWhileTheLatchStaysShut() async {
        let latch = Latch()
        let waiter = Task { await latch.wait(); return latch.isOpen }
        waiter.cancel()
        #expect(await waiter.value == false)
    }
}
