import Capture
import HAL

/// Decoders the benchmark measures besides `CodeDecoders`' own: the arrangement without its hint,
/// the hint alone, and zxing with other options (`--decoders zxing/harder/threshold=300/factor=2`),
/// for trying settings without touching Capture.
enum Experiment {
    struct Named: CodeDecoder {
        var name: String
        var base: any CodeDecoder
        func decode(_ frame: GrayFrame) -> [DecodedSymbol] { base.decode(frame) }
    }

    /// One made-up symbol per region CodeRegions finds: "wrong" counts say how often the hint fires.
    struct Regions: CodeDecoder {
        let name = "regions"
        func decode(_ frame: GrayFrame) -> [DecodedSymbol] {
            CodeRegions.find(in: frame).map { _ in DecodedSymbol(bytes: [0xEE]) }
        }
    }

    static func decoder(named name: String) -> (any CodeDecoder)? {
        if name == "regions" { return Regions() }
        if name == "zxing+zbar/always" { return ZXingThenZBarDecoder(fallback: .always) }
        let parts = name.split(separator: "/")
        guard parts.count > 1, parts[0] == "zxing" else { return nil }
        var options = ZXingDecoder.Options()
        for part in parts.dropFirst() {
            let pair = part.split(separator: "=")
            switch (pair[0], pair.count > 1 ? Int(pair[1]) : nil) {
            case ("harder", _): options.tryHarder = true
            case ("nodownscale", _): options.tryDownscale = false
            case ("global", _): options.binarizer = .globalHistogram
            case ("fixed", _): options.binarizer = .fixedThreshold
            case ("threshold", let value?): options.downscaleThreshold = value
            case ("factor", let value?): options.downscaleFactor = value
            default: Options.fail("unknown zxing variant \(part) in \(name)")
            }
        }
        return Named(name: name, base: ZXingDecoder(options: options))
    }
}
