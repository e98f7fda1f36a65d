"""Column values as Spark values: the two forms the `binlog` data source gives.

The map form (every table, one schema): `before` and `after` are map<string,string> from column
name to the JSON text of the value's documented JSON form (binlog_grammar.output.dump.json_value), written
compactly. So a value keeps its type across tables: `5` is a number, `"5"` a string (DECIMAL is a
string of its digits, so `"12.50"` keeps its scale), `null` is SQL NULL, and a column the row image
does not hold (binlog_row_image=MINIMAL/NOBLOB) has no key at all. Spark 4 reads such text with
`parse_json(after['c'])` (a VARIANT) and `variant_get(parse_json(after['c']), '$', 'decimal(12,2)')`,
or `get_json_object`, `from_json`. With the option `image_format` `json` an image is instead one
JSON object text holding the same value texts, keys in column order.

The typed form (one table, option `table`): `before` and `after` are structs with one field per
column of the table, typed by `spark_type` below from the TABLE_MAP_EVENT's column types and
metadata (and the `schema` option):

| column | Spark type |
|---|---|
| TINYINT, SMALLINT, MEDIUMINT (signed or not), INT, YEAR | int |
| INT UNSIGNED, BIGINT | bigint |
| BIGINT UNSIGNED | decimal(20,0) |
| DECIMAL(p,s), p <= 38 | decimal(p,s) |
| DECIMAL(p,s), p > 38 | string (the digits; Spark decimals stop at 38) |
| FLOAT / DOUBLE | float / double (NaN and infinities kept) |
| BIT(n) | bigint (n < 64), decimal(20,0) (n = 64) |
| DATE | date |
| DATETIME(n) | timestamp_ntz |
| TIMESTAMP(n) | timestamp (the instant; UTC) |
| TIME(n) | interval day to second (negative times too) |
| CHAR, VARCHAR, TEXT in a known charset | string |
| BINARY, VARBINARY, BLOB, binary or unknown-charset strings | binary |
| ENUM | string (the member; its 1-based index as text when the members are unknown) |
| SET | array<string> of the members in definition order (members known), else bigint (the bitmask) |
| JSON | string (the document as JSON text) |
| GEOMETRY and spatial types | struct<srid: bigint, wkb: binary> |
| VECTOR | array<float> |
| anything else | string (the JSON text) |

Values a Spark type cannot hold become NULL in the typed form, and keep their exact text in the map
form: the zero and invalid dates and datetimes MySQL allows ('0000-00-00'), the zero TIMESTAMP, a
TIME outside Spark's interval range (never for MySQL's +-838:59:59), an ENUM index or SET bitmask
outside the known members of an array column. Characters a column's charset could not decode (kept
as surrogate escapes by the decoder) become U+FFFD in a typed string.

`columns_json(table)` describes a table's columns as JSON (name, type, unsigned, charset,
precision, scale, bits, fsp, enum_values, set_values): the typed schema is built from it, and it
travels in the Spark field metadata (`binlog_column`) so readers and the pipeline agree.
"""
from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import math
from typing import Any, Callable

from ..generated import enums
from ..generated.sets import SETS
from ..output.dump import escape_undecoded, json_value
from ..runtime.construct import set_members
from ..runtime.values import codec_of

INT_TYPES = ("TINY", "SHORT", "INT24")
# the string columns' type names (specs/types/column_classes.yaml)
STRING_TYPES = frozenset(enums.COLUMN_TYPE[c] for c in set_members(SETS["string_columns"], None))
MAX_SPARK_PRECISION = 38
UTC = dt.timezone.utc


# ---------------------------------------------------------------------------------------------
# JSON text of a value (the map form)

try:
    from json.encoder import c_encode_basestring as _quote  # the C encoder json.dumps uses
except ImportError:  # pragma: no cover - a Python without the _json accelerator
    from json.encoder import py_encode_basestring as _quote
if _quote is None:  # pragma: no cover
    from json.encoder import py_encode_basestring as _quote


def _dumps(v) -> str:
    s = json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    if not s.isascii():
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:  # undecodable bytes kept as surrogates: escape them
            s = json.dumps(v, ensure_ascii=True, separators=(",", ":"))
    return s


def json_text(v: Any) -> str:
    """The JSON text of a decoded column value (its dump.json_value form), compact, UTF-8 kept
    (bytes a charset could not decode, kept as surrogate escapes, written `\\xNN` as the dump
    writes them; the dump's text_base64 has no place here)."""
    t = type(v)
    if t is int:
        return str(v)
    if t is str:
        s = _quote(v)
        if not s.isascii():
            try:
                s.encode("utf-8")
            except UnicodeEncodeError:
                s = _quote(escape_undecoded(v))
        return s
    if v is None:
        return "null"
    return _dumps(json_value(v))


def image_map(img):
    """A row image as the map form: column name -> JSON text (None for no image)."""
    if img is None:
        return None
    return {k: json_text(v) for k, v in img.items()}


# ---------------------------------------------------------------------------------------------
# column descriptions

