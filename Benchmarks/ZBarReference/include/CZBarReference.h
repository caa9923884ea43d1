// The decode benchmark's reference: zbar's scanner driven from a plain C loop, with no Swift in
// between, so the benchmark can say how much our decoders cost on top of (or instead of) zbar itself.
#ifndef CZBAR_REFERENCE_H
#define CZBAR_REFERENCE_H

#include <stdint.h>

/// Scans one packed 8-bit grey picture `iterations` times with one zbar scanner set up as
/// Capture's ZBarDecoder sets up its own (QR only, binary, no cache) and returns the nanoseconds of
/// CPU time the scans took on this thread (CLOCK_THREAD_CPUTIME_ID, so other processes on a busy
/// machine do not count), or -1 if zbar could not allocate. Neither the scanner's set-up nor one
/// warm-up scan before the timed ones is timed. `*symbols` gets the number of QR symbols the first
/// scan (with a fresh scanner, as ZBarDecoder scans) found.
int64_t zbar_reference_scan(const uint8_t *pixels, int width, int height, int iterations, int *symbols);

#endif
