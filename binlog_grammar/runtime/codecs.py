"""Decompression, once for every stage that meets compressed bytes.

The codecs a spec's `decode:` names (specs/README.md) for compressed events, and the one MariaDB's
compressed columns use:

| codec | the bytes |
|---|---|
| zstd | a zstd frame (MySQL's TRANSACTION_PAYLOAD_EVENT) |
| zlib | a zlib stream (RFC 1950) |
| deflate | a raw deflate stream, no zlib wrapper (RFC 1951; MariaDB's compressed columns) |
| mariadb_zlib | MariaDB's compressed events: a header byte whose low 3 bits say how many big-endian bytes of uncompressed length follow, then a zlib stream |

Output is read in chunks and never beyond `limit` + 1 bytes, so a bogus length or a compression
bomb cannot exhaust memory: more than `limit` bytes raises TooLong. A damaged stream raises what
the codec's library raises (zlib.error, zstandard.ZstdError) or ValueError.
"""
from __future__ import annotations

import io
import zlib

CHUNK = 1 << 20
DEFAULT_LIMIT = 1 << 30


class TooLong(ValueError):
    """The output runs past `limit` bytes."""

    def __init__(self, limit: int):
        super().__init__(f"decompressed data exceeds {limit} bytes")
        self.limit = limit


def decompress(codec: str, data: bytes, limit: int = DEFAULT_LIMIT) -> bytes:
    """Undo `codec` on `data`; at most `limit` bytes of output (see the module's table)."""
    if codec == "zstd":
        import zstandard

        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data))
        return read_bounded(reader.read, limit)
    if codec == "zlib":
        return _inflate(data, zlib.MAX_WBITS, limit)
    if codec == "deflate":
        return _inflate(data, -zlib.MAX_WBITS, limit)
    if codec == "mariadb_zlib":
        if not data:
            raise ValueError("empty compressed value")
        nlen = data[0] & 0x07
        if nlen > 4 or nlen == 0:
            raise ValueError(f"bad MariaDB compression header 0x{data[0]:02x}")
        want = int.from_bytes(data[1:1 + nlen], "big")
        if want > limit:
            raise ValueError(f"uncompressed length {want} exceeds {limit} bytes")
        out = decompress("zlib", data[1 + nlen:], limit=want)
        if len(out) != want:
            raise ValueError(f"uncompressed {len(out)} bytes, header says {want}")
        return out
    raise ValueError(f"unknown codec {codec}")


def _inflate(data: bytes, wbits: int, limit: int) -> bytes:
    """A zlib (wbits > 0) or raw deflate (wbits < 0) stream, fed with what the last step left."""
    d = zlib.decompressobj(wbits)
    rest = [data]

    def step(n):
        chunk = d.decompress(rest[0], n)
        rest[0] = d.unconsumed_tail
        return chunk

    return read_bounded(step, limit)


def read_bounded(read, limit: int, chunk: int = CHUNK) -> bytes:
    """Call read(n) until it returns nothing, asking for no more than `limit` + 1 bytes in all, so
    memory follows the real output, not a claimed size; more than `limit` bytes raises TooLong."""
    out = bytearray()
    while True:
        piece = read(min(chunk, limit + 1 - len(out)))
        if not piece:
            return bytes(out)
        out += piece
        if len(out) > limit:
            raise TooLong(limit)
