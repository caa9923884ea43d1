import HAL
import Testing

/// One conversion from `Duration` to the units files, syscalls and JSON use.
@Suite struct DurationUnitsTests {
    @Test func wholeUnitsDropTheFractionTowardZero() {
        #expect(Duration.milliseconds(1500).wholeMilliseconds == 1500)
        #expect(Duration.microseconds(1999).wholeMilliseconds == 1)
        #expect(Duration.nanoseconds(1500).wholeMicroseconds == 1)
        #expect(Duration.seconds(3).wholeNanoseconds == 3_000_000_000)
        #expect(Duration.milliseconds(-1500).wholeMilliseconds == -1500)
        #expect(Duration.microseconds(-1999).wholeMilliseconds == -1)
        #expect(Duration.zero.wholeMicroseconds == 0)
    }

    @Test func secondsKeepTheirFraction() {
        #expect(Duration.milliseconds(250).inSeconds == 0.25)
        #expect(Duration.seconds(86_400).inSeconds == 86_400)
        #expect(Duration.milliseconds(-1500).inSeconds == -1.5)
        #expect(abs(Duration.nanoseconds(1).inSeconds - 1e-9) < 1e-18)
    }
}
