import HAL

/// The decoder `hwprobe import` uses: zxing on every frame, and zbar on the same frame only when
/// zxing read nothing although a code seems to be in view.
///
/// Why this arrangement (`scripts/bench-decode`: CPU time per frame on one core, 5 seeds of 240
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
/// When zxing reads a frame, zbar is not asked, so a second code that only zbar could read in a
/// frame where zxing read another is not found (VB1 backups show one code at a time).
public struct ZXingThenZBarDecoder: CodeDecoder {
    public let name: String
    public let fallback: Fallback
    let zxing: ZXingDecoder
    /// zbar; tests hand in a stand-in that counts its calls.
    let zbar: any CodeDecoder

    /// When zbar gets a turn, after zxing read nothing.
    public enum Fallback: Sendable, Hashable {
        /// When `CodeRegions` sees a code (the default).
        case whenHinted
        /// On every such frame: the benchmark's baseline, for what the hint saves.
        case always
    }

    public init(fallback: Fallback = .whenHinted, zxing: ZXingDecoder = ZXingDecoder(), zbar: any CodeDecoder = ZBarDecoder()) {
        self.fallback = fallback
        self.zxing = zxing
        self.zbar = zbar
        name = switch fallback {
        case .whenHinted: "zxing+zbar"
        case .always: "zxing+zbar/always"
        }
    }

    public func decode(_ frame: GrayFrame) -> [DecodedSymbol] {
        let symbols: [DecodedSymbol]
        do { symbols = try zxing.symbols(in: frame) } catch {
            // zxing could not look at this frame at all (malformed, out of memory): zbar may still.
            return zbar.decode(frame)
        }
        if !symbols.isEmpty { return symbols }
        switch fallback {
        case .always:
            return zbar.decode(frame)
        case .whenHinted:
            guard !CodeRegions.find(in: frame, limit: 1).isEmpty else { return [] }
            return zbar.decode(frame)
        }
    }
}
