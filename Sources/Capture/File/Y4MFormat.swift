import HAL

/// The colour spaces (`C` tag) of an 8-bit YUV4MPEG2 stream. Only the Y plane is ever used; the
/// colour space says how many chroma bytes follow it in each frame.
package enum Y4MColorSpace: String, Sendable, Hashable, CaseIterable {
    case c420jpeg = "420jpeg"
    case c420paldv = "420paldv"
    case c420mpeg2 = "420mpeg2"
    case c420 = "420"
    case c422 = "422"
    case c411 = "411"
    case c444 = "444"
    case c444alpha = "444alpha"
    case mono = "mono"

    /// What a header without a `C` tag means (the format's default).
    package static let `default`: Y4MColorSpace = .c420jpeg

    /// Bytes after the Y plane in one frame: the chroma planes (and alpha for `444alpha`).
    package func extraPlaneBytes(width: Int, height: Int) -> Int {
        switch self {
        case .c420jpeg, .c420paldv, .c420mpeg2, .c420: 2 * ((width + 1) / 2) * ((height + 1) / 2)
        case .c422: 2 * ((width + 1) / 2) * height
        case .c411: 2 * ((width + 3) / 4) * height
        case .c444: 2 * width * height
        case .c444alpha: 3 * width * height
        case .mono: 0
        }
    }
}

/// The stream header of a YUV4MPEG2 file: `YUV4MPEG2 W640 H480 F30:1 Ip A1:1 C420jpeg`.
public struct Y4MHeader: Sendable, Hashable {
    /// Picture width in pixels (`W` tag); parsing refuses more than `maximumDimension`.
    public var width: Int
    /// Picture height in pixels (`H` tag); parsing refuses more than `maximumDimension`.
    public var height: Int
    /// Frames per second as the `F` tag gives it: numerator / denominator.
    package var frameRateNumerator: Int
    package var frameRateDenominator: Int
    package var colorSpace: Y4MColorSpace
    /// The `I` tag (`p`, `t`, `b`, `m`, or `?`); kept for information, frames are read as stored.
    package var interlacing: Character

    /// Larger pictures are refused as a damaged header rather than allocated.
    package static let maximumDimension = 16_384
    /// No camera makes more (8K UHD is 33 million): a picture larger than this is a damaged or
    /// hostile header, refused before a frame of it is allocated. 16384×16384 would be 256 MiB.
    package static let maximumPixels = 40_000_000

    package init(width: Int, height: Int, frameRateNumerator: Int = 30, frameRateDenominator: Int = 1,
                colorSpace: Y4MColorSpace = .default, interlacing: Character = "p") {
        self.width = width
        self.height = height
        self.frameRateNumerator = frameRateNumerator
        self.frameRateDenominator = frameRateDenominator
        self.colorSpace = colorSpace
        self.interlacing = interlacing
    }

    /// Bytes of picture data in one frame (every plane), not counting the `FRAME` line.
    package var frameBytes: Int { width * height + colorSpace.extraPlaneBytes(width: width, height: height) }

    /// Time between frames (rounded to the nanosecond).
    package var frameInterval: Duration { timestamp(ofFrame: 1) }

    /// When frame `index` (from 0) is shown, computed from the rate without accumulating rounding.
    public func timestamp(ofFrame index: UInt64) -> Duration {
        let num = Int128(max(frameRateNumerator, 1))
        let den = Int128(frameRateDenominator)
        let nanos = Int128(index) * den * 1_000_000_000 / num
        return .nanoseconds(Int64(clamping: nanos))
    }

    /// The header line, without its newline.
    public var line: String {
        "YUV4MPEG2 W\(width) H\(height) F\(frameRateNumerator):\(frameRateDenominator) I\(interlacing) A1:1 C\(colorSpace.rawValue)"
    }

    /// Parses the header line (without its newline). `source` names the file in error messages.
    package init(parsing bytes: [UInt8], source: String) throws(CameraError) {
        let magic = Array("YUV4MPEG2".utf8)
        guard bytes.count >= magic.count, Array(bytes[0..<magic.count]) == magic,
              bytes.count == magic.count || bytes[magic.count] == 0x20
        else {
            let start = String(decoding: bytes.prefix(16).map { (0x20...0x7E).contains($0) ? $0 : 0x3F }, as: UTF8.self)
            throw .badFile("\(source) is not a YUV4MPEG2 (.y4m) file: it should start with 'YUV4MPEG2 ', not '\(start)'")
        }
        var width: Int?
        var height: Int?
        var rate = (30, 1)
        var colorSpace = Y4MColorSpace.default
        var interlacing: Character = "p"
        let tokens = bytes[magic.count...].split(separator: 0x20)
        for token in tokens {
            let text = String(decoding: token, as: UTF8.self)
            guard let tag = text.first else { continue }
            let value = String(text.dropFirst())
            switch tag {
            case "W":
                guard let w = Int(value), w > 0, w <= Self.maximumDimension else {
                    throw .badFile("\(source): header has a bad width '\(text)' (expected W1…W\(Self.maximumDimension))")
                }
                width = w
            case "H":
                guard let h = Int(value), h > 0, h <= Self.maximumDimension else {
                    throw .badFile("\(source): header has a bad height '\(text)' (expected H1…H\(Self.maximumDimension))")
                }
                height = h
            case "F":
                let parts = value.split(separator: ":", omittingEmptySubsequences: false)
                guard parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]), n > 0, d > 0 else {
                    throw .badFile("\(source): header has a bad frame rate '\(text)' (expected e.g. F30:1)")
                }
                rate = (n, d)
            case "C":
                guard let space = Y4MColorSpace(rawValue: value) else {
                    let known = Y4MColorSpace.allCases.map { "C" + $0.rawValue }.joined(separator: ", ")
                    throw .badFile("\(source): colour space '\(text)' is not supported (8-bit only: \(known))")
                }
                colorSpace = space
            case "I":
                interlacing = value.first ?? "?"
            default:
                break // A (aspect), X (comments/extensions) and unknown tags carry nothing we need.
            }
        }
        guard let width else { throw .badFile("\(source): header has no width (W tag)") }
        guard let height else { throw .badFile("\(source): header has no height (H tag)") }
        guard width * height <= Self.maximumPixels else {
            throw .badFile("\(source): header claims \(width)x\(height) = \(width * height) pixels, more than the \(Self.maximumPixels) a camera file may have (a damaged header?)")
        }
        self.init(width: width, height: height, frameRateNumerator: rate.0, frameRateDenominator: rate.1,
                  colorSpace: colorSpace, interlacing: interlacing)
    }
}
