/* The standalone driver of tools/fuzz_native.py: a coverage-guided mutation campaign against the
 * generated framing walk (generated/native/framing.c) and the CRC32 (binlog_grammar/native/),
 * both built with -fsanitize=address,undefined and -fsanitize-coverage=trace-pc; this file is
 * built without coverage, so only the walker's edges count.
 *
 *   fuzz_native EXECS RNG_SEED FINDINGS_DIR SEED_FILE...
 *
 * Each execution copies one input into a buffer of exactly its size (AddressSanitizer reports
 * any read past it), walks it as a file with a drawn header length, checksum setting, batch size
 * and stop, and checks what the walk promises: records in order, each event inside the buffer
 * and at least a header long, the stop where the records end. An input that reaches code no
 * earlier input reached joins the queue. A sanitizer report or a broken promise writes the
 * input to FINDINGS_DIR (the sanitizer's through its death callback) and stops. The last line
 * is "execs N queue Q edges E findings F". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framing.h"
#include "crc32.h"

#define MAP_BITS (1 << 16)
#define MAX_QUEUE 4096
#define MAX_INPUT (1 << 20)

static uint8_t seen[MAP_BITS / 8];   /* every edge any input reached */
static uint8_t now[MAP_BITS / 8];    /* the edges of this execution */

void __sanitizer_cov_trace_pc(void)
{
    uintptr_t pc = (uintptr_t)__builtin_return_address(0);
    uint32_t h = (uint32_t)((pc ^ (pc >> 16)) * 0x9E3779B1u) >> 16;
    now[h >> 3] |= (uint8_t)(1 << (h & 7));
}

typedef struct { uint8_t *data; size_t len; } input_t;
static input_t queue[MAX_QUEUE];
static size_t queued;
static const uint8_t *current;
static size_t current_len;
static const char *findings_dir;
static unsigned long findings;

static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void write_finding(const char *why)
{
    char path[4096];
    FILE *f;
    snprintf(path, sizeof path, "%s/finding-%lu.bin", findings_dir, findings++);
    f = fopen(path, "wb");
    if (f) {
        fwrite(current, 1, current_len, f);
        fclose(f);
    }
    fprintf(stderr, "finding: %s -> %s\n", why, path);
}

extern void __sanitizer_set_death_callback(void (*callback)(void));
static void on_death(void) { write_finding("sanitizer report"); }

static void add_input(const uint8_t *data, size_t len)
{
    if (queued == MAX_QUEUE)
        return;
    queue[queued].data = malloc(len ? len : 1);
    memcpy(queue[queued].data, data, len);
    queue[queued].len = len;
    queued++;
}

static uint8_t records[64 * BG_RECORD_SIZE];

/* Walk the input as a file; 0 when every promise held. */
static int run(const uint8_t *data, size_t len)
{
    uint8_t *buf = malloc(len ? len : 1);
    size_t pos = BG_MAGIC_LEN, stop, prev_end = BG_MAGIC_LEN, n, i;
    unsigned hl;
    int checksums = (int)(rnd() & 1), broken = 0;
    size_t batch = 1 + rnd() % 64;
    bg_walk_result res;
    uint64_t r = rnd();

    memcpy(buf, data, len);
    current = buf;
    current_len = len;
    hl = (r & 3) == 0 ? BG_BASE_HEADER_LEN : (r & 3) == 1 ? (unsigned)(r >> 8) % 64 : BG_FULL_HEADER_LEN;
    stop = (r & 0x30) == 0 ? (size_t)(r >> 32) % (len + 8) : len;
    do {
        n = bg_walk(buf, len, pos, stop, hl, checksums, records, batch, &res);
        for (i = 0; i < n && !broken; i++) {
            const uint8_t *rec = records + i * BG_RECORD_SIZE;
            uint64_t off = 0;
            uint32_t elen = 0;
            for (int k = 0; k < 8; k++)
                off |= (uint64_t)rec[BG_RECORD_OFFSET_AT + k] << (8 * k);
            for (int k = 0; k < 4; k++)
                elen |= (uint32_t)rec[BG_RECORD_EVENT_LENGTH_AT + k] << (8 * k);
            if (off != prev_end || elen < hl || off + elen > len)
                broken = 1;
            prev_end = off + elen;
        }
        if (!broken && res.pos != prev_end && res.status != BG_STOP_BAD_HEADER_LEN)
            broken = 1;
        pos = res.pos;
    } while (!broken && res.status == BG_STOP_FULL);
    if (!broken && res.status == BG_STOP_SHORT_HEADER && !(len - res.pos < hl))
        broken = 1;
    if (broken)
        write_finding("a broken promise of the walk");
    /* the CRC on a random range, against the bytewise definition */
    if (len) {
        size_t a = rnd() % len, b = a + rnd() % ((len - a < 4096 ? len - a : 4096) + 1);
        uint32_t c = 0xFFFFFFFFu;
        for (size_t k = a; k < b; k++) {
            c ^= buf[k];
            for (int j = 0; j < 8; j++)
                c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
        }
        if (~c != bg_crc32(0, buf + a, b - a)) {
            write_finding("CRC32 differs from the bytewise definition");
            broken = 1;
        }
    }
    free(buf);
    return broken;
}

