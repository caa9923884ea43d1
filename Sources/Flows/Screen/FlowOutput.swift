import HAL

/// Words for a screen reader. Screens change silently for someone who cannot see them, so an
/// engine says the important changes (a wrong password, a finished scan) out loud as well.
package struct Announcement: Hashable, Sendable {
    /// How urgently the words should be spoken.
    package enum Priority: String, CaseIterable, Hashable, Sendable {
        /// Spoken when the reader is next idle; for progress and confirmations.
        case polite
        /// Spoken at once, interrupting; for errors a person must act on.
        case assertive
    }

    /// The words to speak, complete in themselves: the listener may not see the screen.
    public var text: String
    package var priority: Priority

    package init(_ text: String, priority: Priority = .polite) {
        self.text = text
        self.priority = priority
    }
}

/// Everything an engine publishes, in order, on one stream: what to show, what to feel, what to
/// hear, and what happened. One stream keeps them in step (the cue plays with the screen it
/// belongs to, the event comes with the screen that shows it).
package enum FlowOutput: Hashable, Sendable {
    case screen(Screen)
    case cue(HapticCue)
    case announcement(Announcement)
    case event(FlowEvent)
}
