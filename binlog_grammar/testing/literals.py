"""Hypothesis strategies for values of a column type, as the SQL literals a client would send.

`values(ct)` draws the edges of a column type (binlog_grammar.testing.columns) and random values,
some out of its range or repertoire (the session runs with sql_mode='' and the server stores what
it stores); `key_value` gives unique primary key literals and `default_values` DEFAULT literals.
Strings go as UTF-8 bytes behind an introducer (`_utf8mb4 X'...'`), binary strings as `X'...'`.
"""
from __future__ import annotations

import ipaddress
import json
import uuid

from hypothesis import strategies as st

from .columns import GEOMETRIES, ColumnType, bytes_literal, encodable, text_literal, texts


# -- values ---------------------------------------------------------------------------------------

def _int_range(ct):
    bits, unsigned = ct.params["bits"], ct.params["unsigned"]
    return (0, (1 << bits) - 1) if unsigned else (-(1 << bits - 1), (1 << bits - 1) - 1)


def _decimal_text(sign, whole, frac, d):
    return f"{sign}{whole}" + (f".{frac:0{d}d}" if d else "")


@st.composite
def _decimal_values(draw, ct):
    m, d = ct.params["m"], ct.params["d"]
    w = m - d
    top = 10 ** w - 1
    fmax = 10 ** d - 1
    edge = draw(st.sampled_from(["max", "min", "zero", "tiny", "random", "random", "random"]))
    if edge == "max":
        return _decimal_text("", top, fmax, d)
    if edge == "min":
        return _decimal_text("-", top, fmax, d)
    if edge == "zero":
        return draw(st.sampled_from(["0", "-0", "0.0"]))
    if edge == "tiny":
        return _decimal_text(draw(st.sampled_from(["", "-"])), 0, min(1, fmax), d)
    sign = draw(st.sampled_from(["", "-"]))
    whole = draw(st.integers(0, top))
    frac = draw(st.integers(0, fmax))
    return _decimal_text(sign, whole, frac, d)


def _time_literal(total_us: int) -> str:
    sign = "-" if total_us < 0 else ""
    secs, us = divmod(abs(total_us), 1_000_000)
    return f"'{sign}{secs // 3600}:{secs // 60 % 60:02d}:{secs % 60:02d}.{us:06d}'"


MAX_TIME_US = (838 * 3600 + 59 * 60 + 59) * 1_000_000 + 999_999


@st.composite
def _datetime_literal(draw, min_year=1000):
    if draw(st.integers(0, 6)) == 0:
        return draw(st.sampled_from(["'0000-00-00 00:00:00'", "'2021-02-00 10:11:12.5'",
                                     "'2021-00-10 00:00:00'", "'1000-01-01 00:00:00'",
                                     "'9999-12-31 23:59:59.999999'", "'0000-01-01 00:00:00'",
                                     "'0001-01-01 00:00:00.000001'", "'2024-02-29 12:00:00'"]))
    y = draw(st.integers(min_year, 9999))
    return (f"'{y:04d}-{draw(st.integers(1, 12)):02d}-{draw(st.integers(1, 28)):02d} "
            f"{draw(st.integers(0, 23)):02d}:{draw(st.integers(0, 59)):02d}:"
            f"{draw(st.integers(0, 59)):02d}.{draw(st.integers(0, 999999)):06d}'")


def _timestamp_literal(draw):
    if draw(st.integers(0, 5)) == 0:
        return draw(st.sampled_from(["'0000-00-00 00:00:00'", "'1970-01-01 00:00:01'",
                                     "'2038-01-19 03:14:07.999999'", "'2038-01-19 03:14:07'",
                                     "'1999-12-31 23:59:59.5'", "'1970-01-01 00:00:00.5'"]))
    import datetime as dt

    t = dt.datetime.fromtimestamp(draw(st.integers(1, 2**31 - 1)), dt.timezone.utc)
    return f"'{t:%Y-%m-%d %H:%M:%S}.{draw(st.integers(0, 999999)):06d}'"


_JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                          st.floats(allow_nan=False, allow_infinity=False), texts(8))
JSON_DOCS = st.recursive(_JSON_SCALARS, lambda kids: st.lists(kids, max_size=4)
                         | st.dictionaries(texts(5), kids, max_size=4), max_leaves=12)


def _coord(draw):
    return repr(draw(st.sampled_from([0.0, -1.5, 1e10, 180.0, -90.0, 1e-10])
                     | st.floats(-1e6, 1e6, allow_nan=False)))


def _points(draw, n):
    return ",".join(f"{_coord(draw)} {_coord(draw)}" for _ in range(n))


def _ring(draw):
    x, y = draw(st.integers(-100, 100)), draw(st.integers(-100, 100))
    w, h = draw(st.integers(1, 50)), draw(st.integers(1, 50))
    return f"({x} {y},{x + w} {y},{x + w} {y + h},{x} {y + h},{x} {y})"


def _wkt(draw, kind):
    if kind == "POINT":
        return f"POINT({_points(draw, 1)})"
    if kind == "LINESTRING":
        return f"LINESTRING({_points(draw, draw(st.integers(2, 5)))})"
    if kind == "POLYGON":
        return f"POLYGON({','.join(_ring(draw) for _ in range(draw(st.integers(1, 2))))})"
    if kind == "MULTIPOINT":
        return f"MULTIPOINT({_points(draw, draw(st.integers(1, 4)))})"
    if kind == "MULTILINESTRING":
        return "MULTILINESTRING(" + ",".join(f"({_points(draw, 2)})"
                                             for _ in range(draw(st.integers(1, 3)))) + ")"
    if kind == "MULTIPOLYGON":
        return "MULTIPOLYGON(" + ",".join(f"({_ring(draw)})" for _ in range(draw(st.integers(1, 2)))) + ")"
    if kind == "GEOMETRYCOLLECTION":
        if draw(st.booleans()):
            return "GEOMETRYCOLLECTION EMPTY"
        parts = [_wkt(draw, draw(st.sampled_from(GEOMETRIES[1:-1])))
                 for _ in range(draw(st.integers(1, 3)))]
        return f"GEOMETRYCOLLECTION({','.join(parts)})"
    return _wkt(draw, draw(st.sampled_from(GEOMETRIES[1:])))  # GEOMETRY: any


