"""Rows events drawn from the specs for the compiled row loops' tests (tests/native/
test_rows_jsonl.py, test_debezium_rows.py): the type codes, the types and charsets the compiled
forms write, the Hypothesis settings, a drawn case's row bytes, table and event, and hostile cells
(text bytes at UTF-8's edges, any float's bits, invalid temporal texts, ENUM/SET values past their
members)."""
import datetime as dt
import struct
from types import SimpleNamespace

from construct import ConstructError
from hypothesis import HealthCheck, reject
from hypothesis import strategies as st

from binlog_grammar.binlog.rows import Table
from binlog_grammar.generated import types as T

CODES = {30: "insert", 31: "update", 32: "delete"}
EVENTS = {"insert": "WRITE_ROWS_EVENT", "update": "UPDATE_ROWS_EVENT", "delete": "DELETE_ROWS_EVENT"}
# the value types whose values the compiled readers or forms refuse (MySQL's binary JSON, VECTOR,
# MariaDB's compressed columns): every other drawn value must be written by C, unless its text
# does not decode (Python then adds text_base64)
NOT_WRITTEN = {"JSON", "VECTOR", "VARCHAR_COMPRESSED", "BLOB_COMPRESSED"}
TEXT_TYPES = {"STRING", "VARCHAR", "VAR_STRING", "BLOB", "TINY_BLOB", "MEDIUM_BLOB", "LONG_BLOB"}
# charsets: UTF-8, single-byte ones (read through a table of each byte), multi-byte ones the
# compiled backend refuses, binary and unknown (the server's, here UTF-8)
CHARSETS = ["utf8mb4", "utf8mb3", "latin1", "ascii", "cp1251", "koi8r", "greek", "hebrew",
            "tis620", "cp866", "gbk", "sjis", "ucs2", "binary", None]
WRITTEN_CHARSETS = {"utf8mb4", "utf8mb3", "latin1", "ascii", "cp1251", "koi8r", "greek",
                    "hebrew", "tis620", "cp866", "binary", None}
SETTINGS = dict(deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])


def build_images(value, ctx):
    try:
        return T.row_images.build(value, **ctx)
    except (ConstructError, UnicodeError, ValueError, OverflowError, struct.error) as e:
        if isinstance(e, ConstructError) and not ("does not fit" in str(e) or "too long" in str(e)):
            raise
        reject()


def table_of(ctx, names=None):
    cols = ctx["columns"]
    for i, c in enumerate(cols):  # names as a TABLE_MAP with full metadata gives them: unique
        c["name"] = names[i] if names else f"c{i}"
    return Table(table_id=9, db="d", table="t", columns=cols)


def event_of(table, op):
    ev = SimpleNamespace(type=SimpleNamespace(row_op=op), file="bin.000001", name=EVENTS[op],
                         header={"timestamp": 1700000000, "server_id": 7}, offset=4, end=99)
    return SimpleNamespace(event=ev, table=table, gtid="0-7-12", tx_seq=3)


def _float_bits(width):
    fmt = "<f" if width == 4 else "<d"
    size = 8 * width
    return st.integers(0, (1 << size) - 1).map(
        lambda u: struct.unpack(fmt, u.to_bytes(width, "little"))[0])


# floats at repr's edges: fixed/exponent thresholds, powers of two, subnormals, non-finite
FLOATS = st.sampled_from([0.0, -0.0, 1e15, 1234567890123456.0, 9999999999999998.0, 1e16, 1e17,
                          1e-4, 1.5e-4, 1e-5, 0.1, 1 / 3, 5e-324, 2.2250738585072014e-308,
                          1.7976931348623157e308, float("nan"), float("inf"), float("-inf"),
                          -1.5, 100.0, 2.0 ** 60, 2.0 ** -30, 2.0 ** 1023, 2.0 ** -1022])
TEXT_BYTES = st.binary(max_size=12)
EDGES = (
    [b"\xc3\xa9", b"\xe2\x80\xa8", b"\xed\xa0\x80", b"\xed\x9f\xbf", b"\xf0\x9f\x98\x80",
     b"\xf4\x90\x80\x80", b"\xf4\x8f\xbf\xbf", b"\xc0\xaf", b"\xe0\x80\xaf", b"\xe0\xa0\x80",
     b"\xf0\x80\x80\xaf", b"\xc2", b'"\\\x00\x1f\x7f\x80\xff'])
TEXT_BYTES_EDGES = st.sampled_from(EDGES)


def temporal(c):
    """Values of the temporal types as MySQL's text, valid or not (the adapters store both)."""
    fsp = int(c.get("fsp") or 0)
    frac = st.integers(0, 10 ** fsp - 1).map(lambda f: f".{f:0{fsp}d}") if fsp else st.just("")
    n = st.integers
    date = st.builds("{:04d}-{:02d}-{:02d}".format, n(0, 9999), n(0, 12), n(0, 31)) | \
        st.sampled_from(["2023-02-29", "2024-02-29", "1900-02-29", "2000-02-29", "2023-04-31",
                         "0000-00-00"])
    clock = st.builds("{:02d}:{:02d}:{:02d}".format, n(0, 31), n(0, 63), n(0, 63))
    if c.type_name in ("DATE", "NEWDATE"):
        return date
    if c.type_name in ("DATETIME", "DATETIME2"):
        return st.builds("{} {}{}".format, date, clock, frac) | st.builds(
            "{}{}".format, st.sampled_from(["2023-02-29 00:00:00", "2024-02-29 23:59:59",
                                            "2023-02-28 24:00:00", "0001-01-01 00:00:60"]), frac)
    if c.type_name in ("TIME", "TIME2"):
        return st.builds("{}{:02d}:{:02d}:{:02d}{}".format, st.sampled_from(["", "-"]), n(0, 838),
                         n(0, 63), n(0, 63), frac) | st.builds("{}{}".format, st.sampled_from(
                             ["-00:00:00", "00:00:00", "10:59:60", "-12:60:00", "838:59:59"]), frac)
    zero = st.just("0000-00-00 00:00:00" + ("." + "0" * fsp if fsp else ""))
    return zero | st.builds(lambda s, us: dt.datetime.fromtimestamp(s, dt.timezone.utc).replace(
        microsecond=us), n(0, (1 << 32) - 1), n(0, 999999) if fsp else st.just(0))


def hostile_cell(data, c, strict):
    kind = c.type_name
    if kind in ("ENUM", "SET"):  # an index or bitmask of the new members, often past them
        n = len(c.get("enum_values" if kind == "ENUM" else "set_values") or ())
        top = (1 << 8 * int(c.meta.length)) - 1
        near = n + 1 if kind == "ENUM" else (1 << n + 1) - 1
        return data.draw(st.integers(0, min(top, near)) | st.integers(0, top))
    if kind in TEXT_TYPES:
        return data.draw(TEXT_BYTES_EDGES | TEXT_BYTES)
    if kind in ("FLOAT", "DOUBLE"):
        width = 4 if kind == "FLOAT" else 8
        floats = FLOATS if width == 8 else FLOATS.map(lambda x: struct.unpack("<f", struct.pack(
            "<f", x if abs(x) < 3e38 or x != x else x / 1e300))[0])
        return data.draw(_float_bits(width) | st.floats(width=8 * width) | floats)
    if kind == "LONGLONG" and c.unsigned:
        return data.draw(st.integers((1 << 63) - 2, (1 << 64) - 1))
    if kind in ("DATE", "NEWDATE", "DATETIME", "DATETIME2", "TIME", "TIME2", "TIMESTAMP",
                "TIMESTAMP2"):
        return data.draw(temporal(c))
    return None
