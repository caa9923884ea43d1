import LinuxIO

/// The camera preview's part of the screen, as a value: who may draw in it, where the last paint
/// put it, and the rows drawn for that place.
///
/// One preview at a time holds a claim; calls with an ended or replaced claim change nothing, so a
/// preview still finishing a picture after it was ended cannot bring itself back. Rows are made
/// for one layout and shown only while the layout is still the same (a resized terminal leaves
/// the room blank until rows for the new layout come, so the frame does not jump).
struct PreviewSlot: Sendable {
    /// A preview's claim on the slot.
    struct Claim: Hashable, Sendable {
        fileprivate let number: Int
    }

    private struct Preview {
        /// The camera's width over its height.
        var aspect: Double
        /// Where the last paint put it (nil: no room on this terminal).
        var layout: PreviewLayout?
        /// The rows drawn for a layout.
        var shown: (layout: PreviewLayout, rows: [String])?
    }

    private var preview: Preview?
    /// The claim that may draw, and how many were made.
    private var holder: Int?
    private var claims = 0

    /// Whether a preview has room made for it.
    var isShown: Bool { preview != nil }

    /// The preview's place and size as last painted: what rows must be made for.
    var layout: PreviewLayout? { preview?.layout }

    /// A new claim, which replaces any other; nothing is drawn until ``begin(_:aspect:)``.
    mutating func claim() -> Claim {
        claims += 1
        preview = nil
        holder = claims
        return Claim(number: claims)
    }

    /// Makes room for a camera `aspect` times as wide as it is tall; whether that changed anything.
    mutating func begin(_ claim: Claim, aspect: Double) -> Bool {
        guard aspect.isFinite, aspect > 0, holder == claim.number, preview?.aspect != aspect else { return false }
        preview = Preview(aspect: aspect)
        return true
    }

    /// Takes `rows`, made for `layout`, unless the layout has changed since; whether it took them.
    mutating func show(_ claim: Claim, rows: [String], for layout: PreviewLayout) -> Bool {
        guard holder == claim.number, preview != nil, preview?.layout == layout else { return false }
        preview?.shown = (layout, rows)
        return true
    }

    /// Ends `claim` and takes the preview away; whether there was one to take away.
    mutating func end(_ claim: Claim) -> Bool {
        guard holder == claim.number else { return false }
        defer { preview = nil; holder = nil }
        return preview != nil
    }

    /// Takes the preview away for good (the screen is being given back); the claim stays, drawing nothing.
    mutating func clear() {
        preview = nil
    }

    /// Where the preview goes beside the frame on a terminal of `size`, if it is wide enough.
    func beside(size: WindowSize) -> PreviewLayout? {
        preview.flatMap { PreviewLayout.beside(size: size, aspect: $0.aspect) }
    }

    /// `frame` with the preview placed in it: at `beside` if it fits there, else above the frame if
    /// the terminal has room. The place is remembered as ``layout``; until rows for it come, the
    /// room stays blank.
    mutating func placing(in frame: [String], beside: PreviewLayout?, size: WindowSize) -> [String] {
        guard let current = preview else { return frame }
        let layout = beside ?? PreviewLayout.above(size: size, frameRows: frame.count, aspect: current.aspect)
        preview?.layout = layout
        guard let layout else { return frame }
        let rows = current.shown.flatMap { $0.layout == layout ? $0.rows : nil } ?? Array(repeating: "", count: layout.rows)
        return Self.placing(rows, layout: layout, beside: frame, columns: size.columns)
    }

    /// The frame's rows with the preview's: each frame row then the preview row at the preview's
    /// column (beside), or the preview centred over the frame with a blank row between (above).
    static func placing(_ preview: [String], layout: PreviewLayout, beside frame: [String], columns: Int) -> [String] {
        switch layout.placement {
        case .beside:
            let column = columns - layout.columns
            return (0..<max(frame.count, preview.count)).map { index in
                let left = index < frame.count ? frame[index] : ""
                guard index < preview.count else { return left }
                return left + TerminalRenderer.ANSI.clearToEndOfLine + TerminalRenderer.ANSI.escape + "\(column)G" + preview[index]
            }
        case .above:
            let margin = String(repeating: " ", count: max(0, (columns - layout.columns) / 2))
            return preview.map { margin + $0 } + [""] + frame
        }
    }
}
