import HAL

/// The ring of four green quadrants around the guide button plays one of these animations
/// (numbering as in xpad.c and the Xbox 360 controller documentation of the free60 project).
public enum Xbox360RingAnimation: UInt8, Hashable, Sendable, CaseIterable {
    /// All four quadrants dark.
    case off = 0x00
    /// Every quadrant blinks; used for error cues.
    case allBlinking = 0x01
    /// Flashes, then leaves quadrant 1, 2, 3 or 4 lit.
    case flashThenOn1 = 0x02, flashThenOn2 = 0x03, flashThenOn3 = 0x04, flashThenOn4 = 0x05
    /// Quadrant 1, 2, 3 or 4 lit steadily (the player number).
    case on1 = 0x06, on2 = 0x07, on3 = 0x08, on4 = 0x09
    /// The lit quadrant runs round the ring; used for success cues.
    case rotating = 0x0A
    /// Blinks whatever was lit before, then returns to it.
    case blinkPrevious = 0x0B
    /// Like `blinkPrevious`, more slowly.
    case slowBlinkPrevious = 0x0C
    /// Quadrants 1+4 and 2+3 take turns, then the previous setting returns.
    case alternating = 0x0D

    /// At rest the ring shows quadrant 1 lit, as it does for player 1 after `xpad` binds: the pad
    /// looks the same after a cue as before it.
    public static let resting = Xbox360RingAnimation.on1

    /// The ring has one colour (green), so a cue's colour becomes a movement instead, chosen by
    /// hue so the three outcome cues look as different as they feel:
    ///
    /// | colour | hue | animation | why |
    /// |---|---|---|---|
    /// | black / very dark | – | `off` | nothing to show |
    /// | red, pink (`error`) | < 20° or ≥ 300° | `allBlinking` | an alarm: every quadrant flashes |
    /// | orange, yellow (`warning`) | 20°–75° | `alternating` | attention, but not an alarm |
    /// | green (`success`) | 75°–180° | `rotating` | a lap of honour |
    /// | blue, violet, grey | otherwise | `blinkPrevious` | "something happened", neutral |
    public static func showing(_ color: IndicatorColor) -> Xbox360RingAnimation {
        let r = Double(color.red), g = Double(color.green), b = Double(color.blue)
        let high = max(r, g, b), low = min(r, g, b)
        if high < 16 { return .off }
        let chroma = high - low
        // Greys carry no hue; a fifth of the brightest channel is "clearly tinted".
        if chroma < high / 5 { return .blinkPrevious }
        var hue: Double
        if high == r {
            hue = 60 * ((g - b) / chroma)
        } else if high == g {
            hue = 60 * ((b - r) / chroma + 2)
        } else {
            hue = 60 * ((r - g) / chroma + 4)
        }
        if hue < 0 { hue += 360 }
        switch hue {
        case ..<20, 300...: return .allBlinking
        case 20..<75: return .alternating
        case 75..<180: return .rotating
        default: return .blinkPrevious
        }
    }
}
