"""Decompression (binlog_grammar.runtime.codecs): each codec round trips what its library
compresses, output stops one byte past the limit, and MariaDB's compressed column values keep
their own messages (runtime.values.CompressedText)."""
import zlib

import pytest
import zstandard

from binlog_grammar.binlog.events import decompress as events_decompress
from binlog_grammar.runtime.codecs import TooLong, decompress, read_bounded
from binlog_grammar.runtime.values import CompressedText

PLAIN = b"INSERT INTO t VALUES " + b"(1, 'abc'), " * 500


def deflate(data: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


def test_events_reexport_the_one_decompress():
    assert events_decompress is decompress


@pytest.mark.parametrize("codec, stored", [
    ("zlib", zlib.compress(PLAIN)),
    ("deflate", deflate(PLAIN)),
    ("zstd", zstandard.ZstdCompressor().compress(PLAIN)),
    ("mariadb_zlib", bytes([0x80 | 2]) + len(PLAIN).to_bytes(2, "big") + zlib.compress(PLAIN)),
])
def test_round_trip_and_limit(codec, stored):
    assert decompress(codec, stored) == PLAIN
    assert decompress(codec, stored, limit=len(PLAIN)) == PLAIN
    with pytest.raises(ValueError, match=f"exceeds {len(PLAIN) - 1} bytes"):
        decompress(codec, stored, limit=len(PLAIN) - 1)


def test_read_bounded_asks_for_no_more_than_limit_plus_one():
    asked = []

    def read(n):
        asked.append(n)
        return b"x" * n

    with pytest.raises(TooLong, match="exceeds 10 bytes"):
        read_bounded(read, 10, chunk=4)
    assert asked == [4, 4, 3]


@pytest.mark.parametrize("stored, message", [
    (b"", "empty compressed value"),
    (b"\x80", "bad MariaDB compression header 0x80"),
    (b"\x85\0\0\0\0\0", "bad MariaDB compression header 0x85"),
    (b"\x81\x05" + zlib.compress(b"abc"), "uncompressed 3 bytes, header says 5"),
])
def test_mariadb_zlib_header(stored, message):
    with pytest.raises(ValueError, match=message):
        decompress("mariadb_zlib", stored)


def test_unknown_codec():
    with pytest.raises(ValueError, match="unknown codec lz4"):
        decompress("lz4", b"")


def column(header, original_length, data):
    return {"stored": {"header": header, "original_length": original_length, "data": data}}


@pytest.mark.parametrize("header, compress", [(0x80 | 8 | 2, deflate), (0x80 | 2, zlib.compress)])
def test_compressed_column_values(header, compress):
    text = CompressedText()
    assert text.decode(column(header, len(PLAIN), compress(PLAIN)), None) == PLAIN
    with pytest.raises(ValueError, match=f"inflates to {len(PLAIN)} bytes, header says {len(PLAIN) + 7}$"):
        text.decode(column(header, len(PLAIN) + 7, compress(PLAIN)), None)
    with pytest.raises(ValueError, match="inflates to 11 bytes, header says 10$"):
        text.decode(column(header, 10, compress(PLAIN)), None)
    with pytest.raises(ValueError, match="^compressed column value: Error -3"):
        text.decode(column(header, len(PLAIN), b"\xff" * 20), None)
