// zxing-cpp's QR reader behind the C interface of include/CZXingBridge.h.
//
// Each call builds its own DecodeHints and reads the caller's pixels in place (ImageView does not
// copy), so calls share no state and may run on several threads at once.

#include "CZXingBridge.h"

#include <ZXing/ReadBarcode.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>

namespace {

thread_local std::string lastError;

/// Keeps the message for zxb_last_error; a message that cannot be stored is dropped, never thrown.
void remember(const char *message) noexcept {
    try {
        lastError = message;
    } catch (...) {
        lastError.clear();
    }
}

ZXing::Binarizer binarizerFor(zxb_binarizer binarizer) {
    switch (binarizer) {
    case ZXB_BINARIZER_GLOBAL_HISTOGRAM: return ZXing::Binarizer::GlobalHistogram;
    case ZXB_BINARIZER_FIXED_THRESHOLD: return ZXing::Binarizer::FixedThreshold;
    case ZXB_BINARIZER_LOCAL_AVERAGE:
    default: return ZXing::Binarizer::LocalAverage;
    }
}

ZXing::DecodeHints hintsFor(const zxb_options &options) {
    ZXing::DecodeHints hints;
    // QR only: Micro QR and every other symbology off, so nothing else is searched for or reported.
    hints.setFormats(ZXing::BarcodeFormat::QRCode);
    hints.setTryHarder(options.try_harder != 0);
    hints.setTryRotate(options.try_rotate != 0);
    hints.setTryDownscale(options.try_downscale != 0);
    if (options.downscale_threshold > 0)
        hints.setDownscaleThreshold(static_cast<uint16_t>(std::min(options.downscale_threshold, 65535)));
    if (options.downscale_factor >= 2 && options.downscale_factor <= 4)
        hints.setDownscaleFactor(static_cast<uint8_t>(options.downscale_factor));
    hints.setBinarizer(binarizerFor(options.binarizer));
    int maximum = options.max_symbols <= 0 || options.max_symbols > 255 ? 255 : options.max_symbols;
    hints.setMaxNumberOfSymbols(static_cast<uint8_t>(maximum));
    // Only symbols that decoded. (Asked for errors too, zxing 1.4 reported nothing for a QR code
    // with its data scrambled and its finder patterns intact, so there is no "located but
    // unreadable" worth passing on.)
    hints.setReturnErrors(false);
    return hints;
}

/// Copies the results into one malloc'd block (list, symbols, then every symbol's bytes), so the
/// caller frees it with one call and no C++ object outlives this function.
zxb_results *packed(const ZXing::Results &found) {
    size_t byteCount = 0;
    for (const auto &result : found)
        byteCount += result.bytes().size();
    size_t size = sizeof(zxb_results) + found.size() * sizeof(zxb_symbol) + byteCount;
    auto *block = static_cast<unsigned char *>(std::malloc(size));
    if (block == nullptr) throw std::bad_alloc();
    auto *results = reinterpret_cast<zxb_results *>(block);
    results->count = found.size();
    results->symbols = reinterpret_cast<zxb_symbol *>(block + sizeof(zxb_results));
    auto *bytes = block + sizeof(zxb_results) + found.size() * sizeof(zxb_symbol);
    for (size_t i = 0; i < found.size(); ++i) {
        const auto &result = found[i];
        zxb_symbol &symbol = results->symbols[i];
        // bytes(), not text(): the content exactly as encoded, whatever its mode or character set.
        const auto &content = result.bytes();
        symbol.length = content.size();
        symbol.bytes = bytes;
        if (symbol.length > 0) std::memcpy(bytes, content.data(), symbol.length);
        bytes += symbol.length;
        // The corners as zxing located them, reduced to their bounding box.
        const auto &corners = result.position();
        symbol.left = symbol.right = corners[0].x;
        symbol.top = symbol.bottom = corners[0].y;
        for (int c = 1; c < 4; ++c) {
            symbol.left = std::min(symbol.left, corners[c].x);
            symbol.right = std::max(symbol.right, corners[c].x);
            symbol.top = std::min(symbol.top, corners[c].y);
            symbol.bottom = std::max(symbol.bottom, corners[c].y);
        }
    }
    return results;
}

} // namespace

extern "C" int zxb_decode_qr(const uint8_t *pixels, size_t length, int width, int height, int stride,
                             const zxb_options *options, zxb_results **results) {
    if (results == nullptr) return ZXB_BAD_ARGUMENT;
    *results = nullptr;
    if (pixels == nullptr || options == nullptr || width <= 0 || height <= 0 || stride < width)
        return ZXB_BAD_ARGUMENT;
    // The last row needs only `width` bytes, not a whole stride.
    if (length < static_cast<size_t>(stride) * static_cast<size_t>(height - 1) + static_cast<size_t>(width))
        return ZXB_BAD_ARGUMENT;
    try {
        ZXing::ImageView view(pixels, width, height, ZXing::ImageFormat::Lum, stride);
        auto found = ZXing::ReadBarcodes(view, hintsFor(*options));
        // Without returnErrors every result should be valid; make sure, so Swift never sees a failed one.
        found.erase(std::remove_if(found.begin(), found.end(), [](const ZXing::Result &r) { return !r.isValid(); }),
                    found.end());
        *results = packed(found);
        return ZXB_OK;
    } catch (const std::bad_alloc &) {
        return ZXB_OUT_OF_MEMORY;
    } catch (const std::exception &error) {
        remember(error.what());
        return ZXB_INTERNAL_ERROR;
    } catch (...) {
        remember("unknown exception");
        return ZXB_INTERNAL_ERROR;
    }
}

extern "C" void zxb_results_free(zxb_results *results) { std::free(results); }

extern "C" const char *zxb_last_error(void) { return lastError.c_str(); }
