import HAL
import Synchronization

/// The decoder `hwprobe import` uses: zxing on every frame, and zbar on the same frame only when
/// the evidence says a code is in view that zxing has not read.
///
/// Why zxing first, and the hint (`scripts/bench-decode`: CPU time per frame on one core, 5 seeds of 240
/// frames, 192 codes each, at 640×480, 1280×720 and 1920×1080):
/// - zxing is the fast one and reads the most: 1280×720 in 3.9 ms median against zbar's 30, and
///   166–177 codes a seed against zbar's 95–109 (zbar loses most noisy and skewed codes).
/// - zbar still reads a few codes zxing misses (1–5 a seed): small (3-pixel modules) blurred
///   codes, and a low-contrast one.
/// - zbar after every frame zxing reads nothing in would pay zbar's full price on every frame
///   without a code, which is most of a camera's frames before the backup is held up: 31 ms
///   instead of 4 at 1280×720.
/// - So zbar runs only on a hint: `CodeRegions` (0.1–0.6 ms) sees a patch of dense two-way
///   texture. It fired on every frame that only zbar could read, and on 3–14 of a seed's 48 frames
///   without a code (half of the benchmark's scenes hold a page of small text, which is
///   code-like texture; on scenes without one it never fired). (zxing 1.4 cannot give the hint itself: it
///   reports nothing for a symbol it located but could not read.) The arrangement lost no code
///   either decoder read alone, at 3.9 ms median (p90 6.8) at 1280×720; the p90 at 640×480 (11 ms)
///   is frames showing a code neither reads, where zbar gets its turn.
/// - zbar looks at the asked regions' crops first (the region and a tenth of its side around it),
///   and at the whole frame only on every other turn whose crops read nothing. zbar's QR reader
///   is sensitive to the exact pixels it sees, so a crop and the whole frame read *different*
///   things (`decode-bench --crop-study`, seed 1, on the frames where zxing read nothing and a
///   region was seen): at 720p the whole frame read 26 codes and the crops 18, only 2 of them the
///   same; at 1080p 4 and 19, 3 the same; and a crop costs 0.04–0.23× the whole frame. Neither
///   alone is a superset, so a failed crop still gets the whole frame, half the time: on the
///   benchmark videos that read every code and hard showing the whole frame alone read, and more,
///   at 0.19× the C zbar loop at 1080p instead of 0.25×.
///
/// Scheduled by evidence (the default since issue 16; `scripts/bench-decode --video` on camera-like
/// videos): on real video the hint alone fires on most frames of a move between codes (motion
/// blur looks like code texture) and on a page of text held in view, so zbar ran on a third of a
/// 720p video's frames and the arrangement cost 0.33–0.40× the plain C zbar loop. Now zbar gets a
/// frame only for a code-like region that
/// - zxing did not read in this frame (zxing says where its codes are),
/// - *persists*: it overlaps an unread one of the frame before (a blurred move rarely holds still
///   for two frames; a code someone holds up does),
/// - is not where zxing read a code in the last `recentReadWindow` frames (the same card, moving
///   or refocusing, is not worth zbar's price), and
/// - zbar has not just tried in vain: after zbar reads nothing new there, that place waits
///   `failedBackoff` frames, twice that after the next failure, and so on (a page of text in view
///   costs zbar a few frames, not a third of them);
/// and zbar runs at most once in `fallbackInterval` frames. So every code in a frame is read: a
/// second code only zbar can read, beside one zxing read, is no longer lost. The state is per
/// decoder, hence per pipeline (`CodeDecoders.decoder(named:)` makes a new one each time).
public struct ZXingThenZBarDecoder: TwoLaneDecoder {
    /// `zxing+zbar`, with a suffix for the non-default arrangements, so benchmark output says which ran.
    public let name: String
    /// When zbar gets its turn; fixed for the decoder's life.
    public let fallback: Fallback
    let zxing: ZXingDecoder
    /// zbar; tests hand in a stand-in that counts its calls.
    let zbar: any CodeDecoder
    private let evidence = Evidence()
    /// Where to look in each frame (nothing, a crop, the whole frame), or nil to look at every
    /// frame whole: see `ChangeGate`.
    package let gate: ChangeGate?

