"""Hypothesis strategies: MariaDB table layouts, workloads and binlog settings.

`cases(settings)` draws a `Case`: one table (`CREATE TABLE t (...)`) whose columns come from every
column type family MariaDB 10.11 has, in random order, nullable or NOT NULL, some INVISIBLE, some
with a DEFAULT, with a primary key of one or two columns of several types (sometimes
AUTO_INCREMENT) or none; and a workload of multi-row INSERTs, UPDATEs (by key, of every row, with
LIMIT, changing the key) and DELETEs whose values are each type's edges or random values. With no
`settings`, the server settings are drawn too.

A Case holds only text (the CREATE TABLE and the statements, with the columns each statement names)
and its repr is valid Python, so a failing example printed by Hypothesis can be pasted into an
`@example(...)` or a fixed test as it is.

Values are SQL literals the server converts as it does any client's: strings as UTF-8 bytes behind
an introducer (`_utf8mb4 X'...'`, so no escaping is involved), binary strings as `X'...'`, numbers
as digits. Values out of a column's range or repertoire are allowed: the session runs with
sql_mode='' and the server stores what it stores; the checks compare with what SELECT shows, never
with the literal.
"""
from __future__ import annotations

import ipaddress
import json
import uuid
from dataclasses import dataclass, field

from hypothesis import strategies as st

ROW_IMAGES = ("FULL", "MINIMAL", "NOBLOB")
METADATA = ("FULL", "MINIMAL")


@dataclass(frozen=True)
class Settings:
    """The server settings a binlog is written with."""

    row_image: str = "FULL"  # binlog_row_image: FULL, MINIMAL, NOBLOB
    metadata: str = "FULL"  # binlog_row_metadata: FULL, MINIMAL
    compress: bool = False  # log_bin_compress (with log_bin_compress_min_len=10)

    @property
    def label(self) -> str:
        return f"image={self.row_image},metadata={self.metadata},compress={'ON' if self.compress else 'OFF'}"

    @classmethod
    def parse(cls, label: str) -> "Settings":
        """The Settings of a label `image=MINIMAL,metadata=FULL,compress=ON`."""
        parts = dict(p.split("=", 1) for p in label.split(","))
        return cls(parts["image"].upper(), parts["metadata"].upper(),
                   parts["compress"].upper() in ("ON", "1", "TRUE"))

    def sql(self) -> str:
        """The statements that set them on a server (global: every new session follows)."""
        return (f"SET GLOBAL binlog_row_image = {self.row_image}; "
                f"SET GLOBAL binlog_row_metadata = {self.metadata}; "
                f"SET GLOBAL log_bin_compress = {'ON' if self.compress else 'OFF'}; "
                "SET GLOBAL log_bin_compress_min_len = 10;")


ALL_SETTINGS = [Settings(i, m, c) for i in ROW_IMAGES for m in METADATA for c in (False, True)]


@dataclass(frozen=True)
class Statement:
    """One workload statement: kind insert/update/delete, its SQL, and the columns it names (the
    INSERT column list, the columns an UPDATE assigns), which binlog_row_image=MINIMAL and NOBLOB
    images follow."""

    kind: str
    sql: str
    named: tuple = ()


@dataclass(frozen=True)
class Case:
    """One example: settings, the table (its CREATE TABLE names it `t`) and the workload."""

    settings: Settings
    create: str
    statements: tuple = ()

    def reproducer(self) -> str:
        """The example as SQL to paste into a mariadb client."""
        lines = [f"-- {self.settings.label}", self.settings.sql(),
                 "SET time_zone = '+00:00'; SET sql_mode = '';", self.create + ";"]
        lines += [s.sql + ";" for s in self.statements]
        return "\n".join(lines)


# -- identifiers ----------------------------------------------------------------------------------

def quote_ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


# -- character sets -------------------------------------------------------------------------------

