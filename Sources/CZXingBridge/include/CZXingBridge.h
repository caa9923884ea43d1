// A C face for zxing-cpp's QR reader, so Swift can call it without C++ interop.
//
// Everything here is plain C: no C++ type, and no exception, crosses this boundary. Every call
// either fills its result and returns ZXB_OK, or returns a negative status and leaves nothing to free.
#ifndef CZXING_BRIDGE_H
#define CZXING_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// How zxing turns grey into black and white (zxing's Binarizer, in the same order).
typedef enum zxb_binarizer {
    ZXB_BINARIZER_LOCAL_AVERAGE = 0,
    ZXB_BINARIZER_GLOBAL_HISTOGRAM = 1,
    ZXB_BINARIZER_FIXED_THRESHOLD = 2,
} zxb_binarizer;

/// What zxing should try. Zero everywhere is the cheapest search (one pass, no downscaling).
typedef struct zxb_options {
    /// Look at every row for finder patterns rather than every few rows, and try harder on each candidate.
    int try_harder;
    /// Also look at the picture rotated by 90°, 180° and 270° (matters for linear codes; QR finds its own orientation).
    int try_rotate;
    /// Also look at downscaled copies of large pictures (finds big or blurred codes that the full size misses).
    int try_downscale;
    /// Downscale pictures whose shorter side is at least this many pixels (0: zxing's default, 500).
    int downscale_threshold;
    /// Divide the size by this much per downscaling step, 2...4 (0: zxing's default, 3).
    int downscale_factor;
    zxb_binarizer binarizer;
    /// At most this many symbols per picture (1...255; 0 means 255).
    int max_symbols;
} zxb_options;

/// One decoded symbol: its bytes exactly as the code carries them (no character-set conversion),
/// and the bounding box of its four corners in the picture's pixels (left, top, right, bottom).
typedef struct zxb_symbol {
    const uint8_t *bytes;
    size_t length;
    int left, top, right, bottom;
} zxb_symbol;

/// Every symbol found in one picture. Owned by the bridge: release it with zxb_results_free.
typedef struct zxb_results {
    size_t count;
    zxb_symbol *symbols;
} zxb_results;

enum {
    ZXB_OK = 0,
    /// The picture's size, stride or pointer make no sense (nothing was read).
    ZXB_BAD_ARGUMENT = -1,
    ZXB_OUT_OF_MEMORY = -2,
    /// zxing threw something other than std::bad_alloc; the message is in zxb_last_error.
    ZXB_INTERNAL_ERROR = -3,
};

/// Looks for QR codes in an 8-bit grey picture of `width`×`height` whose rows start `stride` bytes
/// apart, held in the `length` bytes at `pixels` (checked, so a short buffer is refused rather than
/// read past). On ZXB_OK `*results` holds a list (possibly empty) to free with zxb_results_free.
int zxb_decode_qr(const uint8_t *pixels, size_t length, int width, int height, int stride,
                  const zxb_options *options, zxb_results **results);

void zxb_results_free(zxb_results *results);

/// What the last ZXB_INTERNAL_ERROR on this thread said (empty if none).
const char *zxb_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
