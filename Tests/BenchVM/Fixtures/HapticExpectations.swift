import Foundation
import HAL

/// What the bench VM's evdev and usb groups must see a pad receive for each cue, worked out from
/// HAL's pattern table and the documented wire formats, independently of the drivers' encoders
/// (the same rules as the umockdev tests' expectations, Tests/PluginsTests):
///
/// - every pulse drives the motors at strength × 255, rounded; the heavy motor joins only above
///   half strength; a pause is "off" (`HapticPulse.rumbleLevel`'s documented contract);
/// - **evdev** (`evdev-CUE.jsonl`, the lines `uinput_pad.py` logs): full gain 0xFFFF when the node is
///   opened; per pulse one FF_RUMBLE upload (magnitudes × 257, replay length = the pulse's ms, one
///   effect id for the whole cue) and play 1; a pause after a pulse plays 0; at the end play 0 and
///   the erase. The real kernel adds one thing: its `erase_effect` stops the effect itself
///   (`playback(id, 0)`) before it hands the erase to uinput, so a second play 0 comes before the erase;
/// - **Xbox 360** (`xbox360-CUE.hex`, one report per line as the gadget logs them): the cue's colour
///   as a ring animation (`01 03 PP`), one `00 08 00 SS WW 00 00 00` per pulse, the stop (all zero
///   motors), then the resting ring (quadrant 1, 0x06) when a colour was shown.
enum HapticExpectations {
    static func write(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for cue in HapticCue.allCases {
            try (evdev(cue).joined(separator: "\n") + "\n").write(to: directory.appendingPathComponent("evdev-\(cue.rawValue).jsonl"),
                                                                atomically: true, encoding: .utf8)
            try (xbox360(cue).joined(separator: "\n") + "\n").write(to: directory.appendingPathComponent("xbox360-\(cue.rawValue).hex"),
                                                                  atomically: true, encoding: .utf8)
        }
        try (HapticCue.allCases.map(\.rawValue).joined(separator: "\n") + "\n")
            .write(to: directory.appendingPathComponent("cues"), atomically: true, encoding: .utf8)
    }

    static func motors(_ pulse: HapticPulse) -> (strong: Int, weak: Int) {
        let scaled = Int((pulse.strength * 255).rounded())
        return (pulse.strength > 0.5 ? scaled : 0, scaled)
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds) * 1000 + Int(duration.components.attoseconds / 1_000_000_000_000_000)
    }

    /// JSON lines with the keys in uinput_pad.py's order.
    static func evdev(_ cue: HapticCue) -> [String] {
        var lines = [#"{"op": "gain", "value": 65535}"#]
        var playing = false
        for pulse in cue.pattern.pulses {
            let (strong, weak) = motors(pulse)
            if strong == 0 && weak == 0 {
                if playing { lines.append(#"{"op": "play", "id": 0, "count": 0}"#) }
                playing = false
            } else {
                lines.append(#"{"op": "upload", "id": 0, "type": 80, "length": \#(milliseconds(pulse.duration)), "delay": 0, "strong": \#(strong * 257), "weak": \#(weak * 257)}"#)
                lines.append(#"{"op": "play", "id": 0, "count": 1}"#)
                playing = true
            }
        }
        if playing { lines.append(#"{"op": "play", "id": 0, "count": 0}"#) }
        lines.append(#"{"op": "play", "id": 0, "count": 0}"#)   // the kernel's own stop before an erase
        lines.append(#"{"op": "erase", "id": 0}"#)
        return lines
    }

    static func xbox360(_ cue: HapticCue) -> [String] {
        let pattern = cue.pattern
        var reports: [[UInt8]] = []
        if let color = pattern.indicator { reports.append([0x01, 0x03, ring(color)]) }
        for pulse in pattern.pulses {
            let (strong, weak) = motors(pulse)
            reports.append([0x00, 0x08, 0x00, UInt8(strong), UInt8(weak), 0x00, 0x00, 0x00])
        }
        reports.append([0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
        if pattern.indicator != nil { reports.append([0x01, 0x03, 0x06]) }
        return reports.map { $0.map { String(format: "%02x", $0) }.joined(separator: " ") }
    }

    /// The ring animation for a colour, by the table documented in Plugins/Xbox360Pad
    /// (Xbox360RingAnimation.showing): dark → off 0x00; grey (chroma under a fifth of the brightest
    /// channel) → blink previous 0x0B; hue under 20° or from 300° → all blinking 0x01; 20°–75° →
    /// alternating 0x0D; 75°–180° → rotating 0x0A; otherwise blink previous 0x0B.
    static func ring(_ color: IndicatorColor) -> UInt8 {
        let channels = [Double(color.red), Double(color.green), Double(color.blue)]
        let high = channels.max() ?? 0, low = channels.min() ?? 0
        guard high >= 16 else { return 0x00 }
        let chroma = high - low
        guard chroma >= high / 5 else { return 0x0B }
        let (r, g, b) = (channels[0], channels[1], channels[2])
        var hue = high == r ? 60 * (g - b) / chroma : high == g ? 60 * ((b - r) / chroma + 2) : 60 * ((r - g) / chroma + 4)
        if hue < 0 { hue += 360 }
        if hue < 20 || hue >= 300 { return 0x01 }
        if hue < 75 { return 0x0D }
        if hue < 180 { return 0x0A }
        return 0x0B
    }
}
