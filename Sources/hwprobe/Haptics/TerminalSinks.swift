import HAL

/// `log:`: writes every command the scheduler gives, with its time from the cue's start, so a
/// terminal or CI log shows exactly what a pad would have been told and when.
struct LogActuator<C: Clock>: RumbleActuator where C.Duration == Duration {
    let write: @Sendable (String) -> Void
    let clock: C
    /// When the cue being logged started (`nil` once it stopped, so the next command starts a
    /// new one), and when the previous one did.
    private let starts = Locked<(current: C.Instant?, previous: C.Instant?)>((nil, nil))
    var name: String { "log:" }

    init(clock: C, write: @escaping @Sendable (String) -> Void) {
        self.clock = clock
        self.write = write
    }

    func rumble(_ level: RumbleLevel, for duration: Duration) async throws(HapticError) {
        line(level.isOff ? "off for \(duration.wholeMilliseconds)ms" : "rumble \(level) for \(duration.wholeMilliseconds)ms")
    }

    func indicate(_ color: IndicatorColor?) async throws(HapticError) {
        if let color { line("light \(hexColor(color))") } else { line("light back to rest", closing: true) }
    }

    func stop() async throws(HapticError) {
        line("stop")
        starts.withLock { $0 = (nil, $0.current) }
    }

    /// `closing`: the light going back after `stop` still belongs to the cue that stopped.
    private func line(_ text: String, closing: Bool = false) {
        let now = clock.now
        let start = starts.withLock { starts in
            if closing, starts.current == nil, let previous = starts.previous { return previous }
            let start = starts.current ?? now
            starts.current = start
            return start
        }
        write("haptics +\(start.duration(to: now).wholeMilliseconds)ms \(text)\n")
    }
}

/// `success: 45%×60ms ·80ms 90%×120ms light #00c850`: a cue's pattern in one line.
func describeCue(_ cue: HapticCue) -> String {
    let pattern = cue.pattern
    let pulses = pattern.pulses.map { pulse in
        pulse.strength == 0 ? "·\(pulse.duration.wholeMilliseconds)ms" : "\(Int((pulse.strength * 100).rounded()))%×\(pulse.duration.wholeMilliseconds)ms"
    }.joined(separator: " ")
    let light = pattern.indicator.map { " light \(hexColor($0))" } ?? ""
    return "\(cue.rawValue): \(pulses)\(light)"
}

/// `bell:`: rings the terminal bell at the start of every pulse that moves a motor; the
/// scheduler's pauses keep the rhythm.
struct BellActuator: RumbleActuator {
    let ring: @Sendable () -> Void
    var name: String { "bell:" }

    func rumble(_ level: RumbleLevel, for duration: Duration) async throws(HapticError) {
        if !level.isOff { ring() }
    }

    func indicate(_ color: IndicatorColor?) async throws(HapticError) {}
    func stop() async throws(HapticError) {}
}

extension Duration {
    /// `120`, `0.5`: seconds as a person writes them.
    var seconds: String {
        let value = Double(wholeMilliseconds) / 1000
        return value == value.rounded() ? String(Int64(value)) : String(value)
    }
}

func hexColor(_ color: IndicatorColor) -> String {
    "#" + Hex.string([color.red, color.green, color.blue], .lower)
}
