import CPixelKernels
import HAL
import Synchronization

/// Decides, frame by frame, where the decoders need to look: nowhere when nothing changed since
/// they last looked, a crop around what changed, or the whole frame.
///
/// Why (issue 26): on a page of codes held in front of a camera, zxing spent three quarters of
/// the import's CPU finding and re-sampling, every frame, codes it had read in the frames before.
/// What a frame can add is only where it differs from what was already looked at, so:
/// - each frame's `TileSignature` is compared with the signature of what the decoders last
///   looked at, tile by tile, allowing for a shake of up to a tile (`TileSignature.changed`);
/// - no tile changed: nothing new can be read; the codes read there before are still in view
///   and are reported again (tracked, not re-sampled);
/// - some tiles changed: the decoders look at a crop around them (grown by a margin, and to take
///   in any code already read that it touches), or at the whole frame when that crop would be
///   half of it;
/// - a code read before is read again, in a crop of its own, when it has not been for
///   `verifyInterval` frames (one a frame at most): the next code of an export screen shown in
///   the same place may look just like the last to every cheaper test;
/// - whatever happens, the whole frame is looked at again every `refreshInterval` frames, so a
///   code that only noise or a slow change of light makes readable still gets its chances.
/// The reference is only updated where the decoders looked, so a slow drift adds up until it
/// counts as a change.
package final class ChangeGate: Sendable {
    /// What to do with one frame.
    package enum Plan: Sendable {
        /// Nothing changed: these codes (read before, where they still are) are the frame's.
        case skip(carried: [LocatedSymbol])
        /// Look at `area` (nil: the whole frame); `carried` are the codes read before outside it.
        case look(area: FrameRegion?, carried: [LocatedSymbol], signature: TileSignature?)
    }

    /// A code and where it was read, in frame pixels.
    package struct LocatedSymbol: Sendable, Hashable {
        package var symbol: DecodedSymbol
        package var region: FrameRegion
    }

    /// Frames between two looks at the whole frame, whatever changed.
    package let refreshInterval: Int

    private struct State {
        var reference: TileSignature?
        var tracks: [Track] = []
        var sinceWholeLook = 0
        /// Frames planned so far: the clock that verifications are counted on.
        var frame = 0
        var counts = Counts()

        var carried: [LocatedSymbol] { tracks.map(\.located) }
    }

    /// A code read at a look, followed while it stays: its place's thumbnail then.
    private struct Track: Sendable {
        var located: LocatedSymbol
        var thumbnail: [UInt8]
        /// The frame in which the decoders last read it.
        var readAt: Int
    }

    /// How the frames went: looked at whole, at a crop, or skipped.
    package struct Counts: Sendable, Hashable {
        package var whole = 0
        package var cropped = 0
        package var skipped = 0
    }

    private let state = Mutex(State())

    /// Frames after which a code still in view is read again (one code a frame at most).
    package let verifyInterval: Int

    package init(refreshInterval: Int = 30, verifyInterval: Int = 8) {
        self.refreshInterval = max(1, refreshInterval)
        self.verifyInterval = max(1, verifyInterval)
    }

    /// How the frames planned so far went.
    package var counts: Counts { state.withLock { $0.counts } }

    /// Where to look in `frame`.
    ///
    /// Only a change that could hold something new to read counts: a group of at least two
    /// touching tiles that changed and are *busy* now (as sharp as code texture: a code that
    /// left, an edge that moved or a page going out of focus has nothing to read), outside the
    /// places of codes read before that are still there. A code read before is still there while
    /// the thumbnail of its place looks like the one taken when it was read (`stillThere`): a
    /// hand's shake moves it a little, another code shown in its place (the next code on an
    /// export screen, the next page) looks different, and is read.
    package func plan(for frame: GrayFrame) -> Plan {
        let signature = TileSignature(frame)
        return state.withLock { s -> Plan in
            s.sinceWholeLook += 1
            s.frame += 1
            guard let signature, let reference = s.reference, reference.sameGrid(as: signature),
                  s.sinceWholeLook < refreshInterval else {
                s.counts.whole += 1
                return .look(area: nil, carried: [], signature: signature)
            }
            let busy = signature.busyTiles()
            let gone = s.tracks.filter { !Self.stillThere($0, in: frame) }
            s.tracks.removeAll { track in gone.contains { $0.located == track.located } }
            var candidate = signature.changed(since: reference)
            for index in candidate.indices where candidate[index] && !busy[index] { candidate[index] = false }
            // Where a code read before is no longer itself, something else may be: look there
            // whole, however little its tiles' brightness and texture changed.
            for track in gone { Self.mark(&candidate, in: track.located.region, of: signature) }
            for track in s.tracks {
                Self.clear(&candidate, in: Self.grown(track.located.region, by: signature.tile), of: signature)
            }
            let changed = Self.clustered(candidate, columns: signature.columns)
            guard let box = Self.boundingBox(changed, columns: signature.columns, tile: signature.tile) else {
                // Nothing new: but the code read longest ago is read again now and then, in a crop
                // of its own, so another code shown in its place that a thumbnail cannot tell from
                // it (the codes of one backup share their first bytes) is read within a few frames.
                let now = s.frame
                if let stale = s.tracks.indices.filter({ now - s.tracks[$0].readAt >= verifyInterval })
                    .min(by: { s.tracks[$0].readAt < s.tracks[$1].readAt }) {
                    let area = Self.clip(Self.grown(s.tracks[stale].located.region, by: signature.tile), width: frame.width, height: frame.height)
                    s.counts.cropped += 1
                    return .look(area: area, carried: s.carried.filter { !$0.region.intersects(area) }, signature: signature)
                }
                s.counts.skipped += 1
                return .skip(carried: s.carried)
            }
            // Grown by a quarter of its larger side (at least four tiles), then to take in every
            // code already read that it touches, so a crop never cuts a code in two.
            let grow = max(4 * signature.tile, max(box.width, box.height) / 4)
            var area = Self.clip(FrameRegion(x: box.x - grow, y: box.y - grow, width: box.width + 2 * grow,
                                             height: box.height + 2 * grow), width: frame.width, height: frame.height)
            var grew = true
            while grew {
                grew = false
                for code in s.carried where code.region.intersects(area) && !area.contains(code.region) {
                    area = Self.clip(area.union(code.region), width: frame.width, height: frame.height)
                    grew = true
                }
            }
            if area.width * area.height * 2 >= frame.width * frame.height {
                s.counts.whole += 1
                return .look(area: nil, carried: [], signature: signature)
            }
            s.counts.cropped += 1
            return .look(area: area, carried: s.carried.filter { !$0.region.intersects(area) }, signature: signature)
        }
    }

    /// The decoders looked at `area` (nil: the whole frame) of the frame whose `signature` the
    /// plan carried, and read `read` there (in frame pixels).
    package func looked(at area: FrameRegion?, in frame: GrayFrame, signature: TileSignature?, read: [LocatedSymbol]) {
        let thumbnails = read.map { Self.thumbnail(of: $0.region, in: frame) }
        state.withLock { s in
            let tracks = zip(read, thumbnails).compactMap { code, thumbnail in
                thumbnail.map { Track(located: code, thumbnail: $0, readAt: s.frame) }
            }
            guard let signature else {
                s.reference = nil
                s.tracks = []
                return
            }
            guard let area, var reference = s.reference, reference.sameGrid(as: signature) else {
                s.reference = signature
                s.tracks = tracks
                s.sinceWholeLook = 0
                return
            }
            let tile = signature.tile
            let firstColumn = (area.x + tile - 1) / tile, lastColumn = (area.x + area.width) / tile
            let firstRow = (area.y + tile - 1) / tile, lastRow = (area.y + area.height) / tile
            if firstColumn < lastColumn, firstRow < lastRow {
                for row in firstRow..<min(lastRow, signature.rows) {
                    for column in firstColumn..<min(lastColumn, signature.columns) {
                        let index = row * signature.columns + column
                        reference.brightness[index] = signature.brightness[index]
                        reference.sharpness[index] = signature.sharpness[index]
                    }
                }
            }
            s.reference = reference
            s.tracks = s.tracks.filter { !$0.located.region.intersects(area) } + tracks
        }
    }

    /// `region` grown on every side by a fifth of its larger side and one tile: as far as a hand's
    /// shake takes a code between two looks.
    static func grown(_ region: FrameRegion, by tile: Int) -> FrameRegion {
        let grow = max(region.width, region.height) / 5 + tile
        return FrameRegion(x: region.x - grow, y: region.y - grow, width: region.width + 2 * grow, height: region.height + 2 * grow)
    }

    /// The tiles wholly or partly inside `region`, as (row, column) ranges clipped to the grid.
    static func tiles(in region: FrameRegion, of signature: TileSignature) -> (rows: Range<Int>, columns: Range<Int>) {
        let tile = signature.tile
        let rows = max(0, region.y / tile)..<min(signature.rows, (region.y + region.height + tile - 1) / tile)
        let columns = max(0, region.x / tile)..<min(signature.columns, (region.x + region.width + tile - 1) / tile)
        return (rows.isEmpty ? 0..<0 : rows, columns.isEmpty ? 0..<0 : columns)
    }

    /// How alike a code's place must look to the thumbnail taken when it was read (normalised
    /// cross-correlation, allowing a shift of a cell, a third of the code's modules' width... in
    /// half-cell steps): the same code shaken or refocused stays well above it, another code of
    /// the same size in its place falls well below.
    static let likenessNeeded = 0.5

    /// The thumbnail of `region` in `frame` (`PK_THUMBNAIL_SIDE` cells a side), or nil when the
    /// region is not wholly inside it.
    static func thumbnail(of region: FrameRegion, in frame: GrayFrame) -> [UInt8]? {
        thumbnail(of: region, in: frame, side: Int(PK_THUMBNAIL_SIDE))
    }

    /// What `region` of `frame` looks like now, to compare with its thumbnail: the region grown
    /// by a cell on every side at twice the resolution; nil when that is not wholly inside the frame.
    static func surroundings(of region: FrameRegion, in frame: GrayFrame) -> [UInt8]? {
        let side = Int(PK_THUMBNAIL_SIDE)
        let cellWidth = region.width / side, cellHeight = region.height / side
        return thumbnail(of: FrameRegion(x: region.x - cellWidth, y: region.y - cellHeight, width: region.width + 2 * cellWidth,
                                         height: region.height + 2 * cellHeight), in: frame, side: 2 * (side + 2))
    }

    private static func thumbnail(of region: FrameRegion, in frame: GrayFrame, side: Int) -> [UInt8]? {
        guard region.x >= 0, region.y >= 0, region.width >= 2 * side, region.height >= 2 * side,
              region.x + region.width <= frame.width, region.y + region.height <= frame.height,
              frame.stride >= frame.width, frame.pixels.count >= frame.stride * (frame.height - 1) + frame.width else { return nil }
        var cells = [UInt8](repeating: 0, count: side * side)
        frame.pixels.withUnsafeBufferPointer { pixels in
            cells.withUnsafeMutableBufferPointer { out in
                guard let base = pixels.baseAddress, let out = out.baseAddress else { return }
                pk_thumbnail(base, frame.stride, Int32(region.x), Int32(region.y), Int32(region.width), Int32(region.height), Int32(side), out)
            }
        }
        return cells
    }

    /// How alike a code's place looks now to its thumbnail taken when it was read (nil when it
    /// is no longer wholly in the frame).
    static func likeness(_ thumbnail: [UInt8], of region: FrameRegion, in frame: GrayFrame) -> Double? {
        guard let around = surroundings(of: region, in: frame), thumbnail.count == Int(PK_THUMBNAIL_SIDE * PK_THUMBNAIL_SIDE) else { return nil }
        return thumbnail.withUnsafeBufferPointer { then in
            around.withUnsafeBufferPointer { around in
                guard let then = then.baseAddress, let around = around.baseAddress else { return 0.0 }
                return pk_thumbnail_likeness(then, around)
            }
        }
    }

    /// Whether the code of `track` is still where it was read.
    private static func stillThere(_ track: Track, in frame: GrayFrame) -> Bool {
        (likeness(track.thumbnail, of: track.located.region, in: frame) ?? 0) >= likenessNeeded
    }

    static func mark(_ tiles: inout [Bool], in region: FrameRegion, of signature: TileSignature) {
        let (rows, columns) = self.tiles(in: region, of: signature)
        for row in rows { for column in columns { tiles[row * signature.columns + column] = true } }
    }

    static func clear(_ tiles: inout [Bool], in region: FrameRegion, of signature: TileSignature) {
        let (rows, columns) = self.tiles(in: region, of: signature)
        for row in rows { for column in columns { tiles[row * signature.columns + column] = false } }
    }

    /// The changed tiles that touch another changed tile. A code that arrives, leaves or comes
    /// into focus spans at least 3×3 tiles; a tile that changed alone is an edge that a slow
    /// drift or a shake has pushed just past the tolerance, and looking at the whole frame for it
    /// (its changes are scattered over the page) would cost as much as not gating at all.
    static func clustered(_ changed: [Bool], columns: Int) -> [Bool] {
        let rows = changed.count / max(1, columns)
        var kept = changed
        for row in 0..<rows {
            for column in 0..<columns where changed[row * columns + column] {
                var touches = false
                for y in max(0, row - 1)...min(rows - 1, row + 1) where !touches {
                    for x in max(0, column - 1)...min(columns - 1, column + 1) where (x != column || y != row) && changed[y * columns + x] {
                        touches = true
                        break
                    }
                }
                kept[row * columns + column] = touches
            }
        }
        return kept
    }

    /// The pixels spanned by the changed tiles, or nil when none changed.
    static func boundingBox(_ changed: [Bool], columns: Int, tile: Int) -> FrameRegion? {
        var left = Int.max, top = Int.max, right = -1, bottom = -1
        for (index, isChanged) in changed.enumerated() where isChanged {
            let (row, column) = index.quotientAndRemainder(dividingBy: columns)
            left = min(left, column)
            right = max(right, column)
            top = min(top, row)
            bottom = max(bottom, row)
        }
        guard right >= 0 else { return nil }
        return FrameRegion(x: left * tile, y: top * tile, width: (right - left + 1) * tile, height: (bottom - top + 1) * tile)
    }

    static func clip(_ region: FrameRegion, width: Int, height: Int) -> FrameRegion {
        let x0 = max(0, region.x), y0 = max(0, region.y)
        let x1 = min(width, region.x + region.width), y1 = min(height, region.y + region.height)
        return FrameRegion(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }
}

extension FrameRegion {
    /// Whether the two share any pixel.
    package func intersects(_ other: FrameRegion) -> Bool {
        x < other.x + other.width && other.x < x + width && y < other.y + other.height && other.y < y + height
    }

    /// Whether `other` lies wholly inside this one.
    package func contains(_ other: FrameRegion) -> Bool {
        other.x >= x && other.y >= y && other.x + other.width <= x + width && other.y + other.height <= y + height
    }

    /// The smallest region holding both.
    package func union(_ other: FrameRegion) -> FrameRegion {
        let x0 = min(x, other.x), y0 = min(y, other.y)
        return FrameRegion(x: x0, y: y0, width: max(x + width, other.x + other.width) - x0,
                           height: max(y + height, other.y + other.height) - y0)
    }
}
