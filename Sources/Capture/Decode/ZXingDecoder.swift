import CZXingBridge
import HAL

/// QR codes through zxing-cpp (Debian's libzxing, via the C bridge in `CZXingBridge`).
///
/// Each symbol's bytes are zxing's `bytes()`, the content exactly as encoded, never its text
/// rendering, so alphanumeric VB1 codes and binary payloads come back byte for byte. Only the QR
/// symbology is searched.
///
/// zxing keeps no state between calls and reads the frame's pixels in place, so one decoder may be
/// used from many threads at once without a lock (unlike zbar's scanner).
public struct ZXingDecoder: CodeDecoder {
    /// The name `CodeDecoders.decoder(named:)` and `HWPROBE_DECODER` select this decoder by.
    public let name = "zxing"
    /// The settings every frame is searched with; fixed for the decoder's life.
    public let options: Options

    /// What zxing tries on each frame. The defaults read the most of `scripts/bench-decode`'s
    /// codes for the least time of the settings tried there (`--decoders zxing/harder,…`):
    /// trying harder cost more and read nothing more.
    public struct Options: Sendable, Hashable {
        /// Scan every row for finder patterns and try each candidate harder. Slower; rarely needed
        /// for the large codes a backup shows, so off by default.
        public var tryHarder: Bool
        /// Also search downscaled copies of frames whose short side is `downscaleThreshold` or
        /// more: shrinking averages noise away (without it zxing lost half of the benchmark's noisy
        /// 1920×1080 codes, for a third less time).
        public var tryDownscale: Bool
        /// The shorter side from which frames are downscaled too (zxing's own default is 500).
        public var downscaleThreshold: Int
        /// How much smaller each downscaled copy is, 2...4.
        public var downscaleFactor: Int
        /// How grey becomes black and white before zxing looks for finder patterns.
        public var binarizer: Binarizer
        /// The most symbols to look for in one frame.
        public var maximumSymbols: Int

        /// Defaults as benchmarked; override one setting at a time when comparing.
        public init(tryHarder: Bool = false, tryDownscale: Bool = true, downscaleThreshold: Int = 500, downscaleFactor: Int = 3,
                    binarizer: Binarizer = .localAverage, maximumSymbols: Int = 8) {
            self.tryHarder = tryHarder
            self.tryDownscale = tryDownscale
            self.downscaleThreshold = downscaleThreshold
            self.downscaleFactor = downscaleFactor
            self.binarizer = binarizer
            self.maximumSymbols = maximumSymbols
        }
    }

    /// zxing's thresholding choices.
    public enum Binarizer: Sendable, Hashable {
        /// A threshold from each 8×8 block's neighbourhood: copes with uneven light and noise
        /// (zxing's default, and the one that read the most in the benchmark).
        case localAverage
        /// One threshold for the whole frame, from its histogram: a little cheaper, but it lost
        /// a fifth of the benchmark's codes, mostly blurred and noisy ones.
        case globalHistogram
        /// 127 for every pixel: the cheapest, and only right while the exposure puts the code's
        /// dark and light on either side of mid-grey.
        case fixedThreshold

        var bridged: zxb_binarizer {
            switch self {
            case .localAverage: ZXB_BINARIZER_LOCAL_AVERAGE
            case .globalHistogram: ZXB_BINARIZER_GLOBAL_HISTOGRAM
            case .fixedThreshold: ZXB_BINARIZER_FIXED_THRESHOLD
            }
        }
    }

    /// A decoder with the benchmarked defaults unless told otherwise.
    public init(options: Options = Options()) {
        self.options = options
    }

    /// The QR symbols zxing read, in zxing's order; an empty list for a malformed frame or a zxing failure.
    public func decode(_ frame: GrayFrame) -> [DecodedSymbol] {
        // The protocol has no failure case: a malformed frame or a zxing failure reads as "no code here",
        // and the next frame gets its own chance.
        (try? symbols(in: frame)) ?? []
    }

    /// Decodes one frame, saying why when zxing could not look at it at all.
    public func symbols(in frame: GrayFrame) throws(ZXingError) -> [DecodedSymbol] {
        try located(in: frame).map(\.symbol)
    }

