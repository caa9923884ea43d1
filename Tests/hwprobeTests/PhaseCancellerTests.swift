import Synchronization
import Testing
@testable import hwprobe

/// An interrupt between two phases of a command must still cancel the next one (the import soak
/// found a SIGTERM between the scan and the password prompt lost: the prompt waited for ever).
@Suite struct PhaseCancellerTests {
    final class Count: Sendable {
        let value = Mutex(0)
        func bump() { value.withLock { $0 += 1 } }
        var now: Int { value.withLock { $0 } }
    }

    @Test func anInterruptBetweenPhasesCancelsTheNextPhaseAsItBegins() {
        let canceller = PhaseCanceller()
        let scan = Count(), decrypt = Count()
        canceller.begin { scan.bump() }
        canceller.end()
        canceller.interrupt() // after the scan, before the decrypt phase
        #expect(scan.now == 0, "an ended phase is not cancelled")
        canceller.begin { decrypt.bump() }
        #expect(decrypt.now == 1, "the phase that begins after the interrupt is cancelled at once")
    }

    @Test func anInterruptCancelsTheRunningPhaseOnce() {
        let canceller = PhaseCanceller()
        let phase = Count()
        canceller.begin { phase.bump() }
        canceller.interrupt()
        #expect(phase.now == 1)
        canceller.end()
        #expect(phase.now == 1)
    }

    @Test func withoutAnInterruptNothingIsCancelled() {
        let canceller = PhaseCanceller()
        let phase = Count()
        canceller.begin { phase.bump() }
        canceller.end()
        canceller.begin { phase.bump() }
        #expect(phase.now == 0)
    }
}
