"""Column values as SQL literals, for the scripts of binlog_grammar.output.sql and the repair's
statements (binlog_grammar.repair).

`sql_literal(value, col)` gives the literal (or expression) that stores a Python value
binlog_grammar.binlog.rows decoded for the column `col` (a rows.Column; None when unknown):

| Python value (column) | SQL |
|---|---|
| None | `NULL` |
| int (integers, YEAR, BIT, ENUM index, SET bitmask) | its digits |
| Decimal | its digits, every fraction digit kept: `-3.10` |
| float (FLOAT, DOUBLE) | `repr`, which reads back as the same double (a FLOAT's 4-byte value is such a double): `0.1`, `1e+300`, `3.1415927410125732`; -0.0 as `-0e0` |
| date / naive datetime / timedelta | quoted text: `'2024-02-29'`, `'2024-02-29 12:34:56.789'`, `'-00:00:01.5'` |
| aware datetime (TIMESTAMP) | its UTC text, quoted (the script sets time_zone '+00:00') |
| str (zero and invalid dates and times) | quoted as it is: `'0000-00-00'` |
| str (strings, ENUM member) | binlog_grammar.output.quoting.text_literal: quoted, with `\\\\ \\' \\0 \\n \\r \\Z` escapes, when the text stores the logged bytes in the column's charset (binlog_grammar.output.replay_charsets); otherwise, and for bytes its charset cannot decode (surrogate escapes), `_charset X'..'` of its bytes |
| bytes (binary strings) | `X'..'`; empty bytes `''` |
| frozenset (SET) | the members, comma-separated in the column's member order, quoted: `'a,c'`, `''` |
| JSON document (MySQL JSON column) | its JSON text quoted (`binlog_grammar.runtime.jsonb.json_text`); compared in a WHERE as `CAST(... AS JSON)` |
| PartialJson (a partial JSON update without the before value) | `JSON_REPLACE/JSON_INSERT/JSON_REMOVE` calls on the column |
| Geometry | `ST_GeomFromWKB(X'..', srid)` |
| list of float (MySQL VECTOR) | `STRING_TO_VECTOR('[..]')` |

The literals assume the session settings a script starts with (binlog_grammar.output.sql
SESSION_SETTINGS): UTF-8 text, time_zone '+00:00', backslash escapes.

`where_term(name, value, col, exact_strings)` is one `col = literal` of a WHERE clause; with
`exact_strings` strings, binary strings and geometries compare byte for byte, as
`CAST(col AS BINARY) = X'..'` (a geometry as it is stored: the SRID, then the WKB).
A partial JSON update becomes the calls that apply it (binlog_grammar.output.text.json_diff_calls,
which the -vv text writes too).
"""
from __future__ import annotations

import datetime as _dt
import decimal
import math
from typing import Optional

from ..binlog.rows import PartialJson
from ..generated import enums
from ..runtime.values import Geometry, codec_of, errors_of
from .quoting import hex_literal, ident as quote_ident, string as quote_string, text_literal
from .text import json_diff_calls, json_diff_op, value_bytes

__all__ = ["sql_literal", "where_term", "quote_ident", "quote_string", "hex_literal"]

UTC = _dt.timezone.utc

def _type_name(col) -> Optional[str]:
    if col is None:
        return None
    name = col.get("type_name")
    if name is None and col.get("type") is not None:
        name = enums.COLUMN_TYPE.get(int(col.get("type")))
    return name


def _text_literal(text: str, col) -> str:
    """A str of the column: quoting.text_literal in the column's charset."""
    return text_literal(text, col.get("charset") if col is not None else None)


def _float_literal(x: float) -> str:
    if not math.isfinite(x):
        raise ValueError(f"{x!r} has no SQL literal (a column cannot store it)")
    if x == 0 and math.copysign(1.0, x) < 0:
        return "-0e0"  # `-0.0` would be the DECIMAL zero
    return repr(x)


def _frac(us: int) -> str:
    return ("." + f"{us:06d}".rstrip("0")) if us else ""


def _datetime_text(v: _dt.datetime) -> str:
    return (f"{v.year:04d}-{v.month:02d}-{v.day:02d} {v.hour:02d}:{v.minute:02d}:{v.second:02d}"
            f"{_frac(v.microsecond)}")


