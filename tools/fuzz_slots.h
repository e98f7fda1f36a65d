/* What the libFuzzer harnesses (tools/fuzz_rows.c, tools/fuzz_lane.c) read a table's columns
 * from: each column is COL_BYTES of the input, 2 bytes then 1 + BG_NCOLIN (rows.h) slots of SLOT
 * bytes, each read by slot() as a NULL, a small integer or one of the EXTREMES that the column
 * readers' bounds checks must meet. Included after rows.h. */
#ifndef BG_FUZZ_SLOTS_H
#define BG_FUZZ_SLOTS_H
#include <stdint.h>

#define MAX_COLS 32
#define SLOT 3
#define COL_BYTES (2 + SLOT * (1 + BG_NCOLIN))

static const int64_t EXTREMES[] = {
    INT64_MIN, INT64_MIN + 1, -65536, -256, -9, -2, -1, 0, 1, 2, 3, 4, 7, 8, 9, 31, 32, 63, 64,
    65, 200, 201, 255, 256, 65535, 65536, INT32_MAX, (int64_t)INT32_MAX + 1, UINT32_MAX,
    (int64_t)UINT32_MAX + 1, INT64_MAX / 8, INT64_MAX - 1, INT64_MAX,
};

static bg_val slot(const uint8_t *s)
{
    uint16_t v = (uint16_t)(s[1] | s[2] << 8);
    switch (s[0] & 7) {
    case 0: return bg_null();
    case 6: return bg_int((int16_t)v);
    case 7: return bg_int(EXTREMES[v % (sizeof EXTREMES / sizeof EXTREMES[0])]);
    default: return bg_int(v);
    }
}
#endif
