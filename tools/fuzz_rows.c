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
 *   (bit 6 of byte 0) per column, JSON lines' part: 1 byte of form (a BG_JL_ index, or none),
 *                     1 byte of members (0xFF: none in the metadata, else how many of MEMBERS),
 *                     1 byte of table (0: none, else one of two tables), the pad as a slot;
 *                     without bit 6 the JSON lines' form is bits 3-7 of the column's flags,
 *                     no members, no table and the pad 0
 *   (bit 7 of byte 0) per column, the Debezium envelope's part (when rows.h has BG_PLAN_DEBEZIUM):
 *                     1 byte of form (a BG_DZ_ index, or none), 1 byte of flags (BG_DZ_...),
 *                     1 byte of members and 1 of table as in the JSON lines' part, the arg and
 *                     the pad as slots; without bit 7 no Debezium plan runs
 *   the rest          the row images, in a buffer of exactly their size
 *
 * A slot is a kind byte and two bytes little-endian: kind & 7 is 0 for null, 6 for the two
 * bytes as a signed number, 7 for EXTREMES[the two bytes % its size], anything else for the two
 * bytes as an unsigned number. The plan may hold what no TABLE_MAP gives (any form on any type,
 * any argument): bg_rows() must stay inside its buffers for every plan and every byte.
 *
 * Each input runs bg_rows() with BG_SINK_COUNT (no buffer), BG_SINK_VV (appending to a buffer
 * that already holds text) and, when rows.h has it, BG_SINK_JSONL (with the JSON lines plan, and
 * with the Debezium plan of bit 7: forms_debezium.h, whose key columns make an update whose key
 * text differs refused), and checks what bg_rows
 * promises: a count is at most one row per byte; a sink that writes text gives the count of
 * BG_SINK_COUNT, or a failure only where BG_SINK_COUNT fails or a form refuses; a failure
 * leaves the buffer as it was; JSON lines hold one line per row. It then runs bg_rows_each()
 * (the EACH sink, whose callback makes the API's Python values in rows_module.c) with a plain C
 * callback that reads every byte of each value's span and the DECIMAL digits, as the objects
 * sink does, and checks its promises: images in order, present columns in order, the count of
 * BG_SINK_COUNT wherever that reads every row, the callback's refusal ending the event. A broken
 * promise aborts (libFuzzer keeps the input). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rows.h"
#include "decimal.h"

#include "fuzz_slots.h"  /* MAX_COLS, SLOT, COL_BYTES and slot(): a column's parameters from input bytes */

#ifdef BG_FUZZ_JSONL
#define JL_BYTES (3 + SLOT)
#ifdef BG_DZ_MAX_KEYS
#define BG_FUZZ_DEBEZIUM
#define DZ_BYTES (4 + 2 * SLOT)
#endif
/* members as JSON strings (one refused), and the bits that give each */
static const char *MEMBERS[] = {"\"a\"", "\"b\\\"c\"", "\"\"", NULL, "\"\u00e9\"", "\"x\"",
                                "\"y\"", "\"z\""};
static size_t MEMBER_LEN[8];
static const uint64_t MASKS[] = {1, 2, 4, 8, 16, 0, ~0ULL, 1ULL << 63};
#define NMEMBERS ((int)(sizeof MEMBERS / sizeof MEMBERS[0]))
static uint8_t TABLES[2][256 * BG_TABLE_ENTRY];

/* the first table as a latin1-like charset's: printable ASCII itself, '"' and '\\' escaped,
 * the controls refused, the upper half two bytes of UTF-8; the second every entry its longest */
static void make_tables(void)
{
    for (int c = 0; c < 256; c++) {
        uint8_t *e = TABLES[0] + c * BG_TABLE_ENTRY, *f = TABLES[1] + c * BG_TABLE_ENTRY;
        if (c < 0x20) {
            e[0] = BG_TABLE_REFUSE;
        } else if (c == '"' || c == '\\') {
            e[0] = 2, e[1] = '\\', e[2] = (uint8_t)c;
        } else if (c < 0x80) {
            e[0] = 1, e[1] = (uint8_t)c;
        } else {
            e[0] = 2, e[1] = (uint8_t)(0xC0 | c >> 6), e[2] = (uint8_t)(0x80 | (c & 0x3F));
        }
        f[0] = c == 0xFF ? BG_TABLE_REFUSE : BG_TABLE_ENTRY - 1;
        memcpy(f + 1, "\\u00e9x", BG_TABLE_ENTRY - 1);
    }
    for (int k = 0; k < NMEMBERS; k++)
        MEMBER_LEN[k] = MEMBERS[k] ? strlen(MEMBERS[k]) : 0;
}
#endif

static void broken(const char *why)
{
    fprintf(stderr, "fuzz_rows: a broken promise of bg_rows: %s\n", why);
    abort();
}

/* one sink that writes text: its result against the count's; the buffer kept on failure */
static void run_text_sink(const bg_plan *plan, const uint8_t *rows, int64_t n, int sink,
                          int64_t counted)
{
#ifdef BG_FUZZ_JSONL
    static const bg_frame frames[2] = {  /* one image, two images: the last piece ends the line */
        {{"{\"image\": ", ", \"row\": ", "}\n"}, {10, 9, 2}},
        {{"{\"before\": ", ", \"after\": ", ", \"row\": ", "}\n"}, {11, 11, 9, 2}}};
#endif
    static const char before[] = "text before this event\n";
    bg_buf out = {0};
    out.p = malloc(sizeof before);
    if (out.p == NULL)
        return;
    memcpy(out.p, before, sizeof before);
    out.n = out.cap = sizeof before;
#ifdef BG_FUZZ_JSONL
    int64_t r = sink == BG_SINK_JSONL
                    ? bg_rows_jsonl(plan, rows, n, &frames[plan->nimages - 1], &out)
                    : bg_rows(plan, rows, n, sink, &out);
#else
    int64_t r = bg_rows(plan, rows, n, sink, &out);
#endif
    if (r == BG_NOMEM) {
        bg_buf_free(&out);
        return;
    }
#ifdef BG_FUZZ_REPLAY
    if (getenv("FUZZ_ROWS_PRINT")) {  /* what each sink wrote, to see a finding */
        printf("sink %d: %lld rows (count %lld)\n", sink, (long long)r, (long long)counted);
        fwrite(out.p + sizeof before, 1, out.n - sizeof before, stdout);
        printf("\n-- end of sink %d\n", sink);
        fflush(stdout);
    }
#endif
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
#ifdef BG_FUZZ_JSONL
    if (sink == BG_SINK_JSONL && r >= 0) {
        int64_t lines = 0;
        for (size_t k = sizeof before; k < out.n; k++)
            lines += out.p[k] == '\n';
        if (lines != r || (r > 0 && out.p[out.n - 1] != '\n'))
            broken("JSON lines that are not one line per row");
    }
#endif
    bg_buf_free(&out);
}

/* the EACH sink's callback: what the objects sink reads of each value, and the order checked */
typedef struct each_seen {
    const bg_plan *plan;
    int64_t rows, values;
    int img, col, refuse_at;  /* refuse_at: the value the callback refuses (-1: none) */
    unsigned sum;
} each_seen;

static int each_value(void *ctx, int what, int index, const bg_value *v)
{
    each_seen *e = ctx;
    if (what == BG_EACH_IMAGE) {
        if (index != (index == 0 ? 0 : e->img + 1) || index >= e->plan->nimages)
            broken("EACH: images out of order");
        e->rows += index == 0;
        e->img = index;
        e->col = -1;
        return 0;
    }
    if (index <= e->col || index >= e->plan->ncols || !e->plan->present[e->img][index])
        broken("EACH: a column out of order, or not in the image");
    e->col = index;
    if (what == BG_EACH_NULL)
        return v == NULL ? 0 : (broken("EACH: a NULL with a value"), 0);
    if (what != BG_EACH_VALUE || v == NULL || v->kind < 0 || v->kind >= BG_NKINDS)
        broken("EACH: an unknown call or kind");
    if (e->values++ == e->refuse_at)
        return BG_REFUSE;
    if (v->len < 0 || (v->len > 0 && v->data == NULL))
        broken("EACH: a span of no bytes");
    for (int64_t k = 0; k < v->len; k++)  /* every byte of the span: ASan sees a read outside */
        e->sum += v->data[k];
    if (v->kind == BG_K_decimal) {
        char t[BG_DECIMAL_MAX_DIGITS + 4];
        int n = bg_decimal_text(t, v->data, v->len, v->precision, v->scale);
        for (int k = 0; k < n; k++)
            e->sum += (unsigned char)t[k];
    }
    return 0;
}

static void run_each(const bg_plan *plan, const uint8_t *rows, int64_t n, int64_t counted,
                     int refuse_at)
{
    each_seen e = {plan, 0, 0, -1, -1, refuse_at, 0};
    int64_t r = bg_rows_each(plan, rows, n, each_value, &e);
    if (r < 0 && r != BG_SHORT && r != BG_REFUSE)
        broken("EACH: an unknown status");
    if (r >= 0 && r != e.rows)
        broken("EACH: a count other than its rows");
    if (counted >= 0 && refuse_at < 0 && r != counted)
        broken("EACH: another count than BG_SINK_COUNT, which read every row");
    if (refuse_at >= 0 && e.values > refuse_at && r != BG_REFUSE)
        broken("EACH: the callback's refusal did not end the event");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bg_colplan cols[MAX_COLS];
#ifdef BG_FUZZ_JSONL
    static bg_colplan jcols[MAX_COLS];
#ifdef BG_FUZZ_DEBEZIUM
    static bg_colplan dcols[MAX_COLS];
#endif
    static const char key[] = "\"c\": ";
    if (MEMBER_LEN[0] == 0)
        make_tables();
#endif
    static uint8_t present[2][MAX_COLS];
    static const char pre0[] = "### pre 0\n", pre1[] = "### pre 1\n";
    static const char head[] = "###   @=", tail[] = " /* T */\n", null[] = "###   @=NULL\n";
    if (size < 1)
        return 0;
    int ncols = 1 + (data[0] & 31), update = data[0] >> 5 & 1, jl = data[0] >> 6 & 1;
    size_t at = 1;
    if (size < at + (size_t)ncols * COL_BYTES)
        return 0;
#ifdef BG_FUZZ_JSONL
    if (jl && size < at + (size_t)ncols * (COL_BYTES + JL_BYTES))
        return 0;
    const uint8_t *jpart = data + at + (size_t)ncols * COL_BYTES;
#else
    (void)jl;
#endif
#ifdef BG_FUZZ_DEBEZIUM
    int dz = data[0] >> 7 & 1;
    size_t dz_at = at + (size_t)ncols * (COL_BYTES + (jl ? JL_BYTES : 0));
    if (dz && size < dz_at + (size_t)ncols * DZ_BYTES)
        return 0;
#endif
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
#ifdef BG_FUZZ_JSONL
        bg_colplan *jp = &jcols[c];
        *jp = *cp;
        jp->head = key;
        jp->head_len = sizeof key - 1;
        jp->tail = jp->null = "";
        jp->tail_len = jp->null_len = 0;
        jp->nmembers = -1;
        jp->form = (d[0] >> 3) < BG_NJL ? d[0] >> 3 : -1;
        if (jl) {
            const uint8_t *j = jpart + (size_t)c * JL_BYTES;
            jp->form = j[0] < BG_NJL ? j[0] : -1;
            jp->nmembers = j[1] == 0xFF ? -1 : j[1] % (NMEMBERS + 1);
            jp->member = MEMBERS;
            jp->member_len = MEMBER_LEN;
            jp->mask = (uint64_t *)MASKS;
            jp->table = j[2] ? TABLES[j[2] & 1] : NULL;
            bg_val pad = slot(j + 3);
            jp->pad = pad.k == BG_NULL ? 0 : pad.i;
        }
#endif
#ifdef BG_FUZZ_DEBEZIUM
        if (dz) {  /* the Debezium plan's column: the JSON lines' head, its own form and flags */
            const uint8_t *z = data + dz_at + (size_t)c * DZ_BYTES;
            bg_colplan *zp = &dcols[c];
            *zp = jcols[c];
            zp->form = z[0] < BG_NDZ ? z[0] : -1;
            zp->flags = z[1];
            zp->nmembers = z[2] == 0xFF ? -1 : z[2] % (NMEMBERS + 1);
            zp->member = MEMBERS;
            zp->member_len = MEMBER_LEN;
            zp->mask = (uint64_t *)MASKS;
            zp->table = z[3] ? TABLES[z[3] & 1] : NULL;
            bg_val darg = slot(z + 4), dpad = slot(z + 4 + SLOT);
            zp->arg = darg.k == BG_NULL ? 0 : darg.i;
            zp->pad = dpad.k == BG_NULL ? 0 : dpad.i;
        }
#endif
    }
#ifdef BG_FUZZ_JSONL
    if (jl)
        at += (size_t)ncols * JL_BYTES;
#endif
#ifdef BG_FUZZ_DEBEZIUM
    if (dz)
        at += (size_t)ncols * DZ_BYTES;
#endif
    bg_plan plan = {.ncols = ncols, .nimages = 1 + update, .cols = cols,
                    .present = {present[0], present[1]}, .pre = {pre0, pre1},
                    .pre_len = {sizeof pre0 - 1, sizeof pre1 - 1}};
#ifdef BG_FUZZ_JSONL
    bg_plan jplan = plan;
    plan.kind = BG_PLAN_VV;
    jplan.kind = BG_PLAN_JSONL;
    jplan.cols = jcols;
#endif
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
    run_each(&plan, rows, n, counted, -1);
    run_each(&plan, rows, n, counted, (int)(size % 7));  /* a callback that refuses a value */
#ifdef BG_FUZZ_JSONL
    /* COUNT checks each value with its plan's forms: the JSON lines plan counts on its own */
    int64_t jcounted = bg_rows(&jplan, rows, n, BG_SINK_COUNT, NULL);
    if (jcounted < 0 && jcounted != BG_SHORT && jcounted != BG_REFUSE)
        broken("an unknown status of BG_SINK_COUNT");
    run_text_sink(&jplan, rows, n, BG_SINK_JSONL, jcounted);
#endif
#ifdef BG_FUZZ_DEBEZIUM
    if (dz) {
        bg_plan dplan = jplan;
        dplan.kind = BG_PLAN_DEBEZIUM;
        dplan.cols = dcols;
        int64_t dcounted = bg_rows(&dplan, rows, n, BG_SINK_COUNT, NULL);
        if (dcounted < 0 && dcounted != BG_SHORT && dcounted != BG_REFUSE)
            broken("an unknown status of BG_SINK_COUNT");
        run_text_sink(&dplan, rows, n, BG_SINK_JSONL, dcounted);
    }
#endif
    free(rows);
    return 0;
}

#ifdef BG_FUZZ_REPLAY
#include "fuzz_replay.h"  /* fuzz_rows FILE...: each file through the target once */
#endif
