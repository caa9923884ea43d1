import HAL

/// The two output messages of the wired Xbox 360 pad, as the Linux `xpad` driver sends them on
/// interface 0's interrupt OUT endpoint (drivers/input/joystick/xpad.c, `xpad_play_effect` and
/// `xpad_send_led_command` for XTYPE_XBOX360).
public enum Xbox360Report {
    /// `00 08 00 SS WW 00 00 00`: message type 0 (rumble), 8 bytes long; SS drives the heavy
    /// left motor, WW the light right one.
    public static func rumble(_ level: RumbleLevel) -> [UInt8] {
        [0x00, 0x08, 0x00, level.strong, level.weak, 0x00, 0x00, 0x00]
    }

    /// `01 03 PP`: message type 1 (LED), 3 bytes long, PP one of the ring's animations.
    public static func led(_ animation: Xbox360RingAnimation) -> [UInt8] {
        [0x01, 0x03, animation.rawValue]
    }
}
