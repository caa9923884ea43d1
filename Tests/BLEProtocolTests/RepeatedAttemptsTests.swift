import BLEProtocol
import Testing

@Suite struct RepeatedAttemptsTests {
    @Test func theWaitDoublesWithEachFailureUpToItsCap() {
        var attempts = RepeatedAttempts()
        #expect(attempts.waitEnds(now: .zero) == nil)
        var now = Duration.zero
        var expected = Duration.seconds(2)
        for _ in 0..<8 {
            attempts.recordFailure(now: now)
            #expect(attempts.waitEnds(now: now) == now + expected)
            now += .milliseconds(1)
            expected = min(expected * 2, .seconds(64))
        }
    }

    @Test func aQuietSpellShrinksItAgainAndSuccessClearsIt() {
        var attempts = RepeatedAttempts()
        for second in 0..<4 { attempts.recordFailure(now: .seconds(second)) }
        // 4 failures: 16 s after the last one.
        #expect(attempts.waitEnds(now: .seconds(3)) == .seconds(19))
        // Long after: the next failure waits less than a fifth one in a row would (32 s).
        attempts.recordFailure(now: .seconds(200))
        let wait = (attempts.waitEnds(now: .seconds(200)) ?? .zero) - .seconds(200)
        #expect(wait < .seconds(32))
        attempts.recordSuccess()
        #expect(attempts.waitEnds(now: .seconds(200)) == nil && attempts.failures == 0)
    }
}
