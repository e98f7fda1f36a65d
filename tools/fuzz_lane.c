/* The libFuzzer target of tools/fuzz_native.py --lane: the C core of dump's text lane
 * (generated/native/lane.c built with BG_LANE_NO_PYTHON: no Python object, its tables, ids and
 * plans in C) with the row images it writes through (generated/native/rows.c) and the CRC32
 * (binlog_grammar/native/crc32.c), under AddressSanitizer and UndefinedBehaviorSanitizer. Built
 * with clang -fsanitize=fuzzer, or with -DBG_FUZZ_REPLAY by any C compiler into a program that
 * runs the files it is given once each (tests/native/test_fuzz_native.py replays
 * the .lane files of tests/native/regressions/lane/ that way).
 *
 * An input is a lane state, then a binlog's events:
 *
 *   byte 0   bit 0: check CRC32s; bit 1: every event ends in a 4-byte CRC32 (else none);
 *            bit 2: make every event's end_log_pos and CRC32 right before the runs (so what
 *            a mutation changed reaches the parsing); bits 3-4: the text limit of a run
 *            (1 << 18, 4096, 256 or 1 byte); bit 5: the runs stop byte 3 bytes before the end;
 *            bit 6: labels, flag names and summaries long enough to overflow the header line
 *   byte 1   the tables the state knows: bit k for the k-th distinct TABLE_MAP body of the
 *            events (8 at most: later bodies are tables the Python path has not read)
 *   byte 2   the ids the state knows before the first run: bit k, the k-th table's first id
 *   byte 3   bytes cut off the stop (bit 5 of byte 0)
 *   byte 4-5 a type code (0: none) and the post-header length it gets instead of MariaDB's
 *   byte 6   T, how many tables' columns follow (at most 8)
 *   T times  1 byte N (at most 32), then N columns of tools/fuzz_rows.c's form (a flags byte,
 *            of which bit 2 strips trailing NULs, a form byte, the argument and the column's
 *            BG_NCOLIN inputs as slots): table k's columns are description k % T's, column c
 *            description c % N's (T or N 0: no form, which the rows refuse)
 *   the rest the events, as a binlog holds them from offset 4 (after its magic), in a buffer of
 *            exactly their size
 *
 * The state is built from those bytes and from the events themselves, as output/text_lane.py
 * builds it from what the Python path read: each QUERY_EVENT's statement lines (by the key of
 * its flags, sql_mode, database and bytes), each known table's body with its summary, and for
 * each rows event of a known table (by the ids of the TABLE_MAPs before it) a plan for its shape
 * (its columns present as its bitmaps say). The core then writes runs from offset 4 as the
 * stream drives it: after a run that stops at an event, that event is stepped over (as the
 * Python path reads it, learning its table's id when it is a TABLE_MAP of a known table) and
 * the next run starts after it; a full run is followed by the next. Each run's promises are
 * checked: it stops inside [pos, stop] on an event boundary, it writes text when and only when
 * it writes events (each starting with "# at <offset>"), a full run is at its limit, an END run
 * at the stop, the ids it assigns are known tables'. A broken promise aborts (libFuzzer keeps the
 * input); so does a sanitizer's report.
 *
 * Then the replay lane's core (replay.h: dump's replay form) runs over the same events and state,
 * driven the same way (a run that stops for a time text is given one and goes on), its options
 * from byte 3 (bits 0-5: -s, positions, row count, annotations, --skip-gtids, decode-rows; bits
 * 6-7: -v's count), every QUERY_EVENT's lines known under session state 0: its runs keep the
 * same promises (text only with events, written from an event boundary; a statement of rows
 * events whole or not at all, so a run never ends inside one). */
#define BG_LANE_NO_PYTHON
#include "lane.c"

#define MAX_TABLES 8
#define MAX_IDS 64
#define MAX_PLANS 32
#define MAX_PLAN_COLS 64
#define OFFSET 4  /* the events' offset in the file */

#include "fuzz_slots.h"  /* MAX_COLS, SLOT, COL_BYTES and slot(): a column's parameters from input bytes */

static void broken(const char *why)
{
    fprintf(stderr, "fuzz_lane: a broken promise of the lane's core: %s\n", why);
    abort();
}