    /// When zbar gets a turn.
    public enum Fallback: Sendable, Hashable {
        /// By evidence across frames (the default), zbar looking at the asked regions' crops
        /// first and at the whole frame on every other turn whose crops read nothing: see the
        /// type's documentation.
        case byEvidence
        /// By evidence, zbar always on the whole frame (the default before the crops).
        case byEvidenceWholeFrame
        /// Whenever zxing read nothing and `CodeRegions` sees a code in this frame alone.
        case whenHinted
        /// On every frame zxing read nothing in: the benchmark's baseline, for what the hint saves.
        case always
    }

    /// Frames after zxing read a code during which zbar is not asked about the same place.
    public static let recentReadWindow = 10
    /// zbar runs at most once in this many frames.
    public static let fallbackInterval = 3
    /// Frames a place waits after zbar read nothing new there (doubling with each failure).
    public static let failedBackoff = 8

    /// The default arrangement; tests may pass stand-in decoders.
    public init(fallback: Fallback = .byEvidence, zxing: ZXingDecoder = ZXingDecoder(), zbar: any CodeDecoder = ZBarDecoder()) {
        self.init(fallback: fallback, zxing: zxing, zbar: zbar, gate: nil)
    }

    /// With a `ChangeGate`, frames (and parts of frames) that show nothing new are not decoded
    /// again: what `hwprobe import` uses (`CodeDecoders.defaultName`).
    /// `name` overrides the arrangement's own (for the benchmark's variants).
    package init(fallback: Fallback = .byEvidence, zxing: ZXingDecoder = ZXingDecoder(), zbar: any CodeDecoder = ZBarDecoder(),
                 gate: ChangeGate?, name: String? = nil) {
        self.fallback = fallback
        self.zxing = zxing
        self.zbar = zbar
        self.gate = gate
        let arrangement = switch fallback {
        case .byEvidence: "zxing+zbar"
        case .byEvidenceWholeFrame: "zxing+zbar/whole"
        case .whenHinted: "zxing+zbar/hinted"
        case .always: "zxing+zbar/always"
        }
        self.name = name ?? arrangement
    }

    /// zxing's symbols and then any zbar adds, both on this thread: for callers without a second lane.
    public func decode(_ frame: GrayFrame) -> [DecodedSymbol] {
        let answer = decodeFirst(frame)
        return answer.symbols + (answer.second?() ?? [])
    }

