"""Hypothesis strategies for MariaDB column types (binlog_grammar.testing.schema draws tables of them).

`column_types()` draws a `ColumnType` of every type family MariaDB 10.11 has, with character sets
and collations (`CHARSETS`); `texts()` draws text from several scripts and the characters SQL and
the binlog tools treat specially. Values for a column type are SQL literals
(binlog_grammar.testing.literals).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st


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


def encodable(text: str, charset) -> bool:
    """Whether `text` can stand in a column of `charset` as it is (None: the table's default,
    latin1): by Python's codec for latin1, cp1251 and ascii; else no characters beyond the BMP
    but in utf8mb4."""
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
                                       if encodable(p, cs)]))
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