static const char *const FLAGS[] = {"STMT_END_F", "NO_FOREIGN_KEY_CHECKS_F",
                                    "RELAXED_UNIQUE_CHECKS_F", "COMPLETE_ROWS_F",
                                    "USE_SQL_FOREIGN_KEY_F", "NO_CHECK_CONSTRAINT_CHECKS_F"};
static const unsigned FLAG_BITS[] = {1, 2, 4, 8, 16, 128};

typedef struct table_desc { int ncols; const uint8_t *cols; } table_desc;

typedef struct harness {
    bg_lane lane;
    table_desc desc[MAX_TABLES];
    int ndesc;
    const uint8_t *body[MAX_TABLES];  /* the distinct TABLE_MAP bodies, in order */
    int64_t body_len[MAX_TABLES], reg[MAX_TABLES];  /* reg -1: not a table the state knows */
    int nbodies;
    uint64_t id_of[MAX_IDS];
    int id_table[MAX_IDS], nids;
    /* the plans made (freed at the end) */
    bg_plan plan[MAX_PLANS];
    bg_colplan *cols[MAX_PLANS];
    uint8_t *present[MAX_PLANS][2];
    int nplans;
} harness;

static const char head[] = "###   @=", tail[] = " /* T */\n", null[] = "###   @=NULL\n";
static const char pre0[] = "### WHERE\n", pre1[] = "### SET\n";

/* the lane's labels and flag names (long ones: 200 bytes), its plain set as quoting.comment's */
static int setup_lane(bg_lane *L, int options)
{
    char long_text[201];
    memset(long_text, 'L', 200);
    long_text[200] = 0;
    L->verify = options & 1;
    for (int c = 0; c < 256; c++) {
        L->crc_len[c] = options & 2 ? 4 : 0;
        int v = bg_lanes_rows_version(c);
        L->post_header_len[c] = v == 1 ? 8 : v == 2 ? 10 : c == BG_LANES_TABLE_MAP_CODE ? 8
                                : c == BG_LANES_GTID_CODE ? 19 : c == BG_LANES_QUERY_CODE ? 13
                                : c == BG_LANES_MYSQL_GTID_CODE || c == BG_LANES_ANONYMOUS_GTID_CODE
                                ? 42 : 0;
        const char *label = v ? "Write_rows" : c == BG_LANES_GTID_CODE ? "GTID"
                            : c == BG_LANES_XID_CODE ? "Xid" : c == BG_LANES_ANNOTATE_CODE
                            ? "Annotate_rows:" : c == BG_LANES_TABLE_MAP_CODE ? "Table_map"
                            : c == BG_LANES_MYSQL_GTID_CODE ? "GTID" : c == BG_LANES_ANONYMOUS_GTID_CODE
                            ? "Anonymous_GTID" : c == BG_LANES_QUERY_CODE ? "Query" : NULL;
        if (label != NULL) {
            const char *t = options & 64 ? long_text : label;
            if (bg_lane_set_label(L, c, t, strlen(t)) < 0)
                return -1;
        }
        L->plain[c] = (c >= 0x20 && c < 0x7f && c != '\\') || c == '\t';
    }
    for (int k = 0; k < 6; k++) {
        const char *t = options & 64 ? long_text : FLAGS[k];
        if (bg_lane_add_flag(L, FLAG_BITS[k], t, strlen(t)) < 0)
            return -1;
    }
    return bg_lane_add_pair(L, '/', '*') < 0 || bg_lane_add_pair(L, '*', '/') < 0 ? -1 : 0;
}

static int table_of_id(const harness *h, uint64_t tid)
{
    for (int k = h->nids - 1; k >= 0; k--)
        if (h->id_of[k] == tid)
            return h->id_table[k];
    return -1;
}

static int table_of_body(const harness *h, const uint8_t *b, int64_t n)
{
    for (int k = 0; k < h->nbodies; k++)
        if (h->body_len[k] == n && memcmp(h->body[k], b, (size_t)n) == 0)
            return k;
    return -1;
}

