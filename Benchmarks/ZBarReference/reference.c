#include "CZBarReference.h"

#include <time.h>
#include <zbar.h>

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int64_t zbar_reference_scan(const uint8_t *pixels, int width, int height, int iterations, int *symbols) {
    zbar_image_scanner_t *scanner = zbar_image_scanner_create();
    zbar_image_t *image = zbar_image_create();
    if (scanner == NULL || image == NULL) {
        if (scanner != NULL) zbar_image_scanner_destroy(scanner);
        if (image != NULL) zbar_image_destroy(image);
        return -1;
    }
    zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0);
    zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_ENABLE, 1);
    zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_BINARY, 1);
    zbar_image_scanner_enable_cache(scanner, 0);
    zbar_image_set_format(image, zbar_fourcc('Y', '8', '0', '0'));
    zbar_image_set_size(image, (unsigned)width, (unsigned)height);
    zbar_image_set_data(image, pixels, (unsigned long)width * (unsigned long)height, NULL);

    // One untimed scan first, as the Swift decoders get: zbar allocates its QR decoder's buffers
    // on first use, and a cold first scan would charge that to the reference. Its count is the one
    // reported: later scans of the same picture can differ, because zbar's QR reader draws from a
    // random-number generator (for RANSAC) that advances with every scan.
    int found = zbar_scan_image(scanner, image);
    int64_t start = now_ns();
    for (int i = 0; i < iterations; i++) {
        zbar_scan_image(scanner, image);
    }
    int64_t elapsed = now_ns() - start;

    if (symbols != NULL) *symbols = found < 0 ? 0 : found;
    zbar_image_destroy(image);
    zbar_image_scanner_destroy(scanner);
    return elapsed;
}
