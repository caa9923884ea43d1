/// One screen of a flow, in the single shape every flow shares (the seeds' "ScanFlowChrome"):
/// an icon over a title, an optional subtitle, then one content slot. Engines publish these;
/// renderers decide how an icon name, a colour or a motion hint is drawn on their surface.
package struct Screen: Hashable, Sendable {
    /// An SF Symbols name such as `qrcode.viewfinder`. Each renderer maps it to what it can draw,
    /// so engines never need to know whether they end up on a phone, a terminal or in a snapshot.
    package var icon: String
    package var title: String
    package var subtitle: String?
    /// The one part that differs from screen to screen.
    package var content: ScreenContent
    /// What changed since the previous screen, so a renderer can animate only that.
    /// `nil` means the renderer may simply swap the screen in.
    package var motion: MotionHint?
    /// Status that must not disturb the header (the password screen keeps its header fixed and
    /// reports progress, errors and success down here).
    package var footer: Footer?

    package init(icon: String, title: String, subtitle: String? = nil, content: ScreenContent = .none,
                motion: MotionHint? = nil, footer: Footer? = nil) {
        self.icon = icon
        self.title = title
        self.subtitle = subtitle
        self.content = content
        self.motion = motion
        self.footer = footer
    }
}

/// A line of status under the content, with a tone a renderer turns into colour.
package struct Footer: Hashable, Sendable {
    /// The tone says what the text means, not how it looks; renderers pick the colour.
    package enum Tone: String, CaseIterable, Hashable, Sendable {
        /// Ordinary information, drawn in the primary text colour.
        case normal
        /// Supporting detail (e.g. how long decryption may take), drawn quieter.
        case secondary
        /// Something went wrong (e.g. `Incorrect password`).
        case error
        /// Something finished well.
        case success
        /// Still fine, but worth attention (e.g. "taking longer than usual").
        case warning
    }

    /// The words of the line, as shown; the tone only changes how they are drawn.
    public var text: String
    package var tone: Tone

    package init(_ text: String, tone: Tone = .normal) {
        self.text = text
        self.tone = tone
    }
}
