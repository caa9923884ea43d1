#include "CPixelKernels.h"
#include <stdint.h>

void pk_tile_signature(const uint8_t *pixels, size_t stride, int tile, int columns, int rows,
                       int32_t *brightness, int32_t *sharpness) {
    const int32_t samples = (int32_t)tile * (int32_t)(tile / 2);
    for (int row = 0; row < rows; row++) {
        int32_t *bright = brightness + (size_t)row * (size_t)columns;
        int32_t *sharp = sharpness + (size_t)row * (size_t)columns;
        for (int column = 0; column < columns; column++) { bright[column] = 0; sharp[column] = 0; }
        for (int line = 0; line < tile; line += 2) {
            const uint8_t *p = pixels + ((size_t)row * (size_t)tile + (size_t)line) * stride;
            for (int column = 0; column < columns; column++) {
                int32_t sum = 0, edges = 0;
                for (int x = 0; x < tile; x++) {
                    int32_t a = p[x], b = p[x + 1];
                    sum += a;
                    edges += a > b ? a - b : b - a;
                }
                bright[column] += sum;
                sharp[column] += edges;
                p += tile;
            }
        }
        for (int column = 0; column < columns; column++) {
            bright[column] /= samples;
            sharp[column] = sharp[column] * 4 / samples;
        }
    }
}

#include <stdlib.h>

/// Separable 3×3 neighbourhood passes (fewer cells at the borders): along rows into `row`, then
/// along columns into `out`. `kind` 0 sums (and divides by the count: the mean), 1 takes the
/// minimum, 2 the maximum. Six reads a cell instead of nine, and no branch in the inner loop
/// but at the grid's edges.
static void pass3(const int32_t *in, int columns, int rows, int kind, int32_t *row, int32_t *out) {
    for (int y = 0; y < rows; y++) {
        const int32_t *r = in + (size_t)y * (size_t)columns;
        int32_t *o = row + (size_t)y * (size_t)columns;
        for (int x = 0; x < columns; x++) {
            int32_t a = r[x > 0 ? x - 1 : x], b = r[x], c = r[x + 1 < columns ? x + 1 : x];
            if (kind == 0) {
                o[x] = (x > 0 ? a : 0) + b + (x + 1 < columns ? c : 0);
            } else if (kind == 1) {
                int32_t m = a < b ? a : b;
                o[x] = m < c ? m : c;
            } else {
                int32_t m = a > b ? a : b;
                o[x] = m > c ? m : c;
            }
        }
    }
    for (int y = 0; y < rows; y++) {
        const int32_t *up = row + (size_t)(y > 0 ? y - 1 : y) * (size_t)columns;
        const int32_t *mid = row + (size_t)y * (size_t)columns;
        const int32_t *down = row + (size_t)(y + 1 < rows ? y + 1 : y) * (size_t)columns;
        int32_t *o = out + (size_t)y * (size_t)columns;
        int rows_in = 1 + (y > 0) + (y + 1 < rows);
        for (int x = 0; x < columns; x++) {
            if (kind == 0) {
                int columns_in = 1 + (x > 0) + (x + 1 < columns);
                o[x] = ((y > 0 ? up[x] : 0) + mid[x] + (y + 1 < rows ? down[x] : 0)) / (rows_in * columns_in);
            } else if (kind == 1) {
                int32_t m = up[x] < mid[x] ? up[x] : mid[x];
                o[x] = m < down[x] ? m : down[x];
            } else {
                int32_t m = up[x] > mid[x] ? up[x] : mid[x];
                o[x] = m > down[x] ? m : down[x];
            }
        }
    }
}

void pk_changed_tiles(const int32_t *brightness, const int32_t *sharpness,
                      const int32_t *reference_brightness, const int32_t *reference_sharpness,
                      int columns, int rows, int32_t brightness_tolerance, int32_t sharpness_tolerance,
                      uint8_t *changed) {
    size_t count = (size_t)columns * (size_t)rows;
    int32_t *grids = malloc(9 * count * sizeof(int32_t));
    if (grids == NULL) {
        // No memory for the averages: say everything changed, so the frame is looked at whole.
        for (size_t i = 0; i < count; i++) changed[i] = 1;
        return;
    }
    int32_t *b = grids, *s = grids + count, *rb = grids + 2 * count, *rs = grids + 3 * count;
    int32_t *low_b = grids + 4 * count, *high_b = grids + 5 * count, *low_s = grids + 6 * count, *high_s = grids + 7 * count;
    int32_t *scratch = grids + 8 * count;
    pass3(brightness, columns, rows, 0, scratch, b);
    pass3(sharpness, columns, rows, 0, scratch, s);
    pass3(reference_brightness, columns, rows, 0, scratch, rb);
    pass3(reference_sharpness, columns, rows, 0, scratch, rs);
    // The span of the reference's averages over each tile's neighbourhood.
    pass3(rb, columns, rows, 1, scratch, low_b);
    pass3(rb, columns, rows, 2, scratch, high_b);
    pass3(rs, columns, rows, 1, scratch, low_s);
    pass3(rs, columns, rows, 2, scratch, high_s);
    for (size_t i = 0; i < count; i++) {
        int32_t b_slack = brightness_tolerance + high_s[i] / 8, s_slack = sharpness_tolerance + high_s[i] / 4;
        changed[i] = b[i] < low_b[i] - b_slack || b[i] > high_b[i] + b_slack || s[i] < low_s[i] - s_slack || s[i] > high_s[i] + s_slack;
    }
    free(grids);
}

#include <math.h>

void pk_thumbnail(const uint8_t *pixels, size_t stride, int x, int y, int width, int height, int side, uint8_t *thumbnail) {
    for (int cy = 0; cy < side; cy++) {
        int y0 = y + cy * height / side, y1 = y + (cy + 1) * height / side;
        if (y1 <= y0) y1 = y0 + 1;
        for (int cx = 0; cx < side; cx++) {
            int x0 = x + cx * width / side, x1 = x + (cx + 1) * width / side;
            if (x1 <= x0) x1 = x0 + 1;
            uint32_t sum = 0, count = 0;
            for (int py = y0; py < y1; py += 2) {
                const uint8_t *p = pixels + (size_t)py * stride;
                for (int px = x0; px < x1; px++) { sum += p[px]; count++; }
            }
            thumbnail[cy * side + cx] = (uint8_t)(count ? sum / count : 0);
        }
    }
}

double pk_thumbnail_likeness(const uint8_t *then, const uint8_t *around) {
    const int side = PK_THUMBNAIL_SIDE, fine = 2 * (PK_THUMBNAIL_SIDE + 2);
    double best = 0;
    // Offsets in half cells: 2 is where the place was; 0 and 4 a whole cell either way.
    for (int oy = 0; oy <= 4; oy++) {
        for (int ox = 0; ox <= 4; ox++) {
            double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
            const int n = side * side;
            for (int cy = 0; cy < side; cy++) {
                const uint8_t *top = around + (2 * cy + oy) * fine + ox, *bottom = top + fine;
                for (int cx = 0; cx < side; cx++) {
                    double va = then[cy * side + cx];
                    double vb = (top[2 * cx] + top[2 * cx + 1] + bottom[2 * cx] + bottom[2 * cx + 1]) / 4.0;
                    sa += va; sb += vb; saa += va * va; sbb += vb * vb; sab += va * vb;
                }
            }
            double cov = sab - sa * sb / n, va = saa - sa * sa / n, vb = sbb - sb * sb / n;
            if (va <= 1e-9 || vb <= 1e-9) continue;
            double r = cov / sqrt(va * vb);
            if (r > best) best = r;
        }
    }
    return best;
}