/* a plan for a rows event's shape d[at:at+shape] of table k, registered under its key */
static int add_plan(harness *h, int k, int code, const uint8_t *sh, int64_t shape)
{
    bg_lane *L = &h->lane;
    if (bg_lane_key(&L->key, h->reg[k], code, sh, shape) < 0)
        return -1;
    if (bg_lane_find(&L->plans, (const uint8_t *)L->key.p, L->key.n) != NULL || h->nplans >= MAX_PLANS)
        return 0;
    uint64_t ncols;
    int kn = bg_lanes_packed(sh, shape, &ncols);
    if (kn < 0 || ncols < 1 || ncols > MAX_PLAN_COLS)
        return 0;
    int64_t nb = (int64_t)(ncols + 7) / 8, images = (shape - kn) / nb;
    if (images < 1 || images > 2 || kn + nb * images != shape)
        broken("a shape that is not a count and one or two bitmaps");
    int p = h->nplans;
    bg_colplan *cols = calloc(ncols, sizeof *cols);
    uint8_t *present0 = calloc(ncols, 1), *present1 = calloc(ncols, 1);
    if (cols == NULL || present0 == NULL || present1 == NULL) {
        free(cols), free(present0), free(present1);
        return -1;
    }
    const table_desc *td = h->ndesc ? &h->desc[k % h->ndesc] : NULL;
    for (uint64_t c = 0; c < ncols; c++) {
        bg_colplan *cp = &cols[c];
        present0[c] = sh[kn + c / 8] >> (c % 8) & 1;
        present1[c] = images == 2 ? sh[kn + nb + c / 8] >> (c % 8) & 1 : 0;
        cp->form = -1;
        if (td != NULL && td->ncols > 0) {
            const uint8_t *d = td->cols + (c % (uint64_t)td->ncols) * COL_BYTES;
            cp->strip_nul = d[0] >> 2 & 1;
            cp->form = d[1] < BG_NVV ? d[1] : -1;
            bg_val arg = slot(d + 2);
            cp->arg = arg.k == BG_NULL ? 0 : arg.i;
            for (int i = 0; i < BG_NCOLIN; i++)
                cp->col.in[i] = slot(d + 2 + SLOT * (1 + i));
        }
        cp->head = head, cp->head_len = sizeof head - 1;
        cp->tail = tail, cp->tail_len = sizeof tail - 1;
        cp->null = null, cp->null_len = sizeof null - 1;
    }
    h->cols[p] = cols;
    h->present[p][0] = present0;
    h->present[p][1] = present1;
    h->plan[p] = (bg_plan){.kind = BG_PLAN_VV, .ncols = (int)ncols, .nimages = (int)images,
                           .cols = cols, .present = {present0, present1}, .pre = {pre0, pre1},
                           .pre_len = {sizeof pre0 - 1, sizeof pre1 - 1}};
    h->nplans++;
    return bg_lane_add_plan(L, (const uint8_t *)L->key.p, L->key.n, &h->plan[p]);
}

