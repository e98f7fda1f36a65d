"""MySQL 8 binlogs of compressed transactions (TRANSACTION_PAYLOAD_EVENT) made for the compiled
loops' tests (tests/native/test_payload_*.py) and benchmarks: the corpus's
transaction_compression.000001 (an ANONYMOUS_GTID, then a payload holding BEGIN, TABLE_MAP,
WRITE_ROWS and XID) with its transaction repeated, each copy's inner events changed (the row's
value, the xid) and compressed again with zstd, or its payload header and bytes changed on
purpose; each event's length, end_log_pos and CRC32 made right."""
import os
import struct

import zstandard

from helpers.mysql_binlog import event, events
from helpers.paths import CORPUS

COMPRESSED = CORPUS / "transaction_compression.000001"  # MySQL 8.0.32
PAYLOAD = 40


def packed(v: int) -> bytes:
    """A MySQL packed integer."""
    if v < 251:
        return bytes([v])
    if v < 1 << 16:
        return b"\xfc" + struct.pack("<H", v)
    if v < 1 << 24:
        return b"\xfd" + struct.pack("<I", v)[:3]
    return b"\xfe" + struct.pack("<Q", v)


def header(entries) -> bytes:
    """A payload header: (tag, value) entries as packed (tag, length, value), then the end mark."""
    out = b""
    for tag, value in entries:
        v = value if isinstance(value, bytes) else packed(value)
        out += packed(tag) + packed(len(v)) + v
    return out + b"\x00"


def inner_events():
    """The corpus payload's inner events (raw, without checksums)."""
    data, evs = events(COMPRESSED)
    raw = next(r for _p, c, r in evs if c == PAYLOAD)
    body = raw[19:-4]
    pos = 0
    while body[pos] != 0:  # the header, up to its end mark
        pos += 1
        n = body[pos]
        pos += 1 + n
    payload = zstandard.ZstdDecompressor().decompressobj().decompress(body[pos + 1:])
    out, at = [], 0
    while at < len(payload):
        n = struct.unpack_from("<I", payload, at + 9)[0]
        out.append(payload[at:at + n])
        at += n
    return out


def transaction(k: int, rows: int = 1) -> bytes:
    """The inner events of copy k: the row's value k (and `rows` rows), the xid 1000 + k."""
    inner = inner_events()
    out = b""
    for raw in inner:
        if raw[4] == 30:  # WRITE_ROWS: the one INT value, repeated as more rows
            head, body = bytearray(raw[:19]), raw[19:]
            row = body[-5:]  # null bitmap + 4-byte int
            new = body[:-5] + b"".join(row[:1] + struct.pack("<i", k + j) for j in range(rows))
            head[9:13] = struct.pack("<I", 19 + len(new))
            raw = bytes(head) + new
        elif raw[4] == 16:
            raw = raw[:19] + struct.pack("<Q", 1000 + k)
        out += raw
    return out


def payload_body(inner: bytes, entries=None, frame: bytes = None) -> bytes:
    """A payload event's data: the header (compression ZSTD, the sizes) and zstd's frame."""
    if frame is None:
        frame = zstandard.ZstdCompressor(level=3).compress(inner)
    if entries is None:
        entries = [(2, 0), (3, len(inner)), (1, len(frame))]
    return header(entries) + frame


def payload_file(bodies, gtid_code=34) -> bytes:
    """The corpus file to its GTID, then for each payload data in `bodies` an ANONYMOUS_GTID (a
    GTID_LOG_EVENT with gtid_code 33) and the payload event, then the corpus's ROTATE."""
    data, evs = events(COMPRESSED)
    gtid = next(r for _p, c, r in evs if c in (33, 34))
    pay = next(r for _p, c, r in evs if c == PAYLOAD)
    rotate = next(r for _p, c, r in evs if c == 4)
    out = bytearray(data[:next(p for p, c, _r in evs if c in (33, 34))])
    for k, body in enumerate(bodies):
        g = bytearray(gtid[19:-4])
        if gtid_code == 33:
            g[1:17] = bytes(range(1, 17))
            g[17:25] = struct.pack("<q", k + 1)
        out += event(gtid, bytes(g), len(out), code=gtid_code)
        out += event(pay, body, len(out))
    out += event(rotate, rotate[19:-4], len(out))
    return bytes(out)


def repeated(n: int, rows: int = 1, gtid_code=34) -> bytes:
    """n compressed transactions, each its own values."""
    return payload_file([payload_body(transaction(k, rows)) for k in range(n)], gtid_code)


def zstd_built():
    """Whether the lane inflates payloads: always where setup.py finds zstd.h (Debian:
    libzstd-dev, which tools/test.sh installs)."""
    from binlog_grammar import native

    mod = native.jsonl_lane()
    return (mod is not None and "TRANSACTION_PAYLOAD_EVENT" in mod.CODES) or \
        any(os.path.exists(d + "/zstd.h") for d in ("/usr/include", "/usr/local/include"))


def good(k: int) -> bytes:
    """Payload k's data: transaction(k) compressed."""
    return payload_body(transaction(k))


def hostile():
    """Payload data the Python path must read (or report), each between good ones: a list of
    (name, data); empty without the corpus, whose payload they are made of (the tests that take
    them as parameters are then skipped, as every test of the corpus is)."""
    if not COMPRESSED.is_file():
        return []
    inner = transaction(7)
    frame = zstandard.ZstdCompressor(level=3).compress(inner)
    sizes = [(3, len(inner)), (1, len(frame))]
    gtid_inner = bytes(19) + inner  # a header of zeros: type 0 ... then a GTID's code below
    gtid_inner = bytearray(inner[:19]) + inner[19:inner[9]]
    gtid_inner[4] = 33
    cut = inner[:-3]
    skippable = b"\x50\x2a\x4d\x18" + (4).to_bytes(4, "little") + b"abcd"
    return [
        ("truncated frame", header([(2, 0), *sizes]) + frame[:-5]),
        ("bytes after the frame", header([(2, 0), *sizes]) + frame + b"\x00\x01"),
        ("two frames", header([(2, 0), *sizes]) + frame + frame),
        ("skippable frame first", header([(2, 0), *sizes]) + skippable + frame),
        ("unknown tag", header([(9, 5), (2, 0), *sizes]) + frame),
        ("not compressed", header([(2, 255), (1, len(inner))]) + inner),
        ("unknown compression", header([(2, 7), *sizes]) + frame),
        ("no compression entry", header(sizes) + frame),
        ("smaller stated size", header([(2, 0), (3, len(inner) - 1), (1, len(frame))]) + frame),
        ("larger stated size", header([(2, 0), (3, len(inner) + 100), (1, len(frame))]) + frame),
        ("value longer than its length", header([(2, b"\x00\x00"), *sizes]) + frame),
        ("repeated entry", header([(2, 0), (2, 0), *sizes]) + frame),
        ("no end mark", header([(2, 0)])[:-1]),
        ("empty frame", header([(2, 0)]) + zstandard.ZstdCompressor().compress(b"")),
        ("inner event cut short", payload_body(cut)),
        ("a GTID inside", payload_body(bytes(gtid_inner) + inner)),
        ("damaged frame", header([(2, 0), *sizes]) + frame[:8] + bytes(len(frame) - 8)),
    ]
