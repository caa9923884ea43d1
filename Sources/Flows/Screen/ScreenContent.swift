/// The content slot of a `Screen`: exactly one of these per screen, so a renderer has a closed
/// set of layouts to get right and a flow can't invent a one-off layout.
package enum ScreenContent: Hashable, Sendable {
    /// Nothing under the text: the icon, title and subtitle say it all.
    case none
    /// Work is happening and its length is unknown.
    case spinner
    /// Work of known length. `value` runs from 0 to 1 (renderers clamp anything outside);
    /// `line` says the same thing in words, e.g. `Scanning… 40%`.
    case progress(value: Double, line: String)
    /// A number counting down to something, e.g. 3, 2, 1 before a scan.
    case countdown(Int)
    /// A list to choose one item from, e.g. the mirrors found nearby.
    case pickList([PickItem])
    /// A row of buttons, e.g. confirm / re-align.
    case actions([ScreenAction])
    /// A secret being typed.
    case passwordField(PasswordField)
    /// One tile per expected item, e.g. one per QR code of a backup.
    case tileGrid(TileGrid)
}

/// One row of a pick list.
package struct PickItem: Hashable, Sendable, Identifiable {
    /// Stable across screens, so the engine can tell which item was picked.
    public var id: String
    package var title: String
    /// Secondary text shown beside the title, e.g. a signal strength `-61 dBm`.
    package var detail: String?

    package init(id: String, title: String, detail: String? = nil) {
        self.id = id
        self.title = title
        self.detail = detail
    }
}

/// One button of an action row.
package struct ScreenAction: Hashable, Sendable, Identifiable {
    /// What the button is for; renderers give each role its own weight and colour.
    package enum Role: String, CaseIterable, Hashable, Sendable {
        /// The expected next step.
        case primary
        /// The alternative.
        case secondary
        /// Something that throws work away.
        case destructive
    }

    /// Stable across screens, so the engine can tell which button was chosen.
    public var id: String
    package var title: String
    package var role: Role

    package init(id: String, title: String, role: Role = .secondary) {
        self.id = id
        self.title = title
        self.role = role
    }
}

/// A password field. It carries only the number of characters typed, never the characters:
/// screens are published, logged and snapshotted, and a secret has no place in any of those.
package struct PasswordField: Hashable, Sendable {
    package enum Status: String, CaseIterable, Hashable, Sendable {
        /// Ready for typing.
        case normal
        /// The last attempt failed (the field is drawn in the error colour).
        case error
        /// Not accepting input, e.g. while decrypting.
        case disabled
    }

    /// How many characters have been typed, drawn as that many bullets.
    package var maskedLength: Int
    /// Ready, showing an error, or not accepting input; a renderer picks its colours from it.
    public var status: Status
    /// Whether typing goes here now.
    package var focused: Bool

    package init(maskedLength: Int = 0, status: Status = .normal, focused: Bool = true) {
        self.maskedLength = max(0, maskedLength)
        self.status = status
        self.focused = focused
    }
}

/// A grid of tiles, one per expected item, with an optional progress summary above it.
package struct TileGrid: Hashable, Sendable {
    /// One tile. The index is the item's own number, so tiles can fill in any order.
    package struct Tile: Hashable, Sendable {
        /// Whether this tile's item has been seen yet.
        public enum State: String, CaseIterable, Hashable, Sendable {
            /// Its item has not been read yet: drawn empty.
            case pending
            /// Its item was read: drawn filled.
            case scanned
        }

        /// The item's own number (0-based in the usual grid), so tiles can be marked in any order.
        public var index: Int
        /// Pending until its item is scanned, then drawn as done.
        public var state: State

        package init(index: Int, state: State = .pending) {
            self.index = index
            self.state = state
        }
    }

    package var tiles: [Tile]
    /// The count in words, e.g. `3 of 8 scanned`.
    package var progressLine: String?
    /// The count as a fraction from 0 to 1, for a progress bar; `nil` draws no bar.
    package var fraction: Double?

    package init(tiles: [Tile], progressLine: String? = nil, fraction: Double? = nil) {
        self.tiles = tiles
        self.progressLine = progressLine
        self.fraction = fraction
    }

    /// The usual grid: `count` tiles numbered `0..<count`, those in `scanned` marked, with the
    /// line `n of count scanned` and the matching fraction. Indices outside the range are ignored.
    package init(count: Int, scanned: Set<Int>) {
        let total = max(0, count)
        let tiles = (0..<total).map { Tile(index: $0, state: scanned.contains($0) ? .scanned : .pending) }
        let done = tiles.filter { $0.state == .scanned }.count
        self.init(tiles: tiles, progressLine: "\(done) of \(total) scanned",
                  fraction: total == 0 ? nil : Double(done) / Double(total))
    }

    package var scannedCount: Int { tiles.filter { $0.state == .scanned }.count }
}
