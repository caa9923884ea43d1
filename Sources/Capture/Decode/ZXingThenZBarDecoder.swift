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
/// - zbar gets the whole frame, not just the hinted patch: zbar's QR reader is so sensitive to
///   the exact pixels it sees that a crop around a code it reads in the full frame can fail
///   (seen with crops a few pixels wider than the symbol), and the point of the fallback is to
///   read whatever zbar alone would read.
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
    public let name: String
    public let fallback: Fallback
    let zxing: ZXingDecoder
    /// zbar; tests hand in a stand-in that counts its calls.
    let zbar: any CodeDecoder
    private let evidence = Evidence()

    /// When zbar gets a turn.
    public enum Fallback: Sendable, Hashable {
        /// By evidence across frames (the default): see the type's documentation.
        case byEvidence
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

    public init(fallback: Fallback = .byEvidence, zxing: ZXingDecoder = ZXingDecoder(), zbar: any CodeDecoder = ZBarDecoder()) {
        self.fallback = fallback
        self.zxing = zxing
        self.zbar = zbar
        name = switch fallback {
        case .byEvidence: "zxing+zbar"
        case .whenHinted: "zxing+zbar/hinted"
        case .always: "zxing+zbar/always"
        }
    }

    public func decode(_ frame: GrayFrame) -> [DecodedSymbol] {
        let answer = decodeFirst(frame)
        return answer.symbols + (answer.second?() ?? [])
    }

    /// zxing's answer now, and zbar's turn (when the arrangement gives it one) as work to run
    /// apart: `DecodingPipeline` runs it on a second lane, so a frame zxing reads is never kept
    /// waiting behind zbar. The work returns only what zbar adds.
    public func decodeFirst(_ frame: GrayFrame) -> FirstLaneAnswer {
        let located: [(symbol: DecodedSymbol, region: FrameRegion)]
        let zbar = zbar
        do { located = try zxing.located(in: frame) } catch {
            // zxing could not look at this frame at all (malformed, out of memory): zbar may still.
            return FirstLaneAnswer(symbols: [], second: { zbar.decode(frame) })
        }
        let symbols = located.map(\.symbol)
        let read = located.map(\.region)
        switch fallback {
        case .always:
            return symbols.isEmpty ? FirstLaneAnswer(symbols: [], second: { zbar.decode(frame) })
                : FirstLaneAnswer(symbols: symbols, sighting: Sighting(regions: read, read: read))
        case .whenHinted:
            if !symbols.isEmpty { return FirstLaneAnswer(symbols: symbols, sighting: Sighting(regions: read, read: read)) }
            let regions = CodeRegions.find(in: frame, limit: 1)
            guard !regions.isEmpty else { return FirstLaneAnswer(symbols: [], sighting: Sighting(regions: [], read: [])) }
            return FirstLaneAnswer(symbols: [], second: { zbar.decode(frame) }, sighting: Sighting(regions: regions, read: []))
        case .byEvidence:
            let regions = CodeRegions.find(in: frame, limit: 3)
            let sighting = Sighting(regions: regions, read: read)
            guard let asked = evidence.zbarWanted(regions: regions, read: read) else {
                return FirstLaneAnswer(symbols: symbols, sighting: sighting)
            }
            let evidence = evidence
            return FirstLaneAnswer(symbols: symbols, second: {
                let more = zbar.decode(frame).filter { !symbols.contains($0) }
                evidence.zbarRan(on: asked, readSomething: !more.isEmpty)
                return more
            }, sighting: sighting)
        }
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
