import Testing
@testable import Peripherals
import VirtualController

/// The person on a virtual scale, as a timeline: the display's settling, and the controls a
/// `serve` screen binds keys to, each taking effect at the next `advance`.
@Suite struct ScaleSimulationTests {
    /// Runs the simulation to each deadline until `end`, collecting what happened and when.
    static func run(_ simulation: inout ScaleSimulation, until end: Duration) -> [(Duration, ScaleSimulation.Event)] {
        var seen: [(Duration, ScaleSimulation.Event)] = []
        while let due = simulation.nextDeadline, due <= end {
            for event in simulation.advance(to: due) { seen.append((due, event)) }
        }
        return seen
    }

    /// An event as text, the weight to the gram (the arithmetic of a shortfall is not exact in binary).
    static func text(_ event: ScaleSimulation.Event?) -> String {
        func grams(_ reading: ScaleSimulation.Reading?) -> String {
            reading.map { "\(Int(($0.kilograms * 1000).rounded())) g\($0.stable ? " stable" : "")" } ?? "nothing"
        }
        switch event {
        case .reading(let reading)?: return grams(reading)
        case .steppedOff(let last)?: return "off after \(grams(last))"
        case nil: return "none"
        }
    }

    @Test func steppingOnSettlesTheDisplayInThreeStepsToTheWeight() {
        var scale = ScaleSimulation(weightKilograms: 72.35)
        #expect(scale.nextDeadline == nil, "nobody on it: nothing to do")
        scale.stepOn()
        #expect(scale.nextDeadline == .zero, "a control asks for an advance at once")
        #expect(scale.advance(to: .seconds(2)).isEmpty, "stepping on shows nothing yet")
        #expect(scale.occupied && scale.isSettling)
        let seen = Self.run(&scale, until: .seconds(10))
        #expect(seen.map(\.0) == [.milliseconds(2300), .milliseconds(2700), .milliseconds(3100)])
        #expect(seen.map { Self.text($0.1) } == ["71900 g", "72350 g", "72350 g stable"])
        #expect(!scale.isSettling && scale.display == .init(kilograms: 72.35, stable: true))
        #expect(scale.nextDeadline == nil)
    }

    @Test func steppingOffEndsTheSettlingAndSaysWhatWasShown() {
        var scale = ScaleSimulation(weightKilograms: 80)
        scale.stepOn()
        _ = scale.advance(to: .zero)
        _ = Self.run(&scale, until: .milliseconds(300))
        scale.stepOff()
        #expect(scale.advance(to: .milliseconds(500)).map { Self.text($0) } == ["off after 79550 g"])
        #expect(!scale.occupied && scale.display == nil && !scale.isSettling)
        #expect(Self.run(&scale, until: .seconds(5)).isEmpty, "the rest of the settling is gone with the person")
        scale.stepOff()
        #expect(scale.advance(to: .seconds(6)).isEmpty, "stepping off an empty scale is nothing")
    }

    @Test func aNewWeightSettlesAgainFromWhenItWasSet() {
        var scale = ScaleSimulation(weightKilograms: 60)
        scale.stepOn()
        _ = scale.advance(to: .zero)
        _ = Self.run(&scale, until: .seconds(2))
        scale.setWeight(61.5)
        #expect(scale.advance(to: .seconds(3)).isEmpty)
        let seen = Self.run(&scale, until: .seconds(10))
        #expect(seen.map(\.0) == [.milliseconds(3300), .milliseconds(3700), .milliseconds(4100)])
        #expect(Self.text(seen.last?.1) == "61500 g stable")
        // Without anyone on it a new weight waits for the next person.
        scale.stepOff()
        scale.setWeight(70)
        #expect(scale.advance(to: .seconds(11)).count == 1 && scale.weightKilograms == 70 && !scale.isSettling)
    }

    @Test func weightsAreClampedAndALightLoadNeverShowsLessThanNothing() {
        #expect(ScaleSimulation(weightKilograms: 1000).weightKilograms == 300)
        #expect(ScaleSimulation(weightKilograms: -3).weightKilograms == 0)
        #expect(ScaleSimulation(weightKilograms: .nan).weightKilograms == 0)
        var parcel = ScaleSimulation(weightKilograms: 1.2)
        parcel.stepOn()
        _ = parcel.advance(to: .zero)
        #expect(Self.text(Self.run(&parcel, until: .seconds(1)).first?.1) == "1080 g", "0.45 kg short is capped at a tenth of the weight")
    }

    @Test func stepsDueBeforeAControlComeFirst() {
        var scale = ScaleSimulation(weightKilograms: 50)
        scale.stepOn()
        _ = scale.advance(to: .zero)
        scale.stepOff()
        // The first reading fell due at 300 ms; the step-off is applied at 400 ms, after it.
        #expect(scale.advance(to: .milliseconds(400)).map { Self.text($0) } == ["49550 g", "off after 49550 g"])
    }
}

/// A scale's own clock: what the app set, running since, as calendar fields.
@Suite struct ScaleClockTests {
    @Test func calendarFieldsRoundTripThroughUnixTime() {
        var clock = ScaleClock()
        #expect(clock.civil(at: .zero) == .init(year: 2026, month: 1, day: 1, hour: 0, minute: 0, second: 0))
        // 2024-02-29 23:59:30 UTC is 1_709_251_170 (a leap day, 30 s before March).
        clock.set(.init(year: 2024, month: 2, day: 29, hour: 23, minute: 59, second: 30), at: .seconds(10))
        #expect(clock.unixSeconds(at: .seconds(10)) == 1_709_251_170)
        #expect(clock.civil(at: .seconds(40)) == .init(year: 2024, month: 3, day: 1, hour: 0, minute: 0, second: 0))
        clock.set(unixSeconds: 0, at: .zero)
        #expect(clock.civil(at: .seconds(86_399)) == .init(year: 1970, month: 1, day: 1, hour: 23, minute: 59, second: 59))
        // 2000-01-01, the QN scales' epoch, and a date far on.
        #expect(ScaleClock.days(year: 2000, month: 1, day: 1) == 10_957)
        let far = ScaleClock.date(days: ScaleClock.days(year: 2099, month: 12, day: 31))
        #expect(far.year == 2099 && far.month == 12 && far.day == 31)
    }
}
