import HAL

/// What a pad must receive for each cue, worked out here from the pattern table and the
/// documented wire formats, independently of the drivers' own encoders.
enum PadCueExpectations {
    enum Command: Hashable {
        case rumble(strong: UInt8, weak: UInt8)
        case indicate(IndicatorColor?)
        case stop
    }

    /// RumbleScheduler's contract: the colour (if any), one rumble per pulse (pauses are off), stop,
    /// then the resting light (if a colour was shown). Strength × 255, rounded; the heavy motor
    /// joins only above half strength.
    static func commands(for cue: HapticCue) -> [Command] {
        let pattern = HapticPattern.table[cue] ?? HapticPattern(pulses: [])
        var commands: [Command] = []
        if let color = pattern.indicator { commands.append(.indicate(color)) }
        for pulse in pattern.pulses {
            let scaled = UInt8((pulse.strength * 255).rounded())
            commands.append(.rumble(strong: pulse.strength > 0.5 ? scaled : 0, weak: scaled))
        }
        commands.append(.stop)
        if pattern.indicator != nil { commands.append(.indicate(nil)) }
        return commands
    }

    // MARK: Xbox 360

    /// The ring animation the Xbox 360 driver documents for each cue colour, written out by hand:
    /// success rotates (0x0A), warning alternates (0x0D), error blinks all (0x01), rest is
    /// quadrant 1 (0x06).
    static let xboxRing: [IndicatorColor?: UInt8] = [
        HapticCue.success.pattern.indicator: 0x0A,
        HapticCue.warning.pattern.indicator: 0x0D,
        HapticCue.error.pattern.indicator: 0x01,
        nil: 0x06,
    ]

    /// `00 08 00 strong weak 00 00 00` and `01 03 animation`, as xpad sends them.
    static func xboxReport(_ command: Command) -> [UInt8] {
        switch command {
        case .rumble(let strong, let weak): [0x00, 0x08, 0x00, strong, weak, 0x00, 0x00, 0x00]
        case .stop: [0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
        case .indicate(let color): [0x01, 0x03, xboxRing[color] ?? 0xEE]
        }
    }

    // MARK: DualShock 4

    static let ds4RestingLight = IndicatorColor(red: 0x00, green: 0x00, blue: 0x40)

    /// Report 0x05 as hid-sony writes it on USB: id, flags 0x07, two zero bytes, right (weak)
    /// motor, left (strong) motor, R, G, B, flash on/off 0, zeros to 32 bytes. Each command
    /// changes one part of the state and the whole state goes out again.
    static func ds4Reports(for cues: [HapticCue]) -> [[UInt8]] {
        var strong: UInt8 = 0, weak: UInt8 = 0
        var light = ds4RestingLight
        var reports: [[UInt8]] = []
        for command in cues.flatMap(commands(for:)) {
            switch command {
            case .rumble(let s, let w): (strong, weak) = (s, w)
            case .stop: (strong, weak) = (0, 0)
            case .indicate(let color): light = color ?? ds4RestingLight
            }
            reports.append([0x05, 0x07, 0x00, 0x00, weak, strong, light.red, light.green, light.blue, 0x00, 0x00]
                           + [UInt8](repeating: 0, count: 21))
        }
        return reports
    }
}
