import HAL

/// A warning time and a give-up time for one wait: every waiting state has both, so no screen
/// can sit forever and nobody waits in silence until the failure.
package struct Deadline: Hashable, Sendable {
    package var warning: Duration
    /// How long the wait may last in all before the flow gives up and fails.
    public var failure: Duration

    package init(warning: Duration, failure: Duration) {
        self.warning = warning
        self.failure = failure
    }
}

/// Deadlines per waiting state; the defaults are the profile's (docs/mirror-gatt-v1.md, "What a client must do").
package struct BodyScanDeadlines: Hashable, Sendable {
    package var findMirror = Deadline(warning: .seconds(8), failure: .seconds(20))
    package var pickMirror = Deadline(warning: .seconds(30), failure: .seconds(120))
    package var connect = Deadline(warning: .seconds(5), failure: .seconds(15))
    package var scalePresent = Deadline(warning: .seconds(20), failure: .seconds(60))
    package var preflight = Deadline(warning: .seconds(5), failure: .seconds(15))
    package var aligned = Deadline(warning: .seconds(45), failure: .seconds(120))
    package var confirm = Deadline(warning: .seconds(30), failure: .seconds(120))
    package var warmingUp = Deadline(warning: .seconds(15), failure: .seconds(30))
    package var onScaleAndStable = Deadline(warning: .seconds(30), failure: .seconds(90))
    /// Between progress notifications while scanning.
    package var scanning = Deadline(warning: .seconds(10), failure: .seconds(30))
    package var steppingOff = Deadline(warning: .seconds(10), failure: .seconds(30))
    package var processing = Deadline(warning: .seconds(45), failure: .seconds(120))
    /// A single write or read to the mirror.
    public var command = Deadline(warning: .seconds(5), failure: .seconds(10))

    package init() {}
}

package struct BodyScanConfiguration: Sendable {
    package var heightMillimetres: UInt16 = 1700
    package var units: MeasurementSystem = .metric
    /// Answer the flow's questions without asking: the only or nearest mirror, alignment confirmed.
    package var autoAnswer = false
    /// Use only this mirror (an address without a type matches either type).
    package var mirrorAddress: BLEAddressFilter?
    package var deadlines = BodyScanDeadlines()
    package var motion = MotionSettings()
    /// After the first mirror appears, how long to keep looking for others before choosing.
    package var discoveryWindow: Duration = .milliseconds(1500)
    /// After Re-align, how long an aligned reading must hold (with no newer reading) before the
    /// flow asks again: the person may find the scale already lined up and move nothing, and a
    /// mirror notifies alignment only when it changes.
    package var realignSettle: Duration = .milliseconds(1500)
    /// Which discovered peripherals are mirrors: the driver registry's answer, so the rule lives
    /// in one place (the mirror driver's match rules), not in a copy inside the flow.
    package var isMirror: @Sendable (DiscoveredDevice) -> Bool
    /// The 16 bytes written as `scanToken`; random by default.
    package var makeScanToken: @Sendable () -> [UInt8] = { (0..<16).map { _ in UInt8.random(in: 0...255) } }

    /// Mirrors are what `registry` says is a device of kind `.mirror`.
    package init(recognizingMirrorsWith registry: DriverRegistry) {
        isMirror = { registry.claim(.advertisement($0.advertisement))?.descriptor.kind == .mirror }
    }

    /// Mirrors are what `isMirror` says; for tests that script their own peripherals.
    package init(isMirror: @escaping @Sendable (DiscoveredDevice) -> Bool) {
        self.isMirror = isMirror
    }
}
