/// One screen of a flow, in the single shape every flow shares (the seeds' "ScanFlowChrome"):
/// an icon over a title, an optional subtitle, then one content slot. Engines publish these;
/// renderers decide how an icon name, a colour or a motion hint is drawn on their surface.
public struct Screen: Hashable, Sendable {
    /// An SF Symbols name such as `qrcode.viewfinder`. Each renderer maps it to what it can draw,
    /// so engines never need to know whether they end up on a phone, a terminal or in a snapshot.
    public var icon: String
    public var title: String
    public var subtitle: String?
    /// The one part that differs from screen to screen.
    public var content: ScreenContent
    /// What changed since the previous screen, so a renderer can animate only that.
    /// `nil` means the renderer may simply swap the screen in.
    public var motion: MotionHint?
    /// Status that must not disturb the header (the password screen keeps its header fixed and
    /// reports progress, errors and success down here).
    public var footer: Footer?

    public init(icon: String, title: String, subtitle: String? = nil, content: ScreenContent = .none,
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
public struct Footer: Hashable, Sendable {
    /// The tone says what the text means, not how it looks; renderers pick the colour.
    public enum Tone: String, CaseIterable, Hashable, Sendable {
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

    public var text: String
    public var tone: Tone

    public init(_ text: String, tone: Tone = .normal) {
        self.text = text
        self.tone = tone
    }
}
