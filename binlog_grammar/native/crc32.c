/* CRC-32 (reflected polynomial 0xEDB88320), slicing by 8: eight 256-entry tables let the loop
 * fold eight input bytes per step with eight table loads instead of one load per byte.
 * Table k holds the CRC of a byte followed by k zero bytes, so the contributions of the eight
 * bytes of a step, each k bytes from the step's end, are XORed together. Checked against
 * zlib.crc32 by tests/native/. */
#include "crc32.h"

#define BG_CRC32_POLY 0xEDB88320u

static uint32_t tables[8][256];
static int ready;

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
    ready = 1;
}

uint32_t bg_crc32(uint32_t crc, const uint8_t *p, size_t len)
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