/* the tables, ids and plans of the events buf[0:n], as the Python path would have read them */
static int learn(harness *h, const uint8_t *buf, int64_t n, int tables, int ids, int long_text)
{
    bg_lane *L = &h->lane;
    int first_id[MAX_TABLES] = {0};
    for (int64_t off = 0; n - off >= BG_FULL_HEADER_LEN;) {
        const uint8_t *raw = buf + off;
        int64_t len = bg_u32le(raw + BG_FULL_EVENT_LENGTH_AT);
        if (len < BG_FULL_HEADER_LEN || len > n - off)
            break;
        off += len;
        int code = raw[BG_FULL_TYPE_CODE_AT], phl = L->post_header_len[code];
        int64_t dlen = len - L->crc_len[code] - BG_FULL_HEADER_LEN;
        const uint8_t *d = raw + BG_FULL_HEADER_LEN;
        if (dlen < 0)
            continue;
        if (code == BG_LANES_QUERY_CODE) {  /* every statement its reader accepts: known */
            bg_lanes_query q;
            if (bg_lanes_read_query(d, dlen, phl, code, &q) != 0)
                continue;
            if (bg_lane_query_key(&L->key, (unsigned)bg_le_uint(raw + BG_FULL_FLAGS_AT, 2), &q) < 0 ||
                    bg_lane_add_stmt(L, (const uint8_t *)L->key.p, L->key.n, "use `d`/*!*/;\n", 14,
                                     long_text ? "a statement long enough\n/*!*/;\n" : "BEGIN\n/*!*/;\n",
                                     long_text ? 31 : 13) < 0)
                return -1;
            continue;
        }
        if (code == BG_LANES_TABLE_MAP_CODE) {
            int64_t w = bg_lanes_table_id_width(phl);
            if (dlen < phl || w < 1 || w > 8 || w > phl)
                continue;
            int k = table_of_body(h, d + phl, dlen - phl);
            if (k < 0 && h->nbodies < MAX_TABLES) {
                k = h->nbodies++;
                h->body[k] = d + phl;
                h->body_len[k] = dlen - phl;
                h->reg[k] = -1;
                if (tables >> k & 1) {
                    char summary[300];
                    int sn = snprintf(summary, sizeof summary, ": `d`.`%s%d` mapped to number ",
                                      long_text ? "a_table_name_long_enough_to_fill_the_line_"
                                      "of_a_table_map_event_header_and_more_of_it_than_that" : "t", k);
                    h->reg[k] = bg_lane_add_table(L, d + phl, (size_t)(dlen - phl), summary, (size_t)sn);
                    if (h->reg[k] < 0)
                        return -1;
                }
            }
            if (k < 0 || h->nids >= MAX_IDS)
                continue;
            uint64_t tid = bg_le_uint(d, (int)w);
            h->id_of[h->nids] = tid;
            h->id_table[h->nids++] = k;
            if (h->reg[k] >= 0 && (ids >> k & 1) && !first_id[k]++ && bg_lane_set_id(L, tid, h->reg[k]) < 0)
                return -1;
        } else if (bg_lanes_rows_version(code)) {
            uint64_t tid;
            unsigned flags;
            int64_t at, shape;
            if (bg_lane_shape(code, d, dlen, phl, &tid, &flags, &at, &shape) != 0)
                continue;
            int k = table_of_id(h, tid);
            if (k >= 0 && h->reg[k] >= 0 && add_plan(h, k, code, d + at, shape) < 0)
                return -1;
        }
    }
    return 0;
}

static void free_harness(harness *h)
{
    for (int p = 0; p < h->nplans; p++) {
        free(h->cols[p]);
        free(h->present[p][0]);
        free(h->present[p][1]);
    }
    bg_lane_free(&h->lane);
}

/* every event's end_log_pos and CRC32 made right */
static void fix(const bg_lane *L, uint8_t *buf, int64_t n)
{
    for (int64_t off = 0; n - off >= BG_FULL_HEADER_LEN;) {
        uint8_t *raw = buf + off;
        int64_t len = bg_u32le(raw + BG_FULL_EVENT_LENGTH_AT);
        if (len < BG_FULL_HEADER_LEN || len > n - off)
            break;
        uint32_t end = (uint32_t)(OFFSET + off + len);
        for (int i = 0; i < 4; i++)
            raw[BG_FULL_LOG_POS_AT + i] = (uint8_t)(end >> (8 * i));
        if (L->crc_len[raw[BG_FULL_TYPE_CODE_AT]] == 4 && len >= BG_FULL_HEADER_LEN + 4) {
            uint32_t c = bg_crc32(0, raw, (size_t)(len - 4));
            for (int i = 0; i < 4; i++)
                raw[len - 4 + i] = (uint8_t)(c >> (8 * i));
        }
        off += len;
    }
}

