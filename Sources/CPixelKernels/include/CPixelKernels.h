// Per-pixel loops that run on every camera frame, in C so that they cost the same in a debug
// build as in a release one (an unoptimised Swift loop over a 720p frame is tens of
// milliseconds; this is about one at -O0).
#ifndef CPIXELKERNELS_H
#define CPIXELKERNELS_H

#include <stdint.h>
#include <stddef.h>

/// One frame's tile signature: for each `tile`×`tile` square (row by row, `columns` × `rows` of
/// them, the frame's right and bottom remainders left out), the mean of every pixel on every
/// other row (`brightness`, in levels) and the mean absolute difference between each pixel and
/// its right-hand neighbour on those rows (`sharpness`, in quarter levels). The caller checks
/// that `pixels` holds `stride` × (`rows` × `tile` − 1) + `columns` × `tile` + 1 bytes at least
/// and that `tile` is even and at least 2.
void pk_tile_signature(const uint8_t *pixels, size_t stride, int tile, int columns, int rows,
                       int32_t *brightness, int32_t *sharpness);


/// Which tiles show something the reference did not (1) and which do not (0), from two tile
/// signatures of the same grid. Both are first averaged over each tile's 3×3 neighbourhood (a
/// shift of a few pixels then moves a value by a small share of the local contrast instead of
/// swapping a dark module for a light one); a tile has changed when its averaged brightness or
/// sharpness lies outside the span of the reference's averaged values over the same
/// neighbourhood, widened by `brightness_tolerance` plus an eighth of the neighbourhood's highest
/// sharpness, and by `sharpness_tolerance` plus a quarter of it.
void pk_changed_tiles(const int32_t *brightness, const int32_t *sharpness,
                      const int32_t *reference_brightness, const int32_t *reference_sharpness,
                      int columns, int rows, int32_t brightness_tolerance, int32_t sharpness_tolerance,
                      uint8_t *changed);

/// The side of a region's thumbnail (`pk_thumbnail`): a cell is about three modules of a code.
#define PK_THUMBNAIL_SIDE 12

/// The region (`x`, `y`, `width`, `height`, inside the picture: the caller checks) shrunk to a
/// `side`² thumbnail, each cell the mean of its pixels on every other row.
void pk_thumbnail(const uint8_t *pixels, size_t stride, int x, int y, int width, int height, int side, uint8_t *thumbnail);

/// How alike the PK_THUMBNAIL_SIDE² thumbnail `then` is to what the picture shows now about the
/// same place, allowing the content to have moved by up to one cell either way: `around` is the
/// thumbnail of the place grown by one cell on every side at twice the resolution
/// ((PK_THUMBNAIL_SIDE + 2) × 2 cells a side), and every placement of `then` on it in half-cell
/// steps is tried. The best normalised cross-correlation, from -1 to 1 (0 when either is flat).
double pk_thumbnail_likeness(const uint8_t *then, const uint8_t *around);

#endif