def _time_text(v: _dt.timedelta) -> str:
    micros = v // _dt.timedelta(microseconds=1)
    secs, us = divmod(abs(micros), 1_000_000)
    sign = "-" if micros < 0 else ""
    return f"{sign}{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}{_frac(us)}"


def _set_text(members, col) -> str:
    order = (col.get("set_values") if col is not None else None) or []
    rank = {m: i for i, m in enumerate(order)}
    return ",".join(sorted(members, key=lambda m: (rank.get(m, len(rank)), m)))


def _json_literal(doc) -> str:
    from ..runtime.jsonb import json_text

    return quote_string(json_text(doc))


def _partial_json(value, col) -> str:
    """JSON_REPLACE / JSON_INSERT / JSON_REMOVE calls that apply the diffs to the stored value."""
    name = col.get("name") if col is not None else None
    if not name:
        raise ValueError("a partial JSON update needs its column's name")
    for op, _path, _v in value.diffs:
        op = json_diff_op(op)
        if op not in ("REPLACE", "INSERT", "REMOVE"):
            raise ValueError(f"unknown JSON diff operation {op!r}")
    return json_diff_calls(quote_ident(name), value.diffs, quote_string)


def sql_literal(value, col=None) -> str:
    """The SQL literal (or expression) that stores `value`, a Python value rows.py decoded for the
    column `col` (a rows.Column; None when unknown). See the module docstring for each type.
    ValueError for a value no column can hold (a NaN, a type that is not a column value)."""
    if value is None:
        return "NULL"
    tname = _type_name(col)
    if isinstance(value, PartialJson):
        return _partial_json(value, col)
    if tname == "JSON":
        return _json_literal(value)
    if tname == "VECTOR" or (isinstance(value, list) and tname is None):
        return "STRING_TO_VECTOR(" + quote_string(
            "[" + ",".join(_float_literal(float(x)) for x in value) + "]") + ")"
    if isinstance(value, Geometry):
        return f"ST_GeomFromWKB({hex_literal(value.wkb)}, {int(value.srid)})"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise ValueError(f"{value!r} has no SQL literal (a DECIMAL column cannot store it)")
        return format(value, "f")
    if isinstance(value, float):
        return _float_literal(value)
    if isinstance(value, _dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC)
        return f"'{_datetime_text(value)}'"
    if isinstance(value, _dt.date):
        return f"'{value.year:04d}-{value.month:02d}-{value.day:02d}'"
    if isinstance(value, _dt.timedelta):
        return f"'{_time_text(value)}'"
    if isinstance(value, str):
        return _text_literal(value, col)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return hex_literal(bytes(value))
    if isinstance(value, (frozenset, set)):
        return _text_literal(_set_text(value, col), col)
    raise ValueError(f"a {type(value).__name__} ({value!r:.80}) is not a column value "
                     f"of {tname or 'an unknown column type'}")


def where_term(name: str, value, col, exact_strings: bool) -> str:
    """`col = literal` for a WHERE clause (IS NULL for NULL)."""
    ident = quote_ident(name)
    if value is None:
        return f"{ident} IS NULL"
    tname = _type_name(col)
    if tname == "JSON":
        return f"{ident}=CAST({_json_literal(value)} AS JSON)"
    if tname == "SET" and isinstance(value, int) and not isinstance(value, bool):
        # a bitmask (the members are not known): the server compares a SET with a number as
        # its signed value, so a mask with the 64th member set equals no unsigned literal
        return f"CAST({ident} + 0 AS UNSIGNED)={int(value)}"
    if exact_strings and isinstance(value, str) and tname not in ("ENUM", "SET"):
        codec = codec_of(col)
        if codec is not None:
            raw = value.encode(codec, errors_of(codec))
            return f"CAST({ident} AS BINARY)={hex_literal(raw)}"
    if exact_strings and isinstance(value, (bytes, bytearray)):
        return f"CAST({ident} AS BINARY)={hex_literal(bytes(value))}"
    if exact_strings and isinstance(value, Geometry):  # the stored form: SRID, then the WKB
        return f"CAST({ident} AS BINARY)={hex_literal(value_bytes(value, col))}"
    return f"{ident}={sql_literal(value, col)}"
