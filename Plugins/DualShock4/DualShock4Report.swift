import HAL

/// What a DualShock 4 shows and does at one moment: both motors and the light bar.
public struct DualShock4State: Hashable, Sendable {
    /// Rumble levels: `strong` drives the heavy left motor, `weak` the light right one.
    public var motors: RumbleLevel
    /// Light bar colour, 8 bits per channel, shown steadily.
    public var light: IndicatorColor

    /// Defaults to motors off and the resting light, the state a pad is assumed to be in when opened.
    public init(motors: RumbleLevel = .off, light: IndicatorColor = DualShock4State.restingLight) {
        self.motors = motors
        self.light = light
    }

    /// A dim blue, the colour the Linux driver gives the first pad: between cues the bar looks
    /// as it did before anything was played.
    public static let restingLight = IndicatorColor(red: 0x00, green: 0x00, blue: 0x40)
}

/// USB output report 0x05 of the DualShock 4, 32 bytes. Layout as the Linux driver writes it for
/// a pad on USB (drivers/hid/hid-sony.c, `dualshock4_send_output_report`, and the same fields in
/// hid-playstation.c):
///
/// | byte | value |
/// |---|---|
/// | 0 | report ID 0x05 |
/// | 1 | 0x07: the flags "motors", "light bar colour" and "light bar flash" are valid |
/// | 2–3 | 0 |
/// | 4 | right (light, high-frequency) motor = `weak` |
/// | 5 | left (heavy, low-frequency) motor = `strong` |
/// | 6–8 | light bar red, green, blue |
/// | 9–10 | flash on / off time; both 0 = steady light |
/// | 11–31 | 0 |
///
/// Every report carries the whole state, so the pad never mixes an old colour with new motors.
public enum DualShock4Report {
    /// Report ID of the USB output report (byte 0); also what the driver looks for in the report descriptor.
    public static let reportID: UInt8 = 0x05
    /// Length of the USB output report in bytes, report ID included.
    public static let length = 32

    /// The whole 32-byte report for `state`, laid out as in the table above.
    public static func output(_ state: DualShock4State) -> [UInt8] {
        var report = [UInt8](repeating: 0, count: length)
        report[0] = reportID
        report[1] = 0x07
        report[4] = state.motors.weak
        report[5] = state.motors.strong
        report[6] = state.light.red
        report[7] = state.light.green
        report[8] = state.light.blue
        return report
    }
}