/* one run's promises (see the top) */
static void check_run(const harness *h, const bg_lane_run *run, const uint8_t *buf, int64_t pos,
                      int64_t stop, int64_t max_bytes)
{
    if (run->pos < pos || run->pos > stop)
        broken("a run stopped outside [pos, stop]");
    int64_t at = pos, events = 0;
    while (at < run->pos) {
        int64_t len = bg_u32le(buf + (at - OFFSET) + BG_FULL_EVENT_LENGTH_AT);
        if (len < BG_FULL_HEADER_LEN || len > run->pos - at)
            broken("a run stopped inside an event");
        at += len;
        events++;
    }
    if ((events == 0) != (run->out.n == 0))
        broken("text without events, or events without text");
    if (events && (run->out.n < 6 || memcmp(run->out.p, "# at ", 5) != 0 ||
                   strtoll(run->out.p + 5, NULL, 10) != pos))
        broken("a run's text does not start with its first event's offset");
    /* an ANONYMOUS_GTID counts without a GTID's text */
    if (run->gtids > events || (run->gtid[0] != 0 && run->gtids == 0))
        broken("more GTIDs than events, or a GTID without its count");
    if (run->reason == BG_LANE_END && run->pos != stop)
        broken("an END run before the stop");
    if (run->reason == BG_LANE_FULL && (int64_t)run->out.n < max_bytes)
        broken("a FULL run under its limit");
    if (run->reason == BG_LANE_EVENT && run->pos >= stop)
        broken("an EVENT run at the stop");
    if (run->nassigned % 2 != 0 || run->nassigned / 2 > (size_t)events)
        broken("more TABLE_MAPs assigned than events");
    for (size_t k = 0; k < run->nassigned; k += 2)
        if ((int64_t)run->assigned[k + 1] >= h->lane.nsummaries)
            broken("an id assigned to no known table");
}

/* the replay lane's settings: short fixed texts (output/replay_lane.py gives Replay's) */
static int setup_replay(bg_replay *R, int byte3)
{
    static const char *const texts[BG_RT_N] = {
        [BG_RT_GTID] = "GTID ", [BG_RT_CID] = " cid=", [BG_RT_SEQ_PRE] = "SET seq=",
        [BG_RT_SEQ_POST] = ";\n", [BG_RT_XID] = "Xid = ", [BG_RT_COMMIT] = "COMMIT;\n",
        [BG_RT_TABLE_MAP] = "Table_map", [BG_RT_ANNOTATE] = "Annotate_rows:\n",
        [BG_RT_ANNOTATE_SHORT] = "# Annotate_rows:\n", [BG_RT_Q] = "#Q> ",
        [BG_RT_BLOCK_HEAD] = "\nBINLOG '\n", [BG_RT_BLOCK_TAIL] = "';\n",
        [BG_RT_ROWS_COUNT] = "# Number of rows: ", [BG_RT_START] = "START TRANSACTION;\n"};
    bg_replay_init(R);
    for (int k = 0; k < BG_RT_N; k++)
        if (bg_lane_text_set(&R->text[k], texts[k], strlen(texts[k])) < 0)
            return -1;
    for (int c = 0; c < 256; c++) {
        if (!(c & 0x60) && bg_lane_text_set(&R->gtid_suffix[c], c & 4 ? " trans" : "", c & 4 ? 6 : 0) < 0)
            return -1;  /* bits 5 and 6 (XA): the Python path's */
        R->gtid_info[c] = (c & 1 ? 0 : BG_RG_START) | (c & 8 ? 0 : BG_RG_PARALLEL) | (c & 2 ? BG_RG_CID : 0);
        if ((bg_lanes_rows_version(c) || bg_lanes_compressed_version(c)) &&
                bg_lane_text_set(&R->rows_label[c], "Write_rows: table id ", 21) < 0)
            return -1;
        if ((c == BG_LANES_MYSQL_GTID_CODE || c == BG_LANES_ANONYMOUS_GTID_CODE) &&
                bg_lane_text_set(&R->ignorable[c], "Ignorable\n# Ignorable\n", 22) < 0)
            return -1;
        R->twin[c] = bg_lanes_compressed_version(c) ? (uint8_t)(c - 143) : 0;
    }
    R->width = 76;
    R->options = byte3 & 63;
    R->verbose = (byte3 >> 6) > 2 ? 2 : byte3 >> 6;
    R->stmt_end = 1;
    R->thread_specific = 4;
    return 0;
}

