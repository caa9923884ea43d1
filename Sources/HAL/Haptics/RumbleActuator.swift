/// Both motors of a pad at one moment. Pads carry a heavy low-frequency motor (`strong`) and a
/// light high-frequency one (`weak`); every wire format we drive takes one byte for each.
public struct RumbleLevel: Hashable, Sendable, CustomStringConvertible {
    /// The heavy, low-frequency motor, 0 (off) to 255.
    public var strong: UInt8
    /// The light, high-frequency motor, 0 (off) to 255.
    public var weak: UInt8

    /// Builds a level from the two motor bytes.
    public init(strong: UInt8, weak: UInt8) {
        self.strong = strong
        self.weak = weak
    }

    /// Both motors still, as sent for pauses.
    public static let off = RumbleLevel(strong: 0, weak: 0)
    /// True when neither motor runs.
    public var isOff: Bool { strong == 0 && weak == 0 }
    /// The words a person reads in logs and replay differences.
    public var description: String { "strong \(strong) weak \(weak)" }
}

extension HapticPulse {
    /// How a pulse's strength drives two motors, the same on every pad: light taps use the light
    /// motor alone (a crisp tick), and only pulses above half strength add the heavy one, so
    /// `selection` never thuds and `error` always does.
    public var rumbleLevel: RumbleLevel {
        let scaled = UInt8((strength * 255).rounded())
        return RumbleLevel(strong: strength > 0.5 ? scaled : 0, weak: scaled)
    }
}

/// The device end of a haptic sink: the few commands every pad understands. `RumbleScheduler`
/// turns a cue's pattern into these on its clock, so pads only translate commands into bytes.
public protocol RumbleActuator: Sendable {
    /// Which pad this is, in words for logs; the scheduler copies it as its own name.
    var name: String { get }
    /// Runs the motors at `level` from now on. `duration` is how long the scheduler will wait
    /// before its next command; devices whose effects need a length (evdev) use it, others ignore it.
    func rumble(_ level: RumbleLevel, for duration: Duration) async throws(HapticError)
    /// Shows a cue's colour, or the device's resting light when `nil`. Lightless devices do nothing.
    func indicate(_ color: IndicatorColor?) async throws(HapticError)
    /// Motors off and anything uploaded to the device released; called after every cue.
    func stop() async throws(HapticError)
    /// Lets go of the device (interfaces released, descriptors closed). Idempotent.
    func close()
}

extension RumbleActuator {
    /// Actuators that hold nothing open need not write `close`.
    public func close() {}
}
