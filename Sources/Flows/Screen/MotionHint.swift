/// How a renderer should move from the previous screen to this one. It names the intent
/// (a count ticked up, an attempt failed) so each renderer can choose what it is able to show.
package enum MotionHint: String, CaseIterable, Hashable, Sendable {
    /// Something arrived and deserves a small celebration, e.g. a tile turning into a checkmark.
    case bounce
    /// One element swapped for another, e.g. a closed lock for an open one.
    case replace
    /// An attempt was refused, e.g. a wrong password.
    case shake
    /// A number changed, so only its digits should roll.
    case numericText
    /// A plain fade: the one motion that is always comfortable.
    case crossfade
}

/// The motion preferences in effect. Engines route every hint and every show-only pause
/// through here, so honouring Reduce Motion is one decision made in one place.
package struct MotionSettings: Hashable, Sendable {
    package var reduceMotion: Bool

    package init(reduceMotion: Bool = false) {
        self.reduceMotion = reduceMotion
    }

    /// Motion as designed, for when the person has not asked for Reduce Motion.
    public static let standard = MotionSettings(reduceMotion: false)
    package static let reduced = MotionSettings(reduceMotion: true)

    /// The hint to publish: unchanged normally; with Reduce Motion every movement becomes a
    /// crossfade. No hint stays no hint.
    package func apply(_ hint: MotionHint?) -> MotionHint? {
        guard let hint else { return nil }
        return reduceMotion ? .crossfade : hint
    }

    /// A pause that exists only so a person can see something (e.g. the open lock before the
    /// import finishes). With Reduce Motion there is nothing to watch, so it is zero.
    /// Negative durations are treated as zero.
    package func showPause(_ duration: Duration) -> Duration {
        reduceMotion || duration < .zero ? .zero : duration
    }
}
