/* CRC-32 as the binlog's event_checksum (specs/framing.yaml) uses it: ISO 3309 / ITU-T V.42,
 * the reflected polynomial 0xEDB88320, as zlib.crc32 computes it. Hand-written: an algorithm. */
#ifndef BG_CRC32_H
#define BG_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Fill the tables; call once before bg_crc32 (the module's init does). */
void bg_crc32_init(void);

/* 1 when bg_crc32 folds long inputs by carry-less multiplication (x86-64 with PCLMULQDQ; set
 * by bg_crc32_init): then faster than zlib's crc32 */
extern int bg_crc32_folds;

/* The CRC of data[0 .. len) continued from `crc` (0 to start), as zlib.crc32(data, crc). */
uint32_t bg_crc32(uint32_t crc, const uint8_t *data, size_t len);

#endif
