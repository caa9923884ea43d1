import HALFakes

/// A person on a bathroom scale as the scale's display sees them, on the controller's timebase:
/// shared by every scale family's virtual peripheral, so each family only turns what the display
/// shows into its own frames.
///
/// When someone steps on, a scale does not show the weight at once: the load cell settles over a
/// second or so, and the display climbs to the weight before it locks (which is why every vendor
/// protocol here has a "stable" flag, or a final frame). `settling` is that climb: each step
/// comes a while after the one before, some way below the weight, and the last is the stable one.
///
/// The controls (`stepOn()`, `stepOff()`, `setWeight(_:)`) take no time: a keyboard or a test
/// calls them between events, and they take effect at the next `advance(to:)`, which
/// `nextDeadline` asks for at once. A value: it does nothing by itself.
package struct ScaleSimulation: Sendable {
    /// What the display shows.
    package struct Reading: Hashable, Sendable {
        package var kilograms: Double
        /// The display locked: the last step of settling.
        package var stable: Bool

        package init(kilograms: Double, stable: Bool) {
            self.kilograms = kilograms
            self.stable = stable
        }
    }

    /// What happened on the scale, in order.
    package enum Event: Hashable, Sendable {
        /// The display changed: a settling reading, or the final stable one.
        case reading(Reading)
        /// The person stepped off; `last` is what the display showed until then.
        case steppedOff(last: Reading?)
    }

    /// One step of the display settling after someone stepped on (or the weight changed).
    package struct SettleStep: Hashable, Sendable {
        /// The wait since the previous step (or since stepping on, for the first).
        package var after: Duration
        /// How far below the weight the display is, in kilograms (above it when negative, as a
        /// load cell that overshoots); never more than a tenth of the weight, so a light parcel
        /// never shows less than nothing.
        package var shortfallKilograms: Double
        package var stable: Bool

        package init(after: Duration, shortfallKilograms: Double, stable: Bool) {
            self.after = after
            self.shortfallKilograms = shortfallKilograms
            self.stable = stable
        }
    }

    /// The settling the bench scale has always shown (71.9, then 72.35 twice for 72.35 kg, 300,
    /// 400 and 400 ms apart): short enough for tests, long enough to see on a screen.
    package static let settling = [
        SettleStep(after: .milliseconds(300), shortfallKilograms: 0.45, stable: false),
        SettleStep(after: .milliseconds(400), shortfallKilograms: 0, stable: false),
        SettleStep(after: .milliseconds(400), shortfallKilograms: 0, stable: true),
    ]

    /// Weights a scale here can show: every family's frames carry at least 300 kg (WSS tops out
    /// at 327.675 kg in 0.005 kg steps), and nothing is weighed below nothing.
    package static let weightRange = 0.0...300.0

    /// Settling steps kept at most: a script longer than this is cut (the schedule is bounded).
    package static let maximumSteps = 32

    /// The person's weight: what the display settles to.
    package private(set) var weightKilograms: Double
    /// Someone is on the scale.
    package private(set) var occupied = false
    /// What the display shows; nil while nobody is on the scale.
    package private(set) var display: Reading?
    package let steps: [SettleStep]

    private enum Control: Sendable { case stepOn, stepOff, weight(Double) }
    private var controls: [Control] = []
    private var schedule = SimulationSchedule<Int>(capacity: ScaleSimulation.maximumSteps)
    /// The latest time seen, so that pending controls are due at once.
    private var latest = Duration.zero

    /// A scale nobody stands on yet; `weightKilograms` is clamped to `weightRange`. Without
    /// `steps` the display never shows anything (a scale whose readings a test scripts away).
    package init(weightKilograms: Double, steps: [SettleStep] = ScaleSimulation.settling) {
        self.weightKilograms = Self.clamped(weightKilograms)
        self.steps = Array(steps.prefix(Self.maximumSteps))
    }

    /// `kilograms` within `weightRange` (a value that is not a number counts as nothing).
    package static func clamped(_ kilograms: Double) -> Double {
        guard kilograms.isFinite else { return 0 }
        return min(max(kilograms, weightRange.lowerBound), weightRange.upperBound)
    }

    // MARK: controls

    /// Someone steps on (ignored when someone already stands there).
    package mutating func stepOn() { controls.append(.stepOn) }
    /// The person steps off (ignored when nobody stands there).
    package mutating func stepOff() { controls.append(.stepOff) }
    /// The person's weight changes; with someone on the scale the display settles again.
    package mutating func setWeight(_ kilograms: Double) { controls.append(.weight(kilograms)) }

    /// The display is still climbing.
    package var isSettling: Bool { !schedule.isEmpty }

    package var nextDeadline: Duration? { controls.isEmpty ? schedule.nextDeadline : latest }

    /// What happened by `now`: the settling steps that fell due, then the controls given since the
    /// last call (which take effect at `now`).
    package mutating func advance(to now: Duration) -> [Event] {
        latest = max(latest, now)
        var events: [Event] = []
        while let index = schedule.popDue(at: now) {
            let step = steps[index]
            let shortfall = min(step.shortfallKilograms, weightKilograms / 10)
            let reading = Reading(kilograms: Self.clamped(weightKilograms - shortfall), stable: step.stable)
            display = reading
            events.append(.reading(reading))
        }
        let given = controls
        controls = []
        for control in given {
            switch control {
            case .stepOn:
                guard !occupied else { continue }
                occupied = true
                settle(from: now)
            case .stepOff:
                guard occupied else { continue }
                occupied = false
                schedule.removeAll()
                events.append(.steppedOff(last: display))
                display = nil
            case .weight(let kilograms):
                weightKilograms = Self.clamped(kilograms)
                if occupied { settle(from: now) }
            }
        }
        return events
    }

    private mutating func settle(from now: Duration) {
        schedule.removeAll()
        var at = now
        for index in steps.indices {
            at += steps[index].after
            schedule.add(index, at: at)
        }
    }
}
