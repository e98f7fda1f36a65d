/* The libFuzzer target of tools/fuzz_native.py --rows: the generated row-image readers and the
 * -vv forms (generated/native/rows.c, with binlog_grammar/native/decimal.h and forms_vv.h) under
 * AddressSanitizer and UndefinedBehaviorSanitizer. Built with clang -fsanitize=fuzzer, or with
 * -DBG_FUZZ_REPLAY by any C compiler into a program that runs the files it is given once each
 * (tests/native/test_native_regressions.py replays tests/native/regressions/rows/ that way).
 *
 * An input is a table's plan, then the row bytes of one rows event:
 *
 *   byte 0            bits 0-4: columns - 1 (1 to 32); bit 5: an update (two images per row)
 *   per column        1 byte of flags (bit 0: in the first image, bit 1: in the second,
 *                     bit 2: strip trailing NULs), 1 byte of form (a BG_VV_ index, or any
 *                     byte from BG_NVV up for none), then the form's argument and the column's
 *                     BG_NCOLIN inputs (rows.h's BG_C_ order) as SLOT-byte slots
 *   the rest          the row images, in a buffer of exactly their size
 *
 * A slot is a kind byte and two bytes little-endian: kind & 7 is 0 for null, 6 for the two
 * bytes as a signed number, 7 for EXTREMES[the two bytes % its size], anything else for the two
 * bytes as an unsigned number. The plan may hold what no TABLE_MAP gives (any form on any type,
 * any argument): bg_rows() must stay inside its buffers for every plan and every byte.
 *
 * Each input runs bg_rows() with BG_SINK_COUNT (no buffer), BG_SINK_VV (appending to a buffer
 * that already holds text) and, when rows.h has it, BG_SINK_JSONL, and checks what bg_rows
 * promises: a count is at most one row per byte; a sink that writes text gives the count of
 * BG_SINK_COUNT, or a failure only where BG_SINK_COUNT fails or a form refuses; a failure
 * leaves the buffer as it was. A broken promise aborts (libFuzzer keeps the input). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rows.h"

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

static void broken(const char *why)
{
    fprintf(stderr, "fuzz_rows: a broken promise of bg_rows: %s\n", why);
    abort();
}

/* one sink that writes text: its result against the count's; the buffer kept on failure */
static void run_text_sink(const bg_plan *plan, const uint8_t *rows, int64_t n, int sink,
                          int64_t counted)
{
    static const char before[] = "text before this event\n";
    bg_buf out = {0};
    out.p = malloc(sizeof before);
    if (out.p == NULL)
        return;
    memcpy(out.p, before, sizeof before);
    out.n = out.cap = sizeof before;
    int64_t r = bg_rows(plan, rows, n, sink, &out);
    if (r == BG_NOMEM) {
        bg_buf_free(&out);
        return;
    }
    if (r >= 0 && r != counted)
        broken("a text sink counts other rows than BG_SINK_COUNT");
    if (r < 0 && counted >= 0 && r != BG_REFUSE)
        broken("a text sink fails, other than by refusing, where BG_SINK_COUNT reads every row");
    if (r < 0 && r != BG_SHORT && r != BG_REFUSE)
        broken("an unknown status");
    if (out.n < sizeof before || memcmp(out.p, before, sizeof before) != 0)
        broken("the text before the event changed");
    if (r < 0 && out.n != sizeof before)
        broken("a failed event left text in the buffer");
    bg_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bg_colplan cols[MAX_COLS];
    static uint8_t present[2][MAX_COLS];
    static const char pre0[] = "### pre 0\n", pre1[] = "### pre 1\n";
    static const char head[] = "###   @=", tail[] = " /* T */\n", null[] = "###   @=NULL\n";
    if (size < 1)
        return 0;
    int ncols = 1 + (data[0] & 31), update = data[0] >> 5 & 1;
    size_t at = 1;
    if (size < at + (size_t)ncols * COL_BYTES)
        return 0;
    for (int c = 0; c < ncols; c++, at += COL_BYTES) {
        const uint8_t *d = data + at;
        bg_colplan *cp = &cols[c];
        memset(cp, 0, sizeof *cp);
        present[0][c] = d[0] & 1;
        present[1][c] = d[0] >> 1 & 1;
        cp->strip_nul = d[0] >> 2 & 1;
        cp->form = d[1] < BG_NVV ? d[1] : -1;
        bg_val arg = slot(d + 2);
        cp->arg = arg.k == BG_NULL ? 0 : arg.i;
        for (int k = 0; k < BG_NCOLIN; k++)
            cp->col.in[k] = slot(d + 2 + SLOT * (1 + k));
        cp->head = head;
        cp->head_len = sizeof head - 1;
        cp->tail = tail;
        cp->tail_len = sizeof tail - 1;
        cp->null = null;
        cp->null_len = sizeof null - 1;
    }
    bg_plan plan = {.ncols = ncols, .nimages = 1 + update, .cols = cols,
                    .present = {present[0], present[1]}, .pre = {pre0, pre1},
                    .pre_len = {sizeof pre0 - 1, sizeof pre1 - 1}};
    /* the row bytes alone in a buffer of their size: a read before or past them is reported */
    int64_t n = (int64_t)(size - at);
    uint8_t *rows = malloc(n ? (size_t)n : 1);
    if (rows == NULL)
        return 0;
    memcpy(rows, data + at, (size_t)n);

    int64_t counted = bg_rows(&plan, rows, n, BG_SINK_COUNT, NULL);
    if (counted < 0 && counted != BG_SHORT && counted != BG_REFUSE)
        broken("an unknown status of BG_SINK_COUNT");
    if (counted > n)
        broken("more rows than bytes");
    run_text_sink(&plan, rows, n, BG_SINK_VV, counted);
#ifdef BG_FUZZ_JSONL
    run_text_sink(&plan, rows, n, BG_SINK_JSONL, counted);
#endif
    free(rows);
    return 0;
}

#ifdef BG_FUZZ_REPLAY
/* fuzz_rows FILE...: each file through the target once; exit 0 when no sanitizer or promise
 * stopped it */
int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (f == NULL) {
            perror(argv[i]);
            return 2;
        }
        uint8_t *buf = NULL;
        size_t len = 0, cap = 0, got;
        do {
            if (len == cap) {
                cap = cap ? cap * 2 : 65536;
                uint8_t *p = realloc(buf, cap);
                if (p == NULL)
                    return 2;
                buf = p;
            }
            got = fread(buf + len, 1, cap - len, f);
            len += got;
        } while (got > 0);
        fclose(f);
        uint8_t *exact = malloc(len ? len : 1);  /* the input in a buffer of exactly its size */
        memcpy(exact, buf, len);
        free(buf);
        LLVMFuzzerTestOneInput(exact, len);
        free(exact);
        printf("ok %s\n", argv[i]);
    }
    return 0;
}
#endif
