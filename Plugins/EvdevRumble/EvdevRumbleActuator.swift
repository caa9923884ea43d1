import HAL
import Transports

/// Rumble through evdev force feedback. Each pulse becomes one FF_RUMBLE effect as long as the
/// pulse, so the kernel ends it on time even if we are late; one effect slot is reused for a whole
/// cue and erased at its end, leaving the device's slots free for other programs.
actor EvdevRumbleActuator: RumbleActuator {
    nonisolated let name: String
    private let device: EvdevForceFeedback
    private var effect: Int16?
    private var playing = false

    init(device: EvdevForceFeedback) throws(HapticError) {
        self.device = device
        name = "evdev:\(device.path)"
        // Full gain, so a cue's strengths mean the same whatever a previous program left set.
        try device.setGain(0xFFFF)
    }

    func rumble(_ level: RumbleLevel, for duration: Duration) async throws(HapticError) {
        if level.isOff {
            if let effect, playing { try device.play(effect, count: 0) }
            playing = false
            return
        }
        let id = try device.uploadRumble(strong: UInt16(level.strong) * 257, weak: UInt16(level.weak) * 257,
                                         length: duration, replacing: effect)
        effect = id
        try device.play(id)
        playing = true
    }

    func indicate(_ color: IndicatorColor?) async throws(HapticError) {}

    nonisolated func close() { device.close() }

    func stop() async throws(HapticError) {
        guard let effect else { return }
        if playing { try device.play(effect, count: 0) }
        playing = false
        self.effect = nil
        try device.erase(effect)
    }
}