/* each QUERY_EVENT of buf[0:n] its reader accepts: lines known under session state 0 */
static int learn_replay(const bg_lane *L, bg_replay *R, const uint8_t *buf, int64_t n)
{
    for (int64_t off = 0; n - off >= BG_FULL_HEADER_LEN;) {
        const uint8_t *raw = buf + off;
        int64_t len = bg_u32le(raw + BG_FULL_EVENT_LENGTH_AT);
        if (len < BG_FULL_HEADER_LEN || len > n - off)
            break;
        off += len;
        int code = raw[BG_FULL_TYPE_CODE_AT], phl = L->post_header_len[code];
        int64_t dlen = len - L->crc_len[code] - BG_FULL_HEADER_LEN;
        bg_lanes_query q;
        if (code != BG_LANES_QUERY_CODE || dlen < 0 ||
                bg_lanes_read_query(raw + BG_FULL_HEADER_LEN, dlen, phl, code, &q) != 0)
            continue;
        if (R->thread_id < 0)
            R->thread_id = (int64_t)q.thread_id;
        if (bg_replay_query_key(&R->qkey, 0, (unsigned)bg_le_uint(raw + BG_FULL_FLAGS_AT, 2),
                                raw + BG_FULL_HEADER_LEN, dlen, phl, &q) < 0 ||
                bg_replay_add_stmt(R, (const uint8_t *)R->qkey.p, R->qkey.n, "\txid=0\nSET TIMESTAMP=",
                                   21, "/*!*/;\nBEGIN\n/*!*/;\n", 20) < 0)
            return -1;
    }
    return 0;
}

/* one replay run's promises */
static void check_replay_run(const bg_replay *R, const bg_lane_run *run, const uint8_t *buf,
                             int64_t pos, int64_t stop, int64_t max_bytes)
{
    if (run->pos < pos || run->pos > stop)
        broken("a replay run stopped outside [pos, stop]");
    int64_t at = pos, events = 0;
    while (at < run->pos) {
        int64_t len = bg_u32le(buf + (at - OFFSET) + BG_FULL_EVENT_LENGTH_AT);
        if (len < BG_FULL_HEADER_LEN || len > run->pos - at)
            broken("a replay run stopped inside an event");
        at += len;
        events++;
    }
    if (events == 0 && run->out.n != 0)
        broken("replay text without events");
    if (R->in_stmt)
        broken("a replay run ended inside a statement");
    int printed = !(R->options & BG_RO_SHORT) && (R->options & BG_RO_POSITIONS);
    if (events && printed && (run->out.n < 6 || memcmp(run->out.p, "# at ", 5) != 0 ||
                              strtoll(run->out.p + 5, NULL, 10) != pos))
        broken("a replay run's text does not start with its first event's offset");
    if (run->reason == BG_LANE_FULL && (int64_t)run->out.n < max_bytes)
        broken("a FULL replay run under its limit");
    if (run->nassigned % 2 != 0 || run->nassigned / 2 > (size_t)events)
        broken("more TABLE_MAPs assigned than events in a replay run");
}

