/// The cue vocabulary of the flows (flows.md, "Cues"). Every sink plays a cue from `pattern`,
/// so a rumble pad, force feedback, a bell and a log all agree on what `success` feels like.
public enum HapticCue: String, CaseIterable, Hashable, Sendable {
    case lightImpact, mediumImpact, selection, success, warning, error

    public var pattern: HapticPattern { HapticPattern.table[self] ?? HapticPattern(pulses: []) }
}

/// One motor pulse: a strength from 0 (a pause) to 1, held for `duration`.
public struct HapticPulse: Hashable, Sendable {
    public var strength: Double
    public var duration: Duration

    public init(strength: Double, duration: Duration) {
        self.strength = min(max(strength, 0), 1)
        self.duration = duration
    }

    public static func pause(_ duration: Duration) -> HapticPulse { HapticPulse(strength: 0, duration: duration) }
}

/// A light colour for pads with a light bar or LEDs.
public struct IndicatorColor: Hashable, Sendable {
    public var red: UInt8, green: UInt8, blue: UInt8
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }
}

/// The pulses of one cue, played in order, and the colour shown while it plays.
public struct HapticPattern: Hashable, Sendable {
    public var pulses: [HapticPulse]
    public var indicator: IndicatorColor?

    public init(pulses: [HapticPulse], indicator: IndicatorColor? = nil) {
        self.pulses = pulses
        self.indicator = indicator
    }

    public var totalDuration: Duration { pulses.reduce(.zero) { $0 + $1.duration } }

    /// The one table. Impacts are single short taps of rising strength; outcomes are rhythms
    /// (success rises, warning repeats, error hammers three times) so they are told apart by feel alone.
    public static let table: [HapticCue: HapticPattern] = [
        .selection: HapticPattern(pulses: [HapticPulse(strength: 0.2, duration: .milliseconds(20))]),
        .lightImpact: HapticPattern(pulses: [HapticPulse(strength: 0.35, duration: .milliseconds(40))]),
        .mediumImpact: HapticPattern(pulses: [HapticPulse(strength: 0.6, duration: .milliseconds(60))]),
        .success: HapticPattern(
            pulses: [HapticPulse(strength: 0.45, duration: .milliseconds(60)), .pause(.milliseconds(80)),
                     HapticPulse(strength: 0.9, duration: .milliseconds(120))],
            indicator: IndicatorColor(red: 0x00, green: 0xC8, blue: 0x50)),
        .warning: HapticPattern(
            pulses: [HapticPulse(strength: 0.7, duration: .milliseconds(100)), .pause(.milliseconds(100)),
                     HapticPulse(strength: 0.7, duration: .milliseconds(100))],
            indicator: IndicatorColor(red: 0xFF, green: 0xA0, blue: 0x00)),
        .error: HapticPattern(
            pulses: [HapticPulse(strength: 1.0, duration: .milliseconds(80)), .pause(.milliseconds(60)),
                     HapticPulse(strength: 1.0, duration: .milliseconds(80)), .pause(.milliseconds(60)),
                     HapticPulse(strength: 1.0, duration: .milliseconds(120))],
            indicator: IndicatorColor(red: 0xFF, green: 0x00, blue: 0x40)),
    ]
}