    /// The symbols and where each is in the frame (the bounding box of the corners zxing found),
    /// for the arrangement that asks zbar only about places zxing has not read.
    ///
    /// With `area`, only that rectangle of the frame is searched, in place (no copy: zxing is
    /// handed the rectangle's first pixel and the frame's stride), and regions still come back in
    /// the frame's pixels.
    func located(in frame: GrayFrame, within area: FrameRegion? = nil) throws(ZXingError) -> [(symbol: DecodedSymbol, region: FrameRegion)] {
        guard frame.width > 0, frame.height > 0, frame.stride >= frame.width,
              frame.pixels.count >= frame.stride * (frame.height - 1) + frame.width
        else { throw .badFrame("\(frame.width)x\(frame.height), stride \(frame.stride), \(frame.pixels.count) bytes") }
        let box = area ?? FrameRegion(x: 0, y: 0, width: frame.width, height: frame.height)
        guard box.x >= 0, box.y >= 0, box.width > 0, box.height > 0,
              box.x + box.width <= frame.width, box.y + box.height <= frame.height,
              let width = Int32(exactly: box.width), let height = Int32(exactly: box.height),
              let stride = Int32(exactly: frame.stride)
        else { throw .badFrame("area \(box) outside the \(frame.width)x\(frame.height) frame") }
        let offset = box.y * frame.stride + box.x
        var hints = zxb_options(
            try_harder: options.tryHarder ? 1 : 0,
            try_rotate: 0,  // QR codes carry their own orientation; rotating only repeats the search.
            try_downscale: options.tryDownscale ? 1 : 0,
            downscale_threshold: Int32(clamping: options.downscaleThreshold),
            downscale_factor: Int32(clamping: options.downscaleFactor),
            binarizer: options.binarizer.bridged,
            max_symbols: Int32(min(max(options.maximumSymbols, 1), 255)))
        // zxing searches downscaled copies only of pictures larger than the threshold; a crop of a
        // frame that would be searched so is searched so too (a large noisy code that only the
        // smaller copy reads stays readable when only its part of the frame is looked at).
        if let area, options.tryDownscale, max(frame.width, frame.height) > options.downscaleThreshold {
            hints.downscale_threshold = Int32(clamping: min(options.downscaleThreshold, max(area.width, area.height) - 1))
        }
        var found: UnsafeMutablePointer<zxb_results>?
        let status = frame.pixels.withUnsafeBufferPointer { pixels in
            zxb_decode_qr(pixels.baseAddress.map { $0 + offset }, pixels.count - offset, width, height, stride, &hints, &found)
        }
        switch status {
        case Int32(ZXB_OK): break
        case Int32(ZXB_OUT_OF_MEMORY): throw .outOfMemory
        case Int32(ZXB_BAD_ARGUMENT): throw .badFrame("zxing refused \(frame.width)x\(frame.height), stride \(frame.stride)")
        default: throw .zxing(String(cString: zxb_last_error()))
        }
        guard let found else { return [] }
        defer { zxb_results_free(found) }
        return UnsafeBufferPointer(start: found.pointee.symbols, count: found.pointee.count).map { symbol in
            (DecodedSymbol(bytes: symbol.length == 0 ? [] : Array(UnsafeBufferPointer(start: symbol.bytes, count: symbol.length))),
             FrameRegion(x: box.x + Int(symbol.left), y: box.y + Int(symbol.top), width: Int(symbol.right) - Int(symbol.left) + 1,
                         height: Int(symbol.bottom) - Int(symbol.top) + 1))
        }
    }
}

/// Why zxing could not look at a frame (as opposed to looking and finding nothing).
public enum ZXingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The frame's size, stride and pixel count do not agree.
    case badFrame(String)
    /// zxing could not allocate what it needed for this frame.
    case outOfMemory
    /// zxing threw; its message.
    case zxing(String)

    /// A short phrase with the reason, for logs and `hwprobe` messages.
    public var description: String {
        switch self {
        case .badFrame(let why): "malformed frame for zxing: \(why)"
        case .outOfMemory: "zxing ran out of memory"
        case .zxing(let message): "zxing failed: \(message)"
        }
    }
}
