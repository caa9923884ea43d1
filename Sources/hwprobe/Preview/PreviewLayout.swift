import LinuxIO

/// Where the camera preview goes on the terminal and how big it is: beside the flow's frame on a
/// wide terminal, above it on a tall one, nowhere on a small one.
///
/// The picture keeps the camera's shape: a terminal cell is about twice as tall as it is wide, and
/// each cell shows two pixels one above the other (a half-block), so a picture `columns` cells wide
/// and `imageRows` rows tall shows `columns`×`2·imageRows` square pixels. Under the picture is one
/// caption row (the aiming hint).
struct PreviewLayout: Hashable, Sendable {
    enum Placement: Hashable, Sendable {
        /// On the right of the frame; the frame gets the columns left of it.
        case beside
        /// Over the frame, centred.
        case above
    }

    var placement: Placement
    var columns: Int
    var imageRows: Int

    /// The picture and its caption.
    var rows: Int { imageRows + 1 }

    /// A terminal at least this wide has the preview beside the frame.
    static let besideFromColumns = 100
    /// Never wider than this many columns (a larger picture is no easier to aim with).
    static let widest = 64
    /// Smaller than this is not worth drawing.
    static let fewestImageRows = 5
    static let fewestColumns = 16
    /// Rows kept free at the bottom for the status line, the key hints and a spare one.
    static let bottomRows = 3
    /// Columns between the frame and a preview beside it, and after it (nothing is drawn in the
    /// last column).
    static let gap = 2

    /// The preview beside the frame, if the terminal is wide enough. `aspect` is the camera's
    /// width over its height.
    static func beside(size: WindowSize, aspect: Double) -> PreviewLayout? {
        guard size.columns >= besideFromColumns else { return nil }
        let columns = min(widest, (size.columns - gap - 1) * 2 / 5)
        return fitted(columns: columns, maximumImageRows: size.rows - 1 - 1 - bottomRows, aspect: aspect, placement: .beside)
    }

    /// The preview above a frame of `frameRows` rows, if there is room for it.
    static func above(size: WindowSize, frameRows: Int, aspect: Double) -> PreviewLayout? {
        let columns = min(48, size.columns - 2 * gap)
        // A blank row on top, the picture and its caption, a blank row, the frame, the bottom rows.
        return fitted(columns: columns, maximumImageRows: size.rows - 1 - 1 - 1 - frameRows - bottomRows, aspect: aspect, placement: .above)
    }

    private static func fitted(columns: Int, maximumImageRows: Int, aspect: Double, placement: Placement) -> PreviewLayout? {
        guard aspect.isFinite, aspect > 0 else { return nil }
        var columns = columns
        var imageRows = Int((Double(columns) / aspect / 2).rounded())
        if imageRows > maximumImageRows {
            imageRows = maximumImageRows
            columns = Int((Double(imageRows * 2) * aspect).rounded())
        }
        guard imageRows >= fewestImageRows, columns >= fewestColumns else { return nil }
        return PreviewLayout(placement: placement, columns: columns, imageRows: imageRows)
    }
}
