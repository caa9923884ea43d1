/// The cue vocabulary of the flows (docs/flows.md, "Cues"). Every sink plays a cue from `pattern`,
/// so a rumble pad, force feedback, a bell and a log all agree on what `success` feels like.
public enum HapticCue: String, CaseIterable, Hashable, Sendable {
    /// A short soft tap acknowledging progress, e.g. one more backup code scanned.
    case lightImpact
    /// A firmer tap marking a step the person should notice, e.g. the scan starting.
    case mediumImpact
    /// The faintest tick, for a beat of rhythm such as each number of a countdown.
    case selection
    /// A rising double pulse with a green light: the task finished well.
    case success
    /// Two even pulses with an amber light: something needs attention but nothing failed.
    case warning
    /// Three hard pulses with a red light: the task failed.
    case error

    /// How this cue feels: its entry in `HapticPattern.table` (no pulses if it were ever missing).
    public var pattern: HapticPattern { HapticPattern.table[self] ?? HapticPattern(pulses: []) }
}

/// One motor pulse: a strength from 0 (a pause) to 1, held for `duration`.
public struct HapticPulse: Hashable, Sendable {
    /// 0 for a pause up to 1 for full power; `init` clamps anything outside that.
    public var strength: Double
    /// How long the pulse is held before the next one starts.
    public var duration: Duration

    /// Builds a pulse, clamping `strength` into 0...1.
    public init(strength: Double, duration: Duration) {
        self.strength = min(max(strength, 0), 1)
        self.duration = duration
    }

    /// A gap of `duration` with the motors off, for the rhythm between pulses.
    public static func pause(_ duration: Duration) -> HapticPulse { HapticPulse(strength: 0, duration: duration) }
}

/// A light colour for pads with a light bar or LEDs.
public struct IndicatorColor: Hashable, Sendable {
    /// The colour's red, green and blue components, 0 to 255 each.
    public var red: UInt8, green: UInt8, blue: UInt8
    /// Builds a colour from its three components.
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }
}

/// The pulses of one cue, played in order, and the colour shown while it plays.
public struct HapticPattern: Hashable, Sendable {
    /// The pulses, back to back; pauses are pulses of strength 0.
    public var pulses: [HapticPulse]
    /// The light shown while the cue plays; nil leaves the pad's light as it is.
    public var indicator: IndicatorColor?

    /// Builds a pattern; without an indicator the cue is felt only.
    public init(pulses: [HapticPulse], indicator: IndicatorColor? = nil) {
        self.pulses = pulses
        self.indicator = indicator
    }

    /// How long the cue takes from first pulse to last, pauses included.
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