def _big_text(draw, limit_bytes, binary):
    """REPEAT(...) of a short piece: a value of many kilobytes in a short statement."""
    piece = draw(st.binary(min_size=1, max_size=7)) if binary else draw(texts(3).filter(bool))
    size = len(piece) if binary else len(piece.encode("utf-8"))
    target = draw(st.sampled_from([256, 8200, 65535, 70000, 300000]))
    n = max(1, min(target, limit_bytes) // size)
    return f"REPEAT({bytes_literal(piece) if binary else text_literal(piece)}, {n})"


@st.composite
def values(draw, ct: ColumnType):
    """An SQL literal for a column of type ct (not NULL)."""
    f, p = ct.family, ct.params
    if f == "int":
        lo, hi = _int_range(ct)
        v = draw(st.sampled_from([lo, hi, 0, 1, -1, lo + 1, hi - 1]) | st.integers(lo, hi)
                 | st.integers(lo - 3, hi + 3))
        return str(v)
    if f == "year":
        return str(draw(st.sampled_from([0, 1901, 2155, 2000, 1970, 2069, 69, 70, 99])
                        | st.integers(1901, 2155)))
    if f == "bit":
        n = p["n"]
        v = draw(st.sampled_from([0, 1, (1 << n) - 1, 1 << (n - 1)]) | st.integers(0, (1 << n) - 1))
        return f"b'{v:b}'" if draw(st.booleans()) else str(v)
    if f in ("enum", "set"):
        members = p["members"]
        if f == "enum":
            choice = draw(st.sampled_from(["member", "member", "member", "index", "bad"]))
            if choice == "index":
                return str(draw(st.integers(0, len(members))))
            if choice == "bad":
                return "''"
            return text_literal(draw(st.sampled_from(members)))
        if draw(st.integers(0, 5)) == 0:
            return str(draw(st.integers(0, (1 << len(members)) - 1)))
        chosen = draw(st.lists(st.sampled_from(members), max_size=min(len(members), 8)))
        if draw(st.integers(0, 9)) == 0:
            chosen = list(members)
        return text_literal(",".join(chosen))
    if f == "decimal":
        return draw(_decimal_values(ct))
    if f in ("float", "double"):
        if f == "float":
            x = draw(st.sampled_from([0.0, -0.0, 0.1, 1.5, 3.4028234e38, -3.4028234e38, 1.17549435e-38,
                                      1e-45, 16777217.0, -1.0])
                     | st.floats(width=32, allow_nan=False, allow_infinity=False))
        else:
            x = draw(st.sampled_from([0.0, -0.0, 0.1, 1.7976931348623157e308, -2.2250738585072014e-308,
                                      5e-324, 1e300, -1.0])
                     | st.floats(allow_nan=False, allow_infinity=False))
        return "-0e0" if str(x) == "-0.0" else repr(x)
    if f == "date":
        if draw(st.integers(0, 5)) == 0:
            return draw(st.sampled_from(["'0000-00-00'", "'2021-00-10'", "'2021-02-00'",
                                         "'1000-01-01'", "'9999-12-31'", "'2024-02-29'",
                                         "'0001-01-01'"]))
        return (f"'{draw(st.integers(1000, 9999)):04d}-{draw(st.integers(1, 12)):02d}-"
                f"{draw(st.integers(1, 28)):02d}'")
    if f == "time":
        return _time_literal(draw(st.sampled_from([-MAX_TIME_US, MAX_TIME_US, 0, -1, -1_500_000,
                                                    -(12 * 3600 * 10**6) - 1])
                                  | st.integers(-MAX_TIME_US, MAX_TIME_US)))
    if f == "datetime":
        return draw(_datetime_literal())
    if f == "timestamp":
        return _timestamp_literal(draw)
    if f == "string":
        n, cs = p["n"], p["charset"]
        if cs == "binary":
            return bytes_literal(draw(st.binary(max_size=n)))
        text = draw(texts(n) | st.sampled_from(["", " ", "ab  ", " lead", "x" * n]))
        return text_literal(text)
    if f == "binary":
        n = p["n"]
        return bytes_literal(draw(st.binary(max_size=n) | st.sampled_from([b"", b"\x00", b"\xff" * n])))
    if f in ("blob", "text"):
        if draw(st.integers(0, 12)) == 0:
            return _big_text(draw, p["max"], f == "blob")
        if f == "blob":
            return bytes_literal(draw(st.binary(max_size=min(p["max"], 300))))
        return text_literal(draw(texts(min(p["max"], 80))))
    if f == "json":
        return text_literal(json.dumps(draw(JSON_DOCS), ensure_ascii=draw(st.booleans())))
    if f == "geometry":
        kind = ct.sql
        srid = draw(st.sampled_from([0, 4326, 3857]))
        return f"ST_GeomFromText('{_wkt(draw, kind)}', {srid})"
    if f == "inet6":
        if draw(st.integers(0, 3)) == 0:
            return "'" + draw(st.sampled_from(["::", "::1", "::ffff:192.0.2.1",
                                                "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"])) + "'"
        return "'" + str(ipaddress.IPv6Address(draw(st.integers(0, 2**128 - 1)))) + "'"
    if f == "inet4":
        return "'" + str(ipaddress.IPv4Address(draw(st.integers(0, 2**32 - 1)))) + "'"
    if f == "uuid":
        v = draw(st.sampled_from([0, 2**128 - 1]) | st.integers(0, 2**128 - 1))
        return f"'{uuid.UUID(int=v)}'"
    raise AssertionError(f)


def key_value(ct: ColumnType, n: int, salt: int) -> str:
    """The n-th value of a key column: distinct for distinct n (within 0..9999), whatever the
    collation, in the column's range."""
    f, p = ct.family, ct.params
    if f == "int":
        lo, hi = _int_range(ct)
        base = [lo, 0, hi - 10000, lo + salt % max(1, hi - lo - 10000)][salt % 4]
        return str(max(lo, min(base, hi - 10000)) + n)
    if f == "decimal":
        d = p["d"]
        top = 10 ** (p["m"] - d - 5)  # the key's column has at least 6 whole digits
        return f"{salt % top * 10000 + n}" + (f".{salt % (10 ** d):0{d}d}" if d else "")
    if f == "string":
        prefix = ["", "k", "é", "Ω", "K'", "k\\", "😀", " x"][salt % 8]
        if not encodable(prefix, p["charset"] if p["charset"] != "binary" else "ascii"):
            prefix = "p"
        return text_literal(f"{prefix}{n}")
    if f == "binary":
        return bytes_literal(bytes([salt % 256]) + n.to_bytes(2, "big") + bytes([0] * (salt % 3)))
    if f == "datetime":
        return (f"'{1000 + salt % 8000:04d}-01-01 00:00:00' + INTERVAL {n} SECOND"
                f" + INTERVAL {salt % 999999} MICROSECOND")
    if f == "date":
        return f"'{1000 + salt % 8000:04d}-01-01' + INTERVAL {n} DAY"
    if f == "uuid":
        return f"'{uuid.UUID(int=(salt << 64) + n)}'"
    if f == "inet6":
        return "'" + str(ipaddress.IPv6Address((salt << 32) + n)) + "'"
    if f == "bit":
        return str((salt % 16) * 10000 + n)  # the key's BIT has at least 18 bits
    raise AssertionError(f)


@st.composite
def default_values(draw, ct: ColumnType):
    """A DEFAULT literal the column takes as it is (a DEFAULT is not converted, it is refused)."""
    f, p = ct.family, ct.params
    if f == "int":
        lo, hi = _int_range(ct)
        return str(draw(st.sampled_from([lo, hi, 0]) | st.integers(lo, hi)))
    if f in ("string", "binary"):
        n = p["n"]
        if p.get("charset") == "binary" or f == "binary":
            return bytes_literal(draw(st.binary(max_size=n)))
        return text_literal(draw(st.text(alphabet="abc xyZ'\\", max_size=n)))
    if f == "decimal":
        return _decimal_text(draw(st.sampled_from(["", "-"])) if not p["unsigned"] else "",
                             draw(st.integers(0, 10 ** (p["m"] - p["d"]) - 1)), 0, p["d"])
    if f in ("float", "double"):
        if "(" in ct.sql:  # FLOAT(M,D): 1 may be out of its range already
            return "0"
        return draw(st.sampled_from(["0", "1"] if p["unsigned"] else ["0", "1.5", "-2.25", "1e10"]))
    if f == "enum":
        return text_literal(draw(st.sampled_from(p["members"])))
    if f == "set":
        return text_literal(",".join(draw(st.lists(st.sampled_from(p["members"]), max_size=3,
                                                   unique=True))))
    if f == "date":
        return draw(st.sampled_from(["'2001-02-03'", "'1000-01-01'", "'9999-12-31'"]))
    if f == "time":
        return draw(st.sampled_from(["'-838:59:59'", "'12:34:56'", "'00:00:00'"]))
    if f in ("datetime", "timestamp"):
        return draw(st.sampled_from(["'2001-02-03 04:05:06'", "'1999-12-31 23:59:59'"]))
    return draw(values(ct))  # YEAR, BIT, INET6, INET4, UUID: values are valid as they are