# charset -> (most bytes a character takes, collations to choose from besides the default)
CHARSETS = {
    "latin1": (1, ["latin1_bin", "latin1_general_ci"]),
    "ascii": (1, ["ascii_bin"]),
    "cp1251": (1, ["cp1251_bin"]),
    "utf8mb3": (3, ["utf8mb3_bin", "utf8mb3_unicode_ci"]),
    "utf8mb4": (4, ["utf8mb4_bin", "utf8mb4_unicode_ci", "utf8mb4_unicode_520_ci"]),
    "ucs2": (2, ["ucs2_bin"]),
    "utf16": (4, ["utf16_bin"]),
    "utf16le": (4, ["utf16le_bin"]),
    "utf32": (4, ["utf32_bin"]),
    "binary": (1, []),
}
# charsets with their own byte tables (Python has a codec for each), drawn less often
MORE_CHARSETS = {
    "cp1250": 1, "latin2": 1, "greek": 1, "hebrew": 1, "koi8r": 1, "koi8u": 1, "cp866": 1,
    "cp852": 1, "cp1256": 1, "cp1257": 1, "latin5": 1, "latin7": 1, "macroman": 1, "tis620": 1,
    "sjis": 2, "cp932": 2, "ujis": 3, "gbk": 2, "gb2312": 2, "big5": 2, "euckr": 2,
}  # not eucjpms: 174 of its codes (cp932's NEC and IBM rows) read otherwise in Python's euc-jp
CHARSETS.update({cs: (n, []) for cs, n in MORE_CHARSETS.items()})
BASIC_CHARSETS = ["latin1", "ascii", "cp1251", "utf8mb3", "utf8mb4", "ucs2", "utf16", "utf16le",
                  "utf32"]
TEXT_CHARSETS = [c for c in CHARSETS if c != "binary"]
text_charsets = st.sampled_from(BASIC_CHARSETS) | st.sampled_from(sorted(MORE_CHARSETS))

# characters from several scripts and the ones SQL and the binlog tools treat specially
_SPECIAL = list("'\\\"`%_;-/*\t\n\r\x00\x1a\x08 ")
_LATIN = list("aZq09éÿüßÆÀ€‚ƒ©®×÷") + ["\x81", "\x8d", "\x8f", "\x90", "\x9d", "\xa0", "\xad"]
_OTHER = list("ПриветЁъ") + list("Ωμέγα") + list("漢字かな한글") + ["😀", "🎉", "𝄞", "\u200b", "\ufeff",
                                                                  "e\u0301", "\uffff"]
CHARS = st.one_of(st.sampled_from(_SPECIAL), st.sampled_from(_LATIN), st.sampled_from(_OTHER),
                  st.characters(exclude_categories=("Cs",), max_codepoint=0x10FFFF),
                  st.characters(min_codepoint=0x20, max_codepoint=0x7E))


_CODECS = {"latin1": "cp1252", "cp1251": "cp1251", "ascii": "ascii"}


def _encodable(text: str, charset) -> bool:
    charset = charset or "latin1"  # the table's default charset may be latin1
    if charset in _CODECS:
        try:
            text.encode(_CODECS[charset])
        except UnicodeEncodeError:
            return False
        return True
    return charset == "utf8mb4" or all(ord(ch) < 0x10000 for ch in text)


def text_literal(text: str) -> str:
    """A string literal that needs no escaping: its UTF-8 bytes behind an introducer."""
    return f"_utf8mb4 X'{text.encode('utf-8').hex()}'" if text else "''"


def bytes_literal(data: bytes) -> str:
    return f"X'{data.hex()}'" if data else "''"


def texts(max_chars: int):
    return st.lists(CHARS, max_size=max_chars).map("".join)


# -- column types ---------------------------------------------------------------------------------

INTS = {"TINYINT": 8, "SMALLINT": 16, "MEDIUMINT": 24, "INT": 32, "BIGINT": 64}
BLOB_SIZES = {"TINY": 255, "": 65535, "MEDIUM": (1 << 24) - 1, "LONG": (1 << 32) - 1}
GEOMETRIES = ["GEOMETRY", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING",
              "MULTIPOLYGON", "GEOMETRYCOLLECTION"]


@dataclass
class ColumnType:
    """A column type: its SQL text and how to draw values for it (SQL literals)."""

    family: str  # int, year, bit, enum, set, decimal, float, double, date, time, datetime,
    #              timestamp, string, binary, blob, text, json, geometry, inet6, inet4, uuid
    sql: str
    params: dict = field(default_factory=dict)
    blob: bool = False  # a BLOB/TEXT column (binlog_row_image=NOBLOB leaves it out)
    defaultable: bool = True  # can take a DEFAULT literal