    /// zxing's answer now, and zbar's turn (when the arrangement gives it one) as work to run
    /// apart: `DecodingPipeline` runs it on a second lane, so a frame zxing reads is never kept
    /// waiting behind zbar. The work returns only what zbar adds.
    package func decodeFirst(_ frame: GrayFrame) -> FirstLaneAnswer {
        let zbar = zbar
        var area: FrameRegion?
        var carried: [ChangeGate.LocatedSymbol] = []
        var signature: TileSignature?
        if let gate {
            switch gate.plan(for: frame) {
            case .skip(let still):
                // Nothing changed since the last look: the codes read then are still there, and so
                // are the code-like regions seen then (a preview keeps outlining them, and its
                // aiming advice keeps seeing an unread patch as one that persists).
                let read = still.map(\.region)
                return FirstLaneAnswer(symbols: Self.unique(still.map(\.symbol)),
                                       sighting: Sighting(regions: evidence.seenRegions(), read: read))
            case .look(let crop, let outside, let taken):
                (area, carried, signature) = (crop, outside, taken)
            }
        }
        let found: [(symbol: DecodedSymbol, region: FrameRegion)]
        do { found = try zxing.located(in: frame, within: area) } catch {
            gate?.looked(at: nil, in: frame, signature: nil, read: [])
            // zxing could not look at this frame at all (malformed, out of memory): zbar may still.
            return FirstLaneAnswer(symbols: [], second: { zbar.decode(frame) })
        }
        gate?.looked(at: area, in: frame, signature: signature, read: found.map { ChangeGate.LocatedSymbol(symbol: $0.symbol, region: $0.region) })
        let symbols = Self.unique(found.map(\.symbol) + carried.map(\.symbol))
        let read = found.map(\.region) + carried.map(\.region)
        /// The code-like regions worth a thought: those in the looked-at area (outside it nothing changed).
        func regions(limit: Int) -> [FrameRegion] {
            let all = CodeRegions.find(in: frame, limit: area == nil ? limit : limit + 2)
            guard let area else { return all }
            return Array(all.filter { $0.intersects(area) }.prefix(limit))
        }
        switch fallback {
        case .always:
            return symbols.isEmpty ? FirstLaneAnswer(symbols: [], second: { zbar.decode(frame) })
                : FirstLaneAnswer(symbols: symbols, sighting: Sighting(regions: read, read: read))
        case .whenHinted:
            if !symbols.isEmpty { return FirstLaneAnswer(symbols: symbols, sighting: Sighting(regions: read, read: read)) }
            let regions = regions(limit: 1)
            guard !regions.isEmpty else { return FirstLaneAnswer(symbols: [], sighting: Sighting(regions: [], read: [])) }
            return FirstLaneAnswer(symbols: [], second: { zbar.decode(frame) }, sighting: Sighting(regions: regions, read: []))
        case .byEvidence, .byEvidenceWholeFrame:
            let regions = regions(limit: 3)
            if gate != nil { evidence.saw(regions, within: area) }
            let sighting = Sighting(regions: gate == nil ? regions : evidence.seenRegions(), read: read)
            guard let asked = evidence.zbarWanted(regions: regions, read: read) else {
                return FirstLaneAnswer(symbols: symbols, sighting: sighting)
            }
            let evidence = evidence
            let cropFirst = fallback == .byEvidence
            return FirstLaneAnswer(symbols: symbols, second: {
                var more: [DecodedSymbol] = []
                if cropFirst {
                    for region in asked {
                        for symbol in zbar.decode(Self.crop(frame, region, margin: Self.cropMargin))
                        where !symbols.contains(symbol) && !more.contains(symbol) { more.append(symbol) }
                    }
                    if more.isEmpty, evidence.wholeFrameTurn() { more = zbar.decode(frame).filter { !symbols.contains($0) } }
                } else {
                    more = zbar.decode(frame).filter { !symbols.contains($0) }
                }
                evidence.zbarRan(on: asked, readSomething: !more.isEmpty)
                return more
            }, sighting: sighting)
        }
    }

    /// `symbols` without repeats, in order.
    static func unique(_ symbols: [DecodedSymbol]) -> [DecodedSymbol] {
        var seen = Set<DecodedSymbol>()
        return symbols.filter { seen.insert($0).inserted }
    }

    /// How far a crop reaches past its region, as a fraction of the region's longer side.
    public static let cropMargin = 0.1

    /// `region` grown by `margin` of its longer side on every side and cut to the frame, as a
    /// frame of its own (rows packed); the whole frame if that leaves nothing.
    public static func crop(_ frame: GrayFrame, _ region: FrameRegion, margin: Double) -> GrayFrame {
        let grow = Int(Double(max(region.width, region.height)) * margin)
        let x0 = max(0, region.x - grow), y0 = max(0, region.y - grow)
        let x1 = min(frame.width, region.x + region.width + grow), y1 = min(frame.height, region.y + region.height + grow)
        guard x1 > x0, y1 > y0, frame.stride >= frame.width,
              frame.pixels.count >= frame.stride * (frame.height - 1) + frame.width else { return frame }
        var pixels = [UInt8]()
        pixels.reserveCapacity((x1 - x0) * (y1 - y0))
        for y in y0..<y1 { pixels.append(contentsOf: frame.pixels[(y * frame.stride + x0)..<(y * frame.stride + x1)]) }
        return GrayFrame(width: x1 - x0, height: y1 - y0, pixels: pixels, timestamp: frame.timestamp, sequence: frame.sequence)
    }