static const uint32_t interesting[] = {0, 1, 3, 4, 12, 13, 18, 19, 20, 23, 0x7f, 0x80, 0xff, 0x100,
                                       0xffff, 0x10000, 0x7fffffff, 0x80000000u, 0xfffffff0u,
                                       0xffffffffu};

static size_t mutate(uint8_t *d, size_t len)
{
    int rounds = 1 + (int)(rnd() % 4);
    while (rounds--) {
        uint64_t r = rnd();
        size_t at = len ? (size_t)(r >> 16) % len : 0;
        switch (r % 8) {
        case 0: if (len) d[at] ^= (uint8_t)(1 << (r >> 8 & 7)); break;
        case 1: if (len) d[at] = (uint8_t)(r >> 40); break;
        case 2: /* a length field: an interesting value, or what is left, or off by a little */
            if (len >= 4) {
                uint32_t v = (r >> 40 & 1) ? interesting[(r >> 41) % (sizeof interesting / 4)]
                                           : (uint32_t)(len - at + (int)((r >> 41) % 9) - 4);
                at = at > len - 4 ? len - 4 : at;
                for (int k = 0; k < 4; k++)
                    d[at + k] = (uint8_t)(v >> (8 * k));
            }
            break;
        case 3: len = len ? (size_t)(r >> 20) % len : 0; break;   /* truncate */
        case 4: { /* append random bytes */
            size_t add = 1 + (r >> 20) % 64;
            if (len + add <= MAX_INPUT) {
                for (size_t k = 0; k < add; k++)
                    d[len + k] = (uint8_t)rnd();
                len += add;
            }
            break;
        }
        case 5: { /* splice in another queued input's bytes */
            input_t *o = &queue[rnd() % queued];
            if (o->len) {
                size_t from = rnd() % o->len, n = 1 + rnd() % (o->len - from);
                if (at + n > MAX_INPUT)
                    n = MAX_INPUT - at;
                memcpy(d + at, o->data + from, n);
                if (at + n > len)
                    len = at + n;
            }
            break;
        }
        case 6: /* copy a run within the input */
            if (len > 1) {
                size_t from = rnd() % len, n = 1 + rnd() % (len - from);
                if (at + n > len)
                    n = len - at;
                memmove(d + at, d + from, n);
            }
            break;
        default: /* an event length made to fit exactly, at an event-aligned place */
            if (len >= BG_FULL_HEADER_LEN) {
                at = at > len - BG_FULL_HEADER_LEN ? len - BG_FULL_HEADER_LEN : at;
                uint32_t v = (uint32_t)(len - at);
                for (int k = 0; k < 4; k++)
                    d[at + BG_FULL_EVENT_LENGTH_AT + k] = (uint8_t)(v >> (8 * k));
            }
        }
    }
    return len;
}

static int merge_coverage(void)
{
    int fresh = 0;
    for (size_t i = 0; i < sizeof now; i++) {
        if (now[i] & ~seen[i]) {
            seen[i] |= now[i];
            fresh = 1;
        }
        now[i] = 0;
    }
    return fresh;
}

static unsigned long edges(void)
{
    unsigned long n = 0;
    for (size_t i = 0; i < sizeof seen; i++)
        n += (unsigned long)__builtin_popcount(seen[i]);
    return n;
}

int main(int argc, char **argv)
{
    unsigned long execs, done = 0;
    static uint8_t work[MAX_INPUT + 64];
    if (argc < 4) {
        fprintf(stderr, "usage: %s EXECS RNG_SEED FINDINGS_DIR SEED_FILE...\n", argv[0]);
        return 2;
    }
    execs = strtoul(argv[1], NULL, 10);
    rng_state = strtoull(argv[2], NULL, 10) * 0x9E3779B97F4A7C15ull + 1;
    findings_dir = argv[3];
    bg_crc32_init();
    __sanitizer_set_death_callback(on_death);
    for (int i = 4; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        size_t n;
        if (!f)
            continue;
        n = fread(work, 1, MAX_INPUT, f);
        fclose(f);
        add_input(work, n);
    }
    if (!queued)
        add_input((const uint8_t *)BG_MAGIC, BG_MAGIC_LEN);
    for (size_t i = 0; i < queued; i++) {  /* the seeds as they are */
        run(queue[i].data, queue[i].len);
        merge_coverage();
        done++;
    }
    while (done < execs && findings == 0) {
        input_t *in = &queue[rnd() % queued];
        size_t len;
        memcpy(work, in->data, in->len);
        len = mutate(work, in->len);
        run(work, len);
        if (merge_coverage())
            add_input(work, len);
        done++;
        if (done % 1000000 == 0)
            fprintf(stderr, "execs %lu queue %zu edges %lu\n", done, queued, edges());
    }
    printf("execs %lu queue %zu edges %lu findings %lu\n", done, queued, edges(), findings);
    return findings ? 1 : 0;
}