/* the replay lane over the events, from the state the text runs left */
static void run_replay_lane(harness *h, const uint8_t *buf, int64_t n, int64_t stop,
                            int64_t max_bytes, int byte3)
{
    bg_replay *R = malloc(sizeof *R);
    if (R == NULL)
        return;
    if (setup_replay(R, byte3) < 0 || learn_replay(&h->lane, R, buf, n) < 0)
        goto out;
    int64_t pos = OFFSET, asked_at = -1;
    int asks = 0;  /* time texts given at this position (two sharing a slot: Python reads on) */
    for (int guard = 0; pos < stop && guard < 100000; guard++) {
        bg_lane_run run;
        memset(&run, 0, sizeof run);
        R->state = 0;
        if (bg_replay_run(&h->lane, R, buf, OFFSET, n, pos, stop, max_bytes, &run) < 0) {
            bg_lane_run_free(&run);
            break;
        }
        check_replay_run(R, &run, buf, pos, stop, max_bytes);
        int reason = run.reason;
        int64_t was = pos;
        pos = run.pos;
        bg_lane_run_free(&run);
        if (pos != asked_at)
            asks = 0;
        if (reason == BG_LANE_STAMP && asks++ < 4) {
            asked_at = pos;
            bg_replay_set_stamp(R, R->need_ts, "260101 10:00:00");
            continue;
        }
        (void)was;
        if (reason == BG_LANE_FULL)
            continue;
        if (reason == BG_LANE_END && pos == stop)
            break;
        /* the Python path reads the event (it writes a statement to its end the same way) */
        if (stop - pos < BG_FULL_HEADER_LEN)
            break;
        int64_t len = bg_u32le(buf + (pos - OFFSET) + BG_FULL_EVENT_LENGTH_AT);
        if (len < BG_FULL_HEADER_LEN || len > stop - pos)
            break;
        pos += len;
    }
out:
    bg_replay_free(R);
    free(R);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        bg_crc32_init();
        ready = 1;
    }
    if (size < 7)
        return 0;
    static const int64_t LIMITS[] = {1 << 18, 4096, 256, 1};
    int options = data[0];
    int64_t max_bytes = LIMITS[options >> 3 & 3];
    harness *h = calloc(1, sizeof *h);
    if (h == NULL)
        return 0;
    size_t at = 7;
    h->ndesc = data[6] % (MAX_TABLES + 1);
    for (int k = 0; k < h->ndesc; k++) {
        if (size < at + 1)
            goto done;
        int ncols = data[at++] % (MAX_COLS + 1);
        if (size < at + (size_t)ncols * COL_BYTES)
            goto done;
        h->desc[k] = (table_desc){ncols, data + at};
        at += (size_t)ncols * COL_BYTES;
    }
    if (setup_lane(&h->lane, options) < 0)
        goto done;
    if (data[4] != 0)
        h->lane.post_header_len[data[4]] = data[5];
    /* the events alone in a buffer of their size: a read before or past them is reported */
    int64_t n = (int64_t)(size - at);
    uint8_t *buf = malloc(n ? (size_t)n : 1);
    if (buf == NULL)
        goto done;
    memcpy(buf, data + at, (size_t)n);
    if (options & 4)
        fix(&h->lane, buf, n);
    if (learn(h, buf, n, data[1], data[2], options & 64) < 0) {
        free(buf);
        goto done;
    }
    int64_t pos = OFFSET, stop = OFFSET + n - (options & 32 ? data[3] : 0);
    while (pos < stop) {
        bg_lane_run run;
        memset(&run, 0, sizeof run);
        if (bg_lane_run_text(&h->lane, buf, OFFSET, n, pos, stop, max_bytes, &run) < 0) {
            bg_lane_run_free(&run);
            break;  /* out of memory */
        }
        check_run(h, &run, buf, pos, stop, max_bytes);
#ifdef BG_FUZZ_REPLAY
        if (getenv("FUZZ_LANE_PRINT")) {
            printf("-- run from %lld to %lld, reason %d\n", (long long)pos, (long long)run.pos, run.reason);
            fwrite(run.out.p ? run.out.p : "", 1, run.out.n, stdout);
        }
#endif
        int reason = run.reason;
        pos = run.pos;
        bg_lane_run_free(&run);
        if (reason == BG_LANE_END)
            break;
        if (reason == BG_LANE_FULL)
            continue;
        /* the Python path reads the event: its length (a length past the stop ends the file) */
        if (stop - pos < BG_FULL_HEADER_LEN)
            break;
        const uint8_t *raw = buf + (pos - OFFSET);
        int64_t len = bg_u32le(raw + BG_FULL_EVENT_LENGTH_AT);
        if (len < BG_FULL_HEADER_LEN || len > stop - pos)
            break;
        int code = raw[BG_FULL_TYPE_CODE_AT], phl = h->lane.post_header_len[code];
        int64_t dlen = len - h->lane.crc_len[code] - BG_FULL_HEADER_LEN, w = bg_lanes_table_id_width(phl);
        if (code == BG_LANES_TABLE_MAP_CODE && dlen >= phl && w >= 1 && w <= 8 && w <= phl) {
            int k = table_of_body(h, raw + BG_FULL_HEADER_LEN + phl, dlen - phl);
            if (k >= 0 && h->reg[k] >= 0 &&
                    bg_lane_set_id(&h->lane, bg_le_uint(raw + BG_FULL_HEADER_LEN, (int)w), h->reg[k]) < 0)
                break;
        }
        pos += len;
    }
    run_replay_lane(h, buf, n, stop, max_bytes, data[3]);
    free(buf);
done:
    free_harness(h);
    free(h);
    return 0;
}

#ifdef BG_FUZZ_REPLAY
#include "fuzz_replay.h"  /* fuzz_lane FILE...: each file through the target once */
#endif
