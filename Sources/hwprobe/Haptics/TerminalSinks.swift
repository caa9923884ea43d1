import HAL

/// `log:`: prints each cue with its pattern, for terminals and CI logs. Returns once the cue's
/// duration has passed on the clock, as every sink does, so logs and pads keep the same rhythm.
struct LogHapticSink: HapticSink {
    let console: Console
    let clock: any Clock<Duration>
    var name: String { "log:" }

    func play(_ cue: HapticCue) async throws(HapticError) {
        console.err("cue \(Self.describe(cue))\n")
        try? await clock.sleep(for: cue.pattern.totalDuration)
    }

    /// `success: 45%×60ms ·80ms 90%×120ms light #00c850`
    static func describe(_ cue: HapticCue) -> String {
        let pattern = cue.pattern
        let pulses = pattern.pulses.map { pulse in
            pulse.strength == 0 ? "·\(pulse.duration.milliseconds)ms" : "\(Int((pulse.strength * 100).rounded()))%×\(pulse.duration.milliseconds)ms"
        }.joined(separator: " ")
        let light = pattern.indicator.map { " light \(hexColor($0))" } ?? ""
        return "\(cue.rawValue): \(pulses)\(light)"
    }
}

/// `bell:`: rings the terminal bell once per pulse, pausing as the pattern says.
struct BellHapticSink: HapticSink {
    let console: Console
    let clock: any Clock<Duration>
    var name: String { "bell:" }

    func play(_ cue: HapticCue) async throws(HapticError) {
        for pulse in cue.pattern.pulses {
            if pulse.strength > 0 { console.err("\u{07}") }
            try? await clock.sleep(for: pulse.duration)
        }
    }
}

extension Duration {
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

func hexColor(_ color: IndicatorColor) -> String {
    "#" + [color.red, color.green, color.blue].map { byte in
        let text = String(byte, radix: 16)
        return text.count == 1 ? "0" + text : text
    }.joined()
}