def column_def(c) -> dict:
    """A rows.Column as a JSON-able description: what the typed form needs. Its name as the map
    form's keys and the dump write it (bytes that do not decode \\xNN), and the ENUM and SET
    members as the values' texts hold them: Spark's strings are UTF-8."""
    meta = c.get("meta")
    d = {"name": escape_undecoded(c.name), "type": c.type_name, "unsigned": bool(c.get("unsigned")),
         "charset": c.get("charset")}
    if c.type_name == "NEWDECIMAL" and meta is not None:
        d["precision"] = int(meta["precision"])
        d["scale"] = int(meta["scale"])
    if c.type_name == "BIT" and meta is not None:
        d["bits"] = int(meta["bytes"]) * 8 + int(meta["bits"])
    if c.get("fsp"):
        d["fsp"] = int(c.fsp)
    if c.get("enum_values") is not None:
        d["enum_values"] = [escape_undecoded(m) for m in c.enum_values]
    if c.get("set_values") is not None:
        d["set_values"] = [escape_undecoded(m) for m in c.set_values]
    return d


def columns_json(table) -> str:
    """The columns of a rows.Table as JSON text (a list of column_def)."""
    return json.dumps([column_def(c) for c in table.columns], ensure_ascii=False, sort_keys=True)


class Definitions:
    """When a table takes a definition, by content `tables`' rule: its first in a split, then
    each that differs from its previous one (layouts A, B, A again are three), so the last one
    of a table is the definition in force at the split's end, the pipeline's latest. Content
    `tables` asks it of each TABLE_MAP, the read's option with_tables of each rows event's
    table (spark/batch.py)."""

    def __init__(self):
        self._table = {}  # (db, table) -> the rows.Table it was last asked of
        self._key = {}  # (db, table) -> (columns JSON, primary key) of its last definition

    def new(self, t):
        """(columns JSON, primary key) of rows.Table t when it is a new definition of its table,
        else None; names as column_def writes them."""
        name = (t.db, t.table)
        if self._table.get(name) is t:  # the decoder reuses a table whose TABLE_MAP repeats
            return None
        self._table[name] = t
        key = (columns_json(t), tuple(escape_undecoded(k) for k in t.primary_key))
        if self._key.get(name) == key:
            return None
        self._key[name] = key
        return key


# ---------------------------------------------------------------------------------------------
# the typed form

def spark_type(d: dict):
    """The Spark type of a described column (see the table in the module docstring)."""
    from pyspark.sql import types as S

    t = d.get("type")
    uns = d.get("unsigned")
    if t in INT_TYPES or t == "YEAR":
        return S.IntegerType()
    if t == "LONG":
        return S.LongType() if uns else S.IntegerType()
    if t == "LONGLONG":
        return S.DecimalType(20, 0) if uns else S.LongType()
    if t == "NEWDECIMAL" and d.get("precision") is not None:
        p, s = d["precision"], d["scale"]
        if p <= MAX_SPARK_PRECISION:
            return S.DecimalType(max(p, 1), s)
        return S.StringType()
    if t == "FLOAT":
        return S.FloatType()
    if t == "DOUBLE":
        return S.DoubleType()
    if t == "BIT":
        return S.DecimalType(20, 0) if (d.get("bits") or 64) >= 64 else S.LongType()
    if t in ("DATE", "NEWDATE"):
        return S.DateType()
    if t in ("DATETIME", "DATETIME2"):
        return S.TimestampNTZType()
    if t in ("TIMESTAMP", "TIMESTAMP2"):
        return S.TimestampType()
    if t in ("TIME", "TIME2"):
        return S.DayTimeIntervalType(S.DayTimeIntervalType.DAY, S.DayTimeIntervalType.SECOND)
    if t == "ENUM":
        return S.StringType() if d.get("enum_values") is not None else S.IntegerType()
    if t == "SET":
        return S.ArrayType(S.StringType(), False) if d.get("set_values") is not None else S.LongType()
    if t in STRING_TYPES:
        return S.StringType() if codec_of(d) is not None else S.BinaryType()
    if t == "GEOMETRY":
        return S.StructType([S.StructField("srid", S.LongType()), S.StructField("wkb", S.BinaryType())])
    if t == "VECTOR":
        return S.ArrayType(S.FloatType(), False)
    return S.StringType()


def _clean_text(s: str) -> str:
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:  # surrogate escapes of undecodable bytes
        return "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in s)


def _float(v):
    if isinstance(v, str):
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(v)
    return None if v is None else float(v)


def _int(v):
    return v if type(v) is int else None


def _decimal(v):
    if v is None:
        return None
    try:
        return decimal.Decimal(str(v))
    except decimal.InvalidOperation:
        return None


def _date(v):
    try:
        return dt.date.fromisoformat(v)
    except (TypeError, ValueError):
        return None


def _datetime(v):
    if not isinstance(v, str) or v.endswith("Z") or "T" not in v:
        return None
    try:
        return dt.datetime.fromisoformat(v)
    except ValueError:
        return None


def _timestamp(v):
    if not isinstance(v, str) or not v.endswith("Z"):
        return None
    try:
        return dt.datetime.fromisoformat(v[:-1]).replace(tzinfo=UTC)
    except ValueError:
        return None