def _charset_clause(draw, cs):
    coll = draw(st.sampled_from([None] + CHARSETS[cs][1]))
    return f" CHARACTER SET {cs}" + (f" COLLATE {coll}" if coll else "")


@st.composite
def column_types(draw, key=False):
    """A column type; key=True: one that can be (part of) a primary key, with unique values."""
    if key:
        family = draw(st.sampled_from(["int", "int", "decimal", "string", "binary", "datetime",
                                       "date", "uuid", "inet6", "bit", "year_no"]))
    else:
        family = draw(st.sampled_from([
            "int", "int", "year", "bit", "enum", "set", "decimal", "decimal", "float", "double",
            "date", "time", "datetime", "timestamp", "string", "string", "binary", "blob", "text",
            "text", "json", "geometry", "inet6", "inet4", "uuid", "compressed"]))
    if family == "year_no":
        family = "int"
    if family == "int":
        name = draw(st.sampled_from(sorted(INTS)))
        unsigned = draw(st.booleans())
        zerofill = not key and unsigned and draw(st.integers(0, 9)) == 0
        sql = name + (" UNSIGNED" if unsigned else "") + (" ZEROFILL" if zerofill else "")
        if not key and name == "TINYINT" and not unsigned and draw(st.integers(0, 9)) == 0:
            sql = "BOOL"
        return ColumnType("int", sql, {"bits": INTS[name], "unsigned": unsigned})
    if family == "year":
        return ColumnType("year", "YEAR")
    if family == "bit":
        n = draw(st.sampled_from([1, 8, 64]) | st.integers(1, 64))
        if key:
            n = max(n, 18)
        return ColumnType("bit", f"BIT({n})", {"n": n})
    if family in ("enum", "set"):
        count = draw(st.sampled_from([1, 2, 3, 8, 9, 17, 33, 64]) | st.integers(1, 64))
        if family == "enum" and draw(st.integers(0, 9)) == 0:
            count = draw(st.integers(250, 300))  # two bytes per value
        cs = draw(st.sampled_from(["utf8mb4", "latin1", "utf8mb3", "ucs2", "cp1251", None]))
        # member names the charset can hold (the table's default charset is utf8mb3 at least)
        prefix = draw(st.sampled_from([p for p in ["", "m", "é", "Ж", "Ω", "😀", "a b", "'", "\\"]
                                       if _encodable(p, cs)]))
        members = [f"{prefix}{i}" for i in range(count)]
        sql = (f"{family.upper()}(" + ",".join("'" + m.replace("\\", "\\\\").replace("'", "''") + "'"
                                              for m in members) + ")")
        if cs:
            sql += _charset_clause(draw, cs)
        return ColumnType(family, sql, {"members": members})
    if family == "decimal":
        m = draw(st.sampled_from([1, 5, 9, 10, 18, 19, 20, 30, 65]) | st.integers(1, 65))
        d = draw(st.integers(0, min(m, 30)))
        if key and m - d < 6:
            m, d = max(m, d + 6), min(d, 30)
            m = min(m, 65)
        unsigned = draw(st.booleans()) if not key else False
        return ColumnType("decimal", f"DECIMAL({m},{d})" + (" UNSIGNED" if unsigned else ""),
                          {"m": m, "d": d, "unsigned": unsigned})
    if family in ("float", "double"):
        unsigned = draw(st.integers(0, 5)) == 0
        sql = family.upper()
        if draw(st.integers(0, 7)) == 0:  # the deprecated (M,D) form rounds
            m = draw(st.integers(1, 20 if family == "float" else 50))
            sql += f"({m},{draw(st.integers(0, min(m, 10)))})"
        return ColumnType(family, sql + (" UNSIGNED" if unsigned else ""), {"unsigned": unsigned})
    if family == "date":
        return ColumnType("date", "DATE")
    if family in ("time", "datetime", "timestamp"):
        fsp = draw(st.integers(0, 6))
        return ColumnType(family, f"{family.upper()}({fsp})" if fsp or draw(st.booleans())
                          else family.upper(), {"fsp": fsp})
    if family == "string":
        cs = draw(text_charsets | st.just("binary") if not key
                  else st.sampled_from(["latin1", "utf8mb4", "utf8mb3", "binary", "ascii"]))
        maxlen = CHARSETS[cs][0]
        varchar = draw(st.booleans())
        if varchar:
            n = draw(st.sampled_from([1, 10, 63, 64, 85, 255, 256, 300]) | st.integers(1, 1000))
            if key:
                n = max(n, 12)
            n = min(n, 1000 if maxlen == 1 else 1000 // maxlen * 2)
            if key:
                n = min(n, 3072 // maxlen)
        else:
            n = draw(st.sampled_from([0, 1, 10, 63, 64, 85, 255]) | st.integers(0, 255))
            if key:
                n = max(n, 12)
        sql = ("VARCHAR" if varchar else "CHAR") + f"({n})" + _charset_clause(draw, cs)
        return ColumnType("string", sql, {"n": n, "charset": cs, "varchar": varchar})
    if family == "binary":
        varbinary = draw(st.booleans())
        n = draw(st.sampled_from([1, 4, 16, 255] + ([256, 1000] if varbinary else []))
                 | st.integers(0 if not varbinary else 1, 255))
        if key:
            n = max(n, 8)
        return ColumnType("binary", ("VARBINARY" if varbinary else "BINARY") + f"({n})",
                          {"n": n, "varbinary": varbinary})
    if family in ("blob", "text"):
        size = draw(st.sampled_from(sorted(BLOB_SIZES)))
        sql = f"{size}{family.upper()}"
        if family == "text":
            sql += _charset_clause(draw, draw(text_charsets))
        return ColumnType(family, sql, {"max": BLOB_SIZES[size]}, blob=True)
    if family == "compressed":
        kind = draw(st.sampled_from(["VARCHAR", "VARBINARY", "TEXT", "BLOB", "TINYTEXT"]))
        if kind in ("VARCHAR", "VARBINARY"):
            n = draw(st.sampled_from([1, 10, 255, 300]) | st.integers(1, 1000))
            sql = f"{kind}({n}) COMPRESSED"
            if kind == "VARCHAR":
                cs = draw(st.sampled_from(["utf8mb4", "latin1", "utf8mb3"]))
                sql = f"VARCHAR({n}){_charset_clause(draw, cs)} COMPRESSED"
                return ColumnType("string", sql, {"n": n, "charset": cs, "varchar": True})
            return ColumnType("binary", sql, {"n": n, "varbinary": True})
        if kind in ("TEXT", "TINYTEXT"):
            cs = draw(st.sampled_from(["utf8mb4", "latin1"]))
            return ColumnType("text", f"{kind}{_charset_clause(draw, cs)} COMPRESSED",
                              {"max": 255 if kind == "TINYTEXT" else 65535}, blob=True)
        return ColumnType("blob", "BLOB COMPRESSED", {"max": 65535}, blob=True)
    if family == "json":
        return ColumnType("json", "JSON", blob=True, defaultable=False)
    if family == "geometry":
        return ColumnType("geometry", draw(st.sampled_from(GEOMETRIES)), defaultable=False)
    if family == "inet6":
        return ColumnType("inet6", "INET6")
    if family == "inet4":
        return ColumnType("inet4", "INET4")
    if family == "uuid":
        return ColumnType("uuid", "UUID")
    raise AssertionError(family)


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
        if not _encodable(prefix, p["charset"] if p["charset"] != "binary" else "ascii"):
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


# -- tables ---------------------------------------------------------------------------------------

@dataclass
class Col:
    name: str
    type: ColumnType
    nullable: bool = True
    invisible: bool = False
    default: str | None = None
    auto_increment: bool = False

    def sql(self) -> str:
        out = f"{quote_ident(self.name)} {self.type.sql}"
        out += " NULL" if self.nullable else " NOT NULL"
        if self.auto_increment:
            out += " AUTO_INCREMENT"
        if self.default is not None:
            out += f" DEFAULT {self.default}"
        if self.invisible:
            out += " INVISIBLE"
        return out


@dataclass
class Layout:
    columns: list
    key: list  # names of the primary key columns, in key order
    charset: str

    def create(self) -> str:
        parts = [c.sql() for c in self.columns]
        if self.key:
            parts.append("PRIMARY KEY (" + ", ".join(quote_ident(k) for k in self.key) + ")")
        return (f"CREATE TABLE t ({', '.join(parts)}) ENGINE=InnoDB DEFAULT CHARSET={self.charset}")

    def col(self, name) -> Col:
        return next(c for c in self.columns if c.name == name)


_NAMES = ["c{}", "c{}", "c{}", "Ü{}", "col {}", "x`{}", "Ωμ{}", "select{}"]


@st.composite
def layouts(draw, max_columns=10):
    n = draw(st.integers(1, max_columns))
    if draw(st.integers(0, 9)) == 0:  # now and then a wide table (null bitmaps of many bytes)
        n = draw(st.integers(max_columns, 4 * max_columns))
    cols = []
    budget = 40000  # bytes of CHAR/VARCHAR/BINARY columns (a row holds at most 65535)
    for i in range(n):
        name = draw(st.sampled_from(_NAMES)).format(i)
        ct = draw(column_types())
        if ct.family in ("string", "binary"):
            size = ct.params["n"] * CHARSETS.get(ct.params.get("charset"), (1,))[0] + 2
            budget -= size
            if budget < 0:
                ct = ColumnType("int", "INT", {"bits": 32, "unsigned": False})
        nullable = draw(st.integers(0, 3)) > 0
        c = Col(name, ct, nullable)
        if ct.defaultable and not ct.blob and draw(st.integers(0, 4)) == 0:
            c.default = draw(default_values(ct))
        if (nullable or c.default is not None) and draw(st.integers(0, 7)) == 0:
            c.invisible = True
        cols.append(c)
    if all(c.invisible for c in cols):  # a table needs a visible column
        cols[0].invisible = False
    key_shape = draw(st.sampled_from(["none", "one", "one", "one", "two", "auto"]))
    key = []
    if key_shape in ("one", "two", "auto"):
        for j in range(1 if key_shape != "two" else 2):
            if key_shape == "auto":
                ct = ColumnType("int", draw(st.sampled_from(["INT", "BIGINT", "SMALLINT"])),
                                {"bits": 16, "unsigned": False})
                kc = Col(f"id{j}", ct, False, auto_increment=True)
            else:
                kc = Col(f"k{j}", draw(column_types(key=True)), False)
            key.append(kc.name)
            cols.insert(draw(st.integers(0, len(cols))), kc)
    cs = draw(st.sampled_from(["utf8mb4", "latin1", "utf8mb3"]))
    return Layout(cols, key, cs)


# -- workloads ------------------------------------------------------------------------------------

@st.composite
def _row_values(draw, layout, names, keyvals):
    out = []
    for name in names:
        c = layout.col(name)
        if name in keyvals:
            out.append(keyvals[name])
        elif c.nullable and draw(st.integers(0, 6)) == 0:
            out.append("NULL")
        else:
            out.append(draw(values(c.type)))
    return out


def _where_key(layout, key):
    return " AND ".join(f"{quote_ident(k)} = {v}" for k, v in zip(layout.key, key))


@st.composite
def workloads(draw, layout: Layout, max_statements=6, max_rows=6):
    salt = draw(st.integers(0, 2**30))
    counter = [0]
    keys = []  # key value tuples (literals) inserted so far
    statements = []
    auto = any(layout.col(k).auto_increment for k in layout.key)
    visible = [c.name for c in layout.columns]
    others = [c for c in visible if c not in layout.key]
    # NOT NULL columns whose implicit default the server refuses: every INSERT names them
    required = {c.name for c in layout.columns if not c.nullable and c.default is None
                and c.type.family in ("json", "geometry")}

    def fresh_key():  # (explicit keys of an AUTO_INCREMENT column are negative: never generated)
        counter[0] += 1
        return tuple(key_value(layout.col(k).type, counter[0], salt + j)
                     if not layout.col(k).auto_increment else str(-counter[0] - salt % 1000)
                     for j, k in enumerate(layout.key))

    n = draw(st.integers(1, max_statements))
    for i in range(n):
        kind = "insert" if i == 0 else draw(st.sampled_from(["insert", "update", "update", "delete"]))
        if kind == "insert":
            if others and draw(st.integers(0, 3)) == 0:
                named = [c for c in visible if c in layout.key or c in required or draw(st.booleans())]
            else:
                named = list(visible)
            omit_auto = auto and draw(st.booleans())
            if omit_auto:
                named = [c for c in named if c not in layout.key]
            if not named:
                named = list(visible)
                omit_auto = False
            rows = []
            for _ in range(draw(st.integers(1, max_rows))):
                key = fresh_key() if layout.key else ()
                if layout.key and not omit_auto:
                    keys.append(key)
                kv = dict(zip(layout.key, key)) if not omit_auto else {}
                rows.append("(" + ", ".join(draw(_row_values(layout, named, kv))) + ")")
            sql = (f"INSERT INTO t ({', '.join(quote_ident(c) for c in named)}) VALUES "
                   + ", ".join(rows))
            statements.append(Statement("insert", sql, tuple(named)))
        elif kind == "update":
            change_key = bool(layout.key) and bool(keys) and draw(st.integers(0, 4)) == 0
            if change_key or not others:
                if not keys:
                    continue
                old = draw(st.sampled_from(keys))
                new = fresh_key()
                keys.remove(old)
                keys.append(new)
                assigned = list(layout.key)
                sets = [f"{quote_ident(k)} = {v}" for k, v in zip(layout.key, new)]
                if others and draw(st.booleans()):
                    extra = draw(st.lists(st.sampled_from(others), min_size=1, max_size=2, unique=True))
                    vals = draw(_row_values(layout, extra, {}))
                    assigned += extra
                    sets += [f"{quote_ident(c)} = {v}" for c, v in zip(extra, vals)]
                sql = f"UPDATE t SET {', '.join(sets)} WHERE {_where_key(layout, old)}"
                statements.append(Statement("update", sql, tuple(assigned)))
                continue
            assigned = draw(st.lists(st.sampled_from(others), min_size=1, max_size=3, unique=True))
            vals = draw(_row_values(layout, assigned, {}))
            sets = ", ".join(f"{quote_ident(c)} = {v}" for c, v in zip(assigned, vals))
            where = draw(st.sampled_from(["key", "keys", "all", "limit"]) if keys
                         else st.sampled_from(["all", "limit"]))
            if where == "key":
                tail = f" WHERE {_where_key(layout, draw(st.sampled_from(keys)))}"
            elif where == "keys":
                chosen = draw(st.lists(st.sampled_from(keys), min_size=1, max_size=4, unique=True))
                tail = " WHERE " + " OR ".join(f"({_where_key(layout, k)})" for k in chosen)
            elif where == "limit":
                tail = f" LIMIT {draw(st.integers(1, 3))}"
            else:
                tail = ""
            statements.append(Statement("update", f"UPDATE t SET {sets}{tail}", tuple(assigned)))
        else:
            where = draw(st.sampled_from(["key", "keys", "limit", "all"]) if keys
                         else st.sampled_from(["limit", "all"]))
            if where == "key":
                k = draw(st.sampled_from(keys))
                tail = f" WHERE {_where_key(layout, k)}"
            elif where == "keys":
                chosen = draw(st.lists(st.sampled_from(keys), min_size=1, max_size=4, unique=True))
                tail = " WHERE " + " OR ".join(f"({_where_key(layout, k)})" for k in chosen)
            elif where == "limit":
                tail = f" LIMIT {draw(st.integers(1, 3))}"
            else:
                tail = ""
            statements.append(Statement("delete", f"DELETE FROM t{tail}"))
    return tuple(statements)


settings_strategy = st.sampled_from(ALL_SETTINGS)


@st.composite
def cases(draw, settings: Settings | None = None, max_columns=10, max_statements=6, max_rows=6):
    """A Case: the given settings (or drawn ones), a table and a workload."""
    s = settings if settings is not None else draw(settings_strategy)
    layout = draw(layouts(max_columns))
    work = draw(workloads(layout, max_statements, max_rows))
    return Case(s, layout.create(), work)
