import CZBar
import HAL

/// QR codes through zbar. Only the QR symbology is enabled, in binary mode, so each symbol's bytes
/// are exactly what the code carries (no character-set guessing).
///
/// Each decode gets a scanner of its own. zbar's QR reader draws from a random-number generator
/// that is seeded when the scanner is created and advances with every scan, so a scanner kept
/// across frames can read a frame and then miss the very same frame on the next call (seen on
/// blurred codes in `scripts/bench-decode`). A fresh scanner makes the answer a function of the
/// frame alone, and makes the decoder safe to share between threads without a lock; creating one
/// costs a few microseconds against milliseconds of scanning.
public struct ZBarDecoder: CodeDecoder {
    /// The name `CodeDecoders.decoder(named:)` and `HWPROBE_DECODER` select this decoder by.
    public let name = "zbar"

    /// Holds no scanner: each decode creates its own, so one value may be shared freely.
    public init() {}

    /// `Y800`: 8-bit grey, as zbar spells it.
    static let y800: UInt = UInt(UInt8(ascii: "Y")) | UInt(UInt8(ascii: "8")) << 8
        | UInt(UInt8(ascii: "0")) << 16 | UInt(UInt8(ascii: "0")) << 24

    /// The QR symbols zbar read, as raw bytes; an empty list for a malformed frame or when nothing is found.
    public func decode(_ frame: GrayFrame) -> [DecodedSymbol] {
        let width = frame.width
        let height = frame.height
        guard width > 0, height > 0, frame.stride >= width,
              frame.pixels.count >= frame.stride * (height - 1) + width
        else { return [] }
        // zbar wants tightly packed rows.
        let packed: [UInt8]
        if frame.stride == width {
            packed = frame.pixels.count == width * height ? frame.pixels : Array(frame.pixels[0..<(width * height)])
        } else {
            var rows = [UInt8]()
            rows.reserveCapacity(width * height)
            for row in 0..<height {
                let offset = row * frame.stride
                rows.append(contentsOf: frame.pixels[offset..<(offset + width)])
            }
            packed = rows
        }
        // nil only if zbar could not allocate (out of memory): then nothing is found in this frame.
        guard let scanner = Self.makeScanner() else { return [] }
        defer { zbar_image_scanner_destroy(scanner) }
        return packed.withUnsafeBytes { raw -> [DecodedSymbol] in
            guard let image = zbar_image_create() else { return [] }
            defer { zbar_image_destroy(image) }
            zbar_image_set_format(image, Self.y800)
            zbar_image_set_size(image, UInt32(width), UInt32(height))
            // No cleanup handler: the bytes belong to `packed`, alive for this whole closure.
            zbar_image_set_data(image, raw.baseAddress, UInt(raw.count), nil)
            guard zbar_scan_image(scanner, image) > 0 else { return [] }
            var symbols: [DecodedSymbol] = []
            var symbol = zbar_image_first_symbol(image)
            while let current = symbol {
                if zbar_symbol_get_type(current) == ZBAR_QRCODE, let data = zbar_symbol_get_data(current) {
                    let length = Int(zbar_symbol_get_data_length(current))
                    let bytes = UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: length)
                    symbols.append(DecodedSymbol(bytes: Array(bytes)))
                }
                symbol = zbar_symbol_next(current)
            }
            return symbols
        }
    }

    /// A scanner with everything off but QR, in binary mode, and no inter-frame cache (results are per frame).
    private static func makeScanner() -> OpaquePointer? {
        guard let scanner = zbar_image_scanner_create() else { return nil }
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_ENABLE, 1)
        zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_BINARY, 1)
        zbar_image_scanner_enable_cache(scanner, 0)
        return scanner
    }
}
