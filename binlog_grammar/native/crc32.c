/* CRC-32 (reflected polynomial 0xEDB88320), slicing by 8: eight 256-entry tables let the loop
 * fold eight input bytes per step with eight table loads instead of one load per byte.
 * Table k holds the CRC of a byte followed by k zero bytes, so the contributions of the eight
 * bytes of a step, each k bytes from the step's end, are XORed together. Checked against
 * zlib.crc32 by tests/native/.
 *
 * On x86-64 processors with carry-less multiplication (PCLMULQDQ), inputs of 64 bytes or more
 * are first folded 16 bytes at a time: the CRC register of a message depends only on the
 * message as a polynomial modulo the CRC's, and a 16-byte block B that lies d bits before the
 * end of what follows it contributes B * x^d, which is congruent to the product of B's two
 * 64-bit halves with the constants x^(d+32) and x^(d-32) mod P (bit-reflected, as the data is;
 * the 32s are the reflected product's one-bit offset and the register's width). Four
 * accumulators fold 64 bytes a step (d = 512), are then folded into one (d = 128), and the
 * 16 bytes left, with the input's tail, go through the tables. About eight times the tables'
 * speed (a bench binlog's CRC32 footers were half of `stats`' compiled loop). */
#include "crc32.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define BG_CRC32_CLMUL 1
#endif

#define BG_CRC32_POLY 0xEDB88320u

static uint32_t tables[8][256];
static int ready;
int bg_crc32_folds;  /* the carry-less folding is there (set by bg_crc32_init) */

void bg_crc32_init(void)
{
    if (ready)
        return;
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int i = 0; i < 8; i++)
            c = (c & 1) ? (c >> 1) ^ BG_CRC32_POLY : c >> 1;
        tables[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; b++)
        for (int k = 1; k < 8; k++)
            tables[k][b] = (tables[k - 1][b] >> 8) ^ tables[0][tables[k - 1][b] & 0xff];
#ifdef BG_CRC32_CLMUL
    __builtin_cpu_init();
    bg_crc32_folds = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse2");
#endif
    ready = 1;
}

static uint32_t bg_crc32_tables(uint32_t crc, const uint8_t *p, size_t len)
{
    uint32_t c = ~crc;
    while (len >= 8) {
        /* the bytes are read one by one: no alignment or byte order assumed */
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                           (uint32_t)p[3] << 24);
        c = tables[7][lo & 0xff] ^ tables[6][(lo >> 8) & 0xff] ^ tables[5][(lo >> 16) & 0xff] ^
            tables[4][lo >> 24] ^ tables[3][p[4]] ^ tables[2][p[5]] ^ tables[1][p[6]] ^
            tables[0][p[7]];
        p += 8;
        len -= 8;
    }
    while (len--)
        c = (c >> 8) ^ tables[0][(c ^ *p++) & 0xff];
    return ~c;
}

#ifdef BG_CRC32_CLMUL
/* x * x^(d+32) (low halves) and x * x^(d-32) (high halves), reflected: the congruence of a
 * block d bits further on (d = 512: four blocks; d = 128: the next block) */
#define BG_CRC32_FOLD(x, k) _mm_xor_si128(_mm_clmulepi64_si128((x), (k), 0x00), \
                                          _mm_clmulepi64_si128((x), (k), 0x11))

__attribute__((target("pclmul,sse2")))
static uint32_t bg_crc32_fold(uint32_t crc, const uint8_t *p, size_t len)
{
    const __m128i by4 = _mm_set_epi64x(0x1c6e41596LL, 0x154442bd4LL);  /* d = 512 */
    const __m128i by1 = _mm_set_epi64x(0x0ccaa009eLL, 0x1751997d0LL);  /* d = 128 */
    /* the register's start (~crc) is XORed into the first four bytes, as the tables' loop does */
    __m128i x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128((int)~crc));
    __m128i x1 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 32));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(p + 48));
    p += 64;
    len -= 64;
    while (len >= 64) {
        x0 = _mm_xor_si128(BG_CRC32_FOLD(x0, by4), _mm_loadu_si128((const __m128i *)p));
        x1 = _mm_xor_si128(BG_CRC32_FOLD(x1, by4), _mm_loadu_si128((const __m128i *)(p + 16)));
        x2 = _mm_xor_si128(BG_CRC32_FOLD(x2, by4), _mm_loadu_si128((const __m128i *)(p + 32)));
        x3 = _mm_xor_si128(BG_CRC32_FOLD(x3, by4), _mm_loadu_si128((const __m128i *)(p + 48)));
        p += 64;
        len -= 64;
    }
    x1 = _mm_xor_si128(BG_CRC32_FOLD(x0, by1), x1);
    x2 = _mm_xor_si128(BG_CRC32_FOLD(x1, by1), x2);
    x3 = _mm_xor_si128(BG_CRC32_FOLD(x2, by1), x3);
    while (len >= 16) {
        x3 = _mm_xor_si128(BG_CRC32_FOLD(x3, by1), _mm_loadu_si128((const __m128i *)p));
        p += 16;
        len -= 16;
    }
    /* x3 has the message's remainder so far: its 16 bytes through the tables from a register
     * of 0 (crc ~0), then the tail */
    uint8_t last[16];
    _mm_storeu_si128((__m128i *)last, x3);
    return bg_crc32_tables(bg_crc32_tables(0xFFFFFFFFu, last, 16), p, len);
}
#endif

uint32_t bg_crc32(uint32_t crc, const uint8_t *p, size_t len)
{
#ifdef BG_CRC32_CLMUL
    if (len >= 64 && bg_crc32_folds)
        return bg_crc32_fold(crc, p, len);
#endif
    return bg_crc32_tables(crc, p, len);
}
