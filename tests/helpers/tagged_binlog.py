"""MySQL 8.4 binlogs of tagged GTIDs (GTID_TAGGED_LOG_EVENT, MySQL 8.3+) for the compiled loops'
tests: helpers.mysql_binlog's repeated MySQL 8.0 transactions with their FORMAT_DESCRIPTION_EVENT
saying 8.4.0 and each GTID_LOG_EVENT replaced by a tagged GTID (the serialization library's
message, made with runtime/ints.py's encoders of the spec's integers), lengths and CRC32s right."""
from binlog_grammar.binlog.framing import scan
from binlog_grammar.runtime.ints import sv_sint_to_uint, sv_uint_bytes
from helpers.mysql_binlog import event

TAGGED = 42
UUID = bytes(range(0xa0, 0xb0))


def tagged_body(gno: int, tag: bytes = b"blue", uuid: bytes = UUID, last: int = 3,
                extra: bytes = b"", fields=None) -> bytes:
    """A GTID_TAGGED_LOG_EVENT's data: (id, value) fields in ascending order, then the header."""
    if fields is None:
        fields = (sv_uint_bytes(0) + sv_uint_bytes(1)  # gtid_flags
                  + sv_uint_bytes(1) + b"".join(sv_uint_bytes(b) for b in uuid)
                  + sv_uint_bytes(2) + sv_uint_bytes(sv_sint_to_uint(gno))
                  + (sv_uint_bytes(3) + sv_uint_bytes(len(tag)) + tag if tag is not None else b"")
                  + sv_uint_bytes(4) + sv_uint_bytes(sv_sint_to_uint(max(gno - 1, 0)))
                  + sv_uint_bytes(5) + sv_uint_bytes(sv_sint_to_uint(gno))
                  + sv_uint_bytes(6) + sv_uint_bytes(1700000000000000)
                  + sv_uint_bytes(9) + sv_uint_bytes(80400) + extra)
    head = sv_uint_bytes(1), sv_uint_bytes(last)
    size = len(head[0]) + len(head[1]) + len(fields)
    size += len(sv_uint_bytes(size + 1))
    size = len(head[0]) + len(head[1]) + len(fields) + len(sv_uint_bytes(size))
    return head[0] + sv_uint_bytes(size) + head[1] + fields


def as_84(data: bytes, bodies) -> bytes:
    """`data` (a MySQL 8.0 binlog) with its format event saying 8.4.0 and its GTID_LOG_EVENTs
    replaced, one after another, by tagged GTIDs of `bodies` (an iterator of their data)."""
    out = bytearray(data[:4])
    path_events = _events(data)
    for pos, code, length in path_events:
        raw = data[pos:pos + length]
        body = raw[19:-4]
        if code == 15:
            body = bytearray(body)
            body[2:52] = b"8.4.0".ljust(50, b"\0")
            flags = int.from_bytes(raw[17:19], "little") & ~1  # IN_USE: its CRC32 is made without
            out += event(raw, bytes(body), len(out), flags=flags)
        elif code == 33:
            out += event(raw, next(bodies), len(out), code=TAGGED)
        else:
            out += event(raw, body, len(out))
    return bytes(out)


def _events(data: bytes):
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".000001") as f:
        f.write(data)
        f.flush()
        return list(scan(f.name))


def _tags(k):  # tags of every length, so that later transactions are the largest
    return b"t" + bytes(b"abcdefghijklmnopqrstuvwxyz0123_"[j % 31] for j in range(k % 32))[:31]


def tagged_file(n: int = 120, bodies=None) -> bytes:
    """An 8.4 binlog of n MySQL 8.0 transactions whose GTIDs are tagged (tags of every length), or
    given the bodies."""
    from helpers.mysql_binlog import mysql_file

    if bodies is None:
        bodies = (tagged_body(g, _tags(g)) for g in range(1, 10 ** 6))
    return as_84(mysql_file(repeat=n), iter(bodies))


def hostile_tagged():
    """GTID_TAGGED_LOG_EVENT bodies the Python path must read (or report): (name, body)."""
    sv = sv_uint_bytes
    u = b"".join(sv(b) for b in range(0xa0, 0xb0))
    fields = sv(1) + u + sv(2) + sv(10)
    return [
        ("unknown field", tagged_body(5, extra=sv(12) + sv(7))),
        ("last non-ignorable too high", tagged_body(5, last=20)),
        ("uuid byte over 255", tagged_body(5, fields=sv(1) + sv(300) + u[1:] + sv(2) + sv(10) + sv(3) + sv(1) + b"a")),
        ("out of order", tagged_body(5, fields=sv(2) + sv(10) + sv(1) + u + sv(3) + sv(1) + b"a")),
        ("no tag", tagged_body(5, tag=None)),
        ("upper-case tag", tagged_body(5, tag=b"Blue")),
        ("tag of 33", tagged_body(5, tag=b"x" * 33)),
        ("empty tag", tagged_body(5, tag=b"")),
        ("tag past the end", tagged_body(5, fields=fields + sv(3) + sv(9) + b"abc")),
        ("negative gno", tagged_body(-7)),
        ("largest gno", tagged_body((1 << 63) - 1)),
        ("smallest gno", tagged_body(-(1 << 63))),
        ("wrong size", tagged_body(5)[:1] + sv(3) + tagged_body(5)[2:]),
        ("nine-byte integers", tagged_body(5, fields=sv(1) + b"".join(b"\xff" + bytes([b]) + bytes(7) for b in range(16)) + sv(2) + sv(10) + sv(3) + sv(1) + b"q")),
    ]