def _time(v):
    if not isinstance(v, str):
        return None
    neg = v.startswith("-")
    parts = v.lstrip("-").split(":")
    if len(parts) != 3:
        return None
    try:
        h, m = int(parts[0]), int(parts[1])
        sec, _, frac = parts[2].partition(".")
        td = dt.timedelta(hours=h, minutes=m, seconds=int(sec),
                          microseconds=int(frac.ljust(6, "0")) if frac else 0)
    except ValueError:
        return None
    if m > 59 or int(sec) > 59:
        return None
    return -td if neg else td


def _text(v):
    if isinstance(v, str):
        return _clean_text(v)
    return None if v is None else str(v)


def _binary(v):
    if not isinstance(v, str):
        return None
    try:
        return base64.b64decode(v)
    except ValueError:
        return None


def _json_doc(v):
    return None if v is None else _dumps(v)


def _any_text(v):
    return None if v is None else (_clean_text(v) if isinstance(v, str) else _dumps(v))


def set_order(members: list) -> list:
    """A SET's members in definition order, each once: the order of its typed array."""
    return list(dict.fromkeys(members))


def _set_members(members: list) -> Callable[[Any], Any]:
    """A SET's value (the JSON form's member list, sorted) as its typed array: the members in
    definition order, as the server shows them."""
    at = {m: i for i, m in enumerate(set_order(members))}
    last = len(at)

    def conv(v):
        if not isinstance(v, list):
            return None
        return [_clean_text(x) for x in sorted(v, key=lambda m: at.get(
            escape_undecoded(m) if isinstance(m, str) else m, last))]
    return conv


def converter(d: dict) -> Callable[[Any], Any]:
    """A function from the JSON form of a value of column `d` to its typed Spark value."""
    t = d.get("type")
    st = type(spark_type(d)).__name__
    if st in ("IntegerType", "LongType") and t not in ("ENUM", "SET"):
        return _int
    if t in ("ENUM",):
        if d.get("enum_values") is not None:
            return _text
        return _int
    if t == "SET":
        if d.get("set_values") is not None:
            return _set_members(d["set_values"])
        return _int
    if st == "DecimalType":
        return _decimal
    if st in ("FloatType", "DoubleType"):
        return _float
    if st == "DateType":
        return _date
    if st == "TimestampNTZType":
        return _datetime
    if st == "TimestampType":
        return _timestamp
    if st == "DayTimeIntervalType":
        return _time
    if st == "BinaryType":
        return _binary
    if t == "GEOMETRY":
        return lambda v: {"srid": v.get("srid"), "wkb": _binary(v.get("wkb"))} \
            if isinstance(v, dict) else None
    if t == "VECTOR":
        return lambda v: [_float(x) for x in v] if isinstance(v, list) else None
    if t == "JSON":
        return _json_doc
    if t in STRING_TYPES or t == "NEWDECIMAL":
        return _text
    return _any_text


def converter_kind(d: dict) -> str:
    """Which rule converter(d) applies: int, text, set (a SET's member list), decimal, float,
    date, datetime, timestamp, time, binary, or other (JSON documents, GEOMETRY, VECTOR, the
    rest): what binlog_grammar.spark.typed_sql matches its SQL to."""
    if d.get("type") == "SET" and d.get("set_values") is not None:
        return "set"
    conv = converter(d)
    for kind, f in (("int", _int), ("text", _text), ("decimal", _decimal), ("float", _float),
                    ("date", _date), ("datetime", _datetime), ("timestamp", _timestamp),
                    ("time", _time), ("binary", _binary)):
        if conv is f:
            return kind
    return "other"


def struct_type(defs: list):
    """The Spark struct of a table's typed image, each field carrying its description."""
    from pyspark.sql import types as S

    return S.StructType([S.StructField(d["name"], spark_type(d), True, {"binlog_column": d})
                         for d in defs])


def same_table(t, name: tuple) -> bool:
    """rows.Table `t` is the table (db, table) named as the source gives names (\\xNN)."""
    return (t.db, t.table) == name or \
        (escape_undecoded(t.db), escape_undecoded(t.table)) == name


def typed_keys(names_convs, names: tuple) -> list:
    """(field name, the image's key, converter) of each typed column, for images whose keys are
    a layout's column names `names` (as decoded: a name whose bytes do not decode is its field's
    name \\xNN)."""
    raw = {escape_undecoded(n): n for n in names}
    return [(name, raw.get(name, name), conv) for name, conv in names_convs]


def typed_image(img, keyed) -> Any:
    """A decoded row image (column name -> Python value) as a dict of typed values, by
    typed_keys' `keyed`."""
    if img is None:
        return None
    out = {}
    for name, key, conv in keyed:
        if key in img:
            out[name] = conv(json_value(img[key]))
        else:
            out[name] = None
    return out


def typed_from_texts(row: dict, names_convs) -> dict:
    """A map-form image (column name -> JSON text) as a dict of typed values."""
    out = {}
    for name, conv in names_convs:
        text = row.get(name) if row is not None else None
        out[name] = None if text is None else conv(json.loads(text))
    return out
