import CZBar
import HAL
import Synchronization

/// QR codes through zbar. Only the QR symbology is enabled, in binary mode, so each symbol's bytes
/// are exactly what the code carries (no character-set guessing).
///
/// zbar's image scanner is not thread-safe: each decoder owns one scanner behind a lock, so
/// concurrent `decode` calls on one instance take turns (use one decoder per thread to decode in
/// parallel).
public final class ZBarDecoder: CodeDecoder {
    public let name = "zbar"
    /// nil only if zbar could not allocate a scanner (out of memory): then nothing is ever found.
    private let scanner: Mutex<Scanner?>

    /// The zbar scanner handle; only touched with the lock held.
    private struct Scanner: ~Copyable {
        let handle: OpaquePointer
        deinit { zbar_image_scanner_destroy(handle) }
    }

    public init() {
        guard let handle = zbar_image_scanner_create() else {
            scanner = Mutex(nil)
            return
        }
        // Everything off, then QR on, binary.
        zbar_image_scanner_set_config(handle, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        zbar_image_scanner_set_config(handle, ZBAR_QRCODE, ZBAR_CFG_ENABLE, 1)
        zbar_image_scanner_set_config(handle, ZBAR_QRCODE, ZBAR_CFG_BINARY, 1)
        // Results are per frame: no inter-frame consistency cache.
        zbar_image_scanner_enable_cache(handle, 0)
        scanner = Mutex(Scanner(handle: handle))
    }

    /// `Y800`: 8-bit grey, as zbar spells it.
    static let y800: UInt = UInt(UInt8(ascii: "Y")) | UInt(UInt8(ascii: "8")) << 8
        | UInt(UInt8(ascii: "0")) << 16 | UInt(UInt8(ascii: "0")) << 24

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
        return scanner.withLock { scanner in
            guard let handle = scanner?.handle else { return [] }
            return packed.withUnsafeBytes { raw -> [DecodedSymbol] in
                guard let image = zbar_image_create() else { return [] }
                defer { zbar_image_destroy(image) }
                zbar_image_set_format(image, Self.y800)
                zbar_image_set_size(image, UInt32(width), UInt32(height))
                // No cleanup handler: the bytes belong to `packed`, alive for this whole closure.
                zbar_image_set_data(image, raw.baseAddress, UInt(raw.count), nil)
                guard zbar_scan_image(handle, image) > 0 else { return [] }
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
    }
}
