import HAL

/// A warning time and a give-up time for one wait: every waiting state has both, so no screen
/// can sit forever and nobody waits in silence until the failure.
public struct Deadline: Hashable, Sendable {
    public var warning: Duration
    public var failure: Duration

    public init(warning: Duration, failure: Duration) {
        self.warning = warning
        self.failure = failure
    }
}

/// Deadlines per waiting state; the defaults are the profile's (mirror-gatt-v1.md, "What a client must do").
public struct BodyScanDeadlines: Hashable, Sendable {
    public var findMirror = Deadline(warning: .seconds(8), failure: .seconds(20))
    public var pickMirror = Deadline(warning: .seconds(30), failure: .seconds(120))
    public var connect = Deadline(warning: .seconds(5), failure: .seconds(15))
    public var scalePresent = Deadline(warning: .seconds(20), failure: .seconds(60))
    public var preflight = Deadline(warning: .seconds(5), failure: .seconds(15))
    public var aligned = Deadline(warning: .seconds(45), failure: .seconds(120))
    public var confirm = Deadline(warning: .seconds(30), failure: .seconds(120))
    public var warmingUp = Deadline(warning: .seconds(15), failure: .seconds(30))
    public var onScaleAndStable = Deadline(warning: .seconds(30), failure: .seconds(90))
    /// Between progress notifications while scanning.
    public var scanning = Deadline(warning: .seconds(10), failure: .seconds(30))
    public var steppingOff = Deadline(warning: .seconds(10), failure: .seconds(30))
    public var processing = Deadline(warning: .seconds(45), failure: .seconds(120))
    /// A single write or read to the mirror.
    public var command = Deadline(warning: .seconds(5), failure: .seconds(10))

    public init() {}
}

public struct BodyScanConfiguration: Sendable {
    public var heightMillimetres: UInt16 = 1700
    public var units: MeasurementSystem = .metric
    /// Answer the flow's questions without asking: the only or nearest mirror, alignment confirmed.
    public var autoAnswer = false
    /// Use only this mirror (an address without a type matches either type).
    public var mirrorAddress: BLEAddressFilter?
    public var deadlines = BodyScanDeadlines()
    public var motion = MotionSettings()
    /// After the first mirror appears, how long to keep looking for others before choosing.
    public var discoveryWindow: Duration = .milliseconds(1500)
    /// After Re-align, how long an aligned reading must hold (with no newer reading) before the
    /// flow asks again: the person may find the scale already lined up and move nothing, and a
    /// mirror notifies alignment only when it changes.
    public var realignSettle: Duration = .milliseconds(1500)
    /// Which discovered peripherals are mirrors: the driver registry's answer, so the rule lives
    /// in one place (the mirror driver's match rules), not in a copy inside the flow.
    public var isMirror: @Sendable (DiscoveredDevice) -> Bool
    /// The 16 bytes written as `scanToken`; random by default.
    public var makeScanToken: @Sendable () -> [UInt8] = { (0..<16).map { _ in UInt8.random(in: 0...255) } }

    /// Mirrors are what `registry` says is a device of kind `.mirror`.
    public init(recognizingMirrorsWith registry: DriverRegistry) {
        isMirror = { registry.claim(.advertisement($0.advertisement))?.descriptor.kind == .mirror }
    }

    /// Mirrors are what `isMirror` says; for tests that script their own peripherals.
    public init(isMirror: @escaping @Sendable (DiscoveredDevice) -> Bool) {
        self.isMirror = isMirror
    }
}
