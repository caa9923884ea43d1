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

/// The mean of each value's 3×3 neighbourhood (fewer at the borders).
static void box3(const int32_t *in, int columns, int rows, int32_t *out) {
    for (int row = 0; row < rows; row++) {
        for (int column = 0; column < columns; column++) {
            int32_t sum = 0, count = 0;
            for (int y = row > 0 ? row - 1 : 0; y <= (row + 1 < rows ? row + 1 : rows - 1); y++) {
                for (int x = column > 0 ? column - 1 : 0; x <= (column + 1 < columns ? column + 1 : columns - 1); x++) {
                    sum += in[(size_t)y * (size_t)columns + (size_t)x];
                    count++;
                }
            }
            out[(size_t)row * (size_t)columns + (size_t)column] = sum / count;
        }
    }
}

void pk_changed_tiles(const int32_t *brightness, const int32_t *sharpness,
                      const int32_t *reference_brightness, const int32_t *reference_sharpness,
                      int columns, int rows, int32_t brightness_tolerance, int32_t sharpness_tolerance,
                      uint8_t *changed) {
    size_t count = (size_t)columns * (size_t)rows;
    int32_t *grids = malloc(4 * count * sizeof(int32_t));
    if (grids == NULL) {
        // No memory for the averages: say everything changed, so the frame is looked at whole.
        for (size_t i = 0; i < count; i++) changed[i] = 1;
        return;
    }
    int32_t *b = grids, *s = grids + count, *rb = grids + 2 * count, *rs = grids + 3 * count;
    box3(brightness, columns, rows, b);
    box3(sharpness, columns, rows, s);
    box3(reference_brightness, columns, rows, rb);
    box3(reference_sharpness, columns, rows, rs);
    for (int row = 0; row < rows; row++) {
        for (int column = 0; column < columns; column++) {
            int32_t low_b = INT32_MAX, high_b = INT32_MIN, low_s = INT32_MAX, high_s = INT32_MIN;
            for (int y = row > 0 ? row - 1 : 0; y <= (row + 1 < rows ? row + 1 : rows - 1); y++) {
                for (int x = column > 0 ? column - 1 : 0; x <= (column + 1 < columns ? column + 1 : columns - 1); x++) {
                    size_t i = (size_t)y * (size_t)columns + (size_t)x;
                    if (rb[i] < low_b) low_b = rb[i];
                    if (rb[i] > high_b) high_b = rb[i];
                    if (rs[i] < low_s) low_s = rs[i];
                    if (rs[i] > high_s) high_s = rs[i];
                }
            }
            size_t i = (size_t)row * (size_t)columns + (size_t)column;
            int32_t b_slack = brightness_tolerance + high_s / 8, s_slack = sharpness_tolerance + high_s / 4;
            changed[i] = b[i] < low_b - b_slack || b[i] > high_b + b_slack || s[i] < low_s - s_slack || s[i] > high_s + s_slack;
        }
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