    /// What the arrangement remembers between frames.
    final class Evidence: Sendable {
        private struct State {
            var frame = 0
            /// The code-like regions zxing did not read in the frame before.
            var previousUnread: [FrameRegion] = []
            /// Where codes were read, and in which frame.
            var read: [(region: FrameRegion, frame: Int)] = []
            /// Places zbar read nothing in: not before `until`; `failures` so far.
            var failed: [(region: FrameRegion, until: Int, failures: Int)] = []
            var lastZBar = Int.min / 2
            /// Turns whose crops read nothing, for giving every other one the whole frame.
            var cropFailures = 0
            /// With a change gate: the code-like regions in view as of the last look at each place.
            var seen: [FrameRegion] = []
        }

        private let state = Mutex(State())

        /// Called once per frame with what `CodeRegions` found and where zxing read codes: the
        /// regions to ask zbar about, or nil when zbar is not worth its price on this frame.
        func zbarWanted(regions: [FrameRegion], read: [FrameRegion]) -> [FrameRegion]? {
            state.withLock { s -> [FrameRegion]? in
                s.frame += 1
                let now = s.frame
                for region in read { s.read.append((region, now)) }
                s.read.removeAll { now - $0.frame > ZXingThenZBarDecoder.recentReadWindow }
                s.failed.removeAll { now - $0.until > 64 * ZXingThenZBarDecoder.failedBackoff }
                let unread = regions.filter { region in !read.contains { $0.overlaps(region) } }
                defer { s.previousUnread = unread }
                let fresh = unread.filter { region in
                    s.previousUnread.contains { $0.overlaps(region) }
                        && !s.read.contains { $0.region.overlaps(region) }
                        && !s.failed.contains { $0.until > now && $0.region.overlaps(region) }
                }
                guard !fresh.isEmpty, now - s.lastZBar >= ZXingThenZBarDecoder.fallbackInterval else { return nil }
                s.lastZBar = now
                return fresh
            }
        }

        /// The code-like regions looked at now: within `area` (nil: the whole frame) they replace
        /// what was seen there before; elsewhere nothing changed, so what was seen stays.
        func saw(_ regions: [FrameRegion], within area: FrameRegion?) {
            state.withLock { s in
                s.seen = (area.map { area in s.seen.filter { !$0.intersects(area) } } ?? []) + regions
                if s.seen.count > 8 { s.seen.removeFirst(s.seen.count - 8) }
            }
        }

        /// The code-like regions in view as far as the last looks know.
        func seenRegions() -> [FrameRegion] { state.withLock { $0.seen } }

        /// Whether a turn whose crops read nothing looks at the whole frame too: every other one.
        func wholeFrameTurn() -> Bool {
            state.withLock { s in
                s.cropFailures += 1
                return s.cropFailures % 2 == 1
            }
        }

        /// zbar looked at `regions`: read codes count as read there; nothing new sends each place
        /// to wait, longer each time.
        func zbarRan(on regions: [FrameRegion], readSomething: Bool) {
            state.withLock { s in
                let now = s.frame
                if readSomething {
                    for region in regions { s.read.append((region, now)) }
                    s.failed.removeAll { entry in regions.contains { $0.overlaps(entry.region) } }
                    return
                }
                for region in regions {
                    let failures = (s.failed.filter { $0.region.overlaps(region) }.map(\.failures).max() ?? 0) + 1
                    s.failed.removeAll { $0.region.overlaps(region) }
                    let wait = ZXingThenZBarDecoder.failedBackoff << min(failures - 1, 5)
                    s.failed.append((region, now + wait, failures))
                }
            }
        }
    }
}

extension FrameRegion {
    /// Whether the two share at least a quarter of the smaller one's area.
    public func overlaps(_ other: FrameRegion) -> Bool {
        let width = min(x + self.width, other.x + other.width) - max(x, other.x)
        let height = min(y + self.height, other.y + other.height) - max(y, other.y)
        guard width > 0, height > 0 else { return false }
        return width * height * 4 >= min(self.width * self.height, other.width * other.height)
    }
}
