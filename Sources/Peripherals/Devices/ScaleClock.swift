/// A scale's own clock: the time the app last set (each vendor protocol has a command for it), or
/// the date the scale was made, running on the controller's timebase since. The families stamp
/// their results with it, as the real scales do, so a test can see that the time it set comes back.
package struct ScaleClock: Hashable, Sendable {
    /// A date and time as the scales' frames carry them (no time zone: the scale keeps whatever
    /// the app sent).
    package struct Civil: Hashable, Sendable {
        package var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int

        package init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
            (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
        }
    }

    /// 2026-01-01 00:00:00: what a scale nobody set says, so that runs repeat exactly.
    package static let factorySetting: Int64 = 1_767_225_600

    private var seconds: Int64 = ScaleClock.factorySetting
    private var setAt = Duration.zero

    package init() {}

    /// Seconds since 1970-01-01 00:00:00 by the scale's clock at `now`.
    package func unixSeconds(at now: Duration) -> Int64 {
        seconds + max(0, (now - setAt).components.seconds)
    }

    package mutating func set(unixSeconds: Int64, at now: Duration) {
        seconds = unixSeconds
        setAt = now
    }

    /// Sets the clock from calendar fields (a month or day out of range is carried over, as the
    /// arithmetic below does; the scales check nothing either).
    package mutating func set(_ civil: Civil, at now: Duration) {
        let days = Self.days(year: civil.year, month: civil.month, day: civil.day)
        set(unixSeconds: days * 86_400 + Int64(civil.hour * 3600 + civil.minute * 60 + civil.second), at: now)
    }

    package func civil(at now: Duration) -> Civil {
        let total = unixSeconds(at: now)
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let second = Int(total - days * 86_400)
        let (year, month, day) = Self.date(days: days)
        return Civil(year: year, month: month, day: day, hour: second / 3600, minute: second / 60 % 60, second: second % 60)
    }

    // Days since 1970-01-01 and back, in the proleptic Gregorian calendar: the eras-of-400-years
    // method of Howard Hinnant's "chrono-Compatible Low-Level Date Algorithms" (days_from_civil,
    // civil_from_days), written out here for the range a scale's clock can reach.

    package static func days(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    package static func date(days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * shiftedMonth + 2) / 5 + 1)
        let month = Int(shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9)
        let year = Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}
