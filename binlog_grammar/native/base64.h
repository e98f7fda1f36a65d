/* Base64 (RFC 4648's alphabet, '=' padding) of bytes in lines of `width` characters, each line
 * ending in a newline: the layout of an event inside a BINLOG '...' statement. The width is not
 * fixed here: output/replay_lane.py reads it from output/quoting.binlog_statement, the one place
 * that rule is stated, and tests/native/test_replay_lane.py checks the two agree on drawn bytes.
 * Plain C: no Python. Needs rows.h's bg_buf and bg_buf_put. */
#ifndef BG_BASE64_H
#define BG_BASE64_H

#include <stdint.h>
#include "rows.h"

/* p[0:n] in base64 lines of `width` characters (a positive multiple of 4) appended to b, each
 * line ending in '\n' (the last one shorter when the bytes run out; no bytes: one empty line);
 * 0, or -1 when out of memory or the width is not one this layout can have */
static int bg_base64_lines(bg_buf *b, const uint8_t *p, int64_t n, int width)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char line[1024];
    if (width <= 0 || width % 4 != 0 || width >= (int)sizeof line)
        return -1;
    int64_t per_line = width / 4 * 3;  /* the bytes one full line holds */
    if (n <= 0)
        return bg_buf_put(b, "\n", 1);
    for (int64_t at = 0; at < n; at += per_line) {
        int64_t take = n - at < per_line ? n - at : per_line;
        const uint8_t *q = p + at;
        size_t k = 0;
        int64_t i = 0;
        for (; i + 3 <= take; i += 3) {
            uint32_t v = (uint32_t)q[i] << 16 | (uint32_t)q[i + 1] << 8 | q[i + 2];
            line[k++] = alphabet[v >> 18];
            line[k++] = alphabet[v >> 12 & 63];
            line[k++] = alphabet[v >> 6 & 63];
            line[k++] = alphabet[v & 63];
        }
        if (take - i == 1) {
            uint32_t v = (uint32_t)q[i] << 16;
            line[k++] = alphabet[v >> 18];
            line[k++] = alphabet[v >> 12 & 63];
            line[k++] = '=';
            line[k++] = '=';
        } else if (take - i == 2) {
            uint32_t v = (uint32_t)q[i] << 16 | (uint32_t)q[i + 1] << 8;
            line[k++] = alphabet[v >> 18];
            line[k++] = alphabet[v >> 12 & 63];
            line[k++] = alphabet[v >> 6 & 63];
            line[k++] = '=';
        }
        line[k++] = '\n';
        if (bg_buf_put(b, line, k) < 0)
            return -1;
    }
    return 0;
}

#endif /* BG_BASE64_H */
