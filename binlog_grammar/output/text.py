"""Column values as text, the way `mariadb-binlog -vv --base64-output=decode-rows` prints them.

mariadb-binlog prints each column of a row image as

    ###   @3='Paris' /* VARSTRING(30) meta=30 nullable=1 is_null=0 */

`vv_value(value, col)` gives the text after `@N=` (here `'Paris'`) from the Python value that
`binlog_grammar.binlog.rows` decoded, and `vv_type(col, is_null)` the text inside the comment (here
`VARSTRING(30) meta=30 nullable=1 is_null=0`). `col` is the `rows.Column` of the value.

Which form writes each column type is stated once, in output/forms.py (FORMS["vv"]); the forms
are the functions of `VV_FORMS` below, each made once per column, and `vv_lines` writes a row image
by its table's plan (`vv_plan`, made once per TABLE_MAP) instead of testing each value's type.

mariadb-binlog prints from the bytes alone: it ignores the signedness, charset and ENUM/SET member
metadata of the TABLE_MAP. So this module turns the Python value back into what those bytes say:

| column type | text |
|---|---|
| TINYINT .. BIGINT | the value read as signed; when that is negative, the unsigned reading follows in parentheses: `-1 (255)` |
| DECIMAL(p,s) | every digit, exactly s after the point: `-3.10`, `0.00` |
| FLOAT | C's `%-20g`: six significant digits, left-justified in 20 characters (trailing spaces included) |
| DOUBLE | C's `%.20g`: up to 20 significant digits: `0.25`, `-1.0000000000000000525e+300` |
| YEAR | `%04d` of the stored byte + 1900, so YEAR 0000 prints as `1900` |
| DATE | `'YYYY:MM:DD'` with colons (`'0000:00:00'` for the zero date) |
| DATETIME (old format) | `'YYYY-MM-DD hh:mm:ss'` |
| DATETIME(n) | `'YYYY-MM-DD hh:mm:ss'` and n fraction digits when n > 0 |
| TIMESTAMP (old format) | seconds since the epoch: `1709287201` |
| TIMESTAMP(n) | seconds since the epoch, then n fraction digits when n > 0: `1709287201.001`; the zero timestamp is `0` / `0.000` |
| TIME, TIME(n) | `'[-]hh:mm:ss'` (more hour digits when needed) and n fraction digits when n > 0 |
| BIT(n) | `b'...'` with exactly n binary digits |
| ENUM | the 1-based member index (0 is the '' error value) |
| SET | `b'...'`: the stored bytes in storage order (least significant first), each as 8 binary digits most significant bit first |
| CHAR, VARCHAR, BINARY, VARBINARY, BLOB, TEXT | the stored bytes in single quotes; bytes below 0x20 as `\\xNN`, every other byte as is (quotes and backslashes are not escaped, so the value never spans lines) |
| GEOMETRY | like a string: the 4-byte SRID then the WKB |
| SQL NULL | `NULL` |

Strings are bytes in the column's character set, and mariadb-binlog writes those bytes unchanged,
whatever the charset. To carry them in a `str`, the quoted text is decoded as UTF-8 with
`surrogateescape`: for UTF-8 (and ASCII) columns that is the plain text, and for any other charset
`text.encode("utf-8", "surrogateescape")` gives back mariadb-binlog's exact bytes.

A BINARY(n) value comes from rows.py padded to n bytes with 0x00, as SELECT shows it; the binlog
stores it without the pad, and so does this text. The stored bytes that BIT, SET and VECTOR
print are built with the spec's value types (value_bit, value_set and value_vector in
specs/types/columns.yaml), without the length in front of the value.

Types mariadb-binlog cannot print get a form of this module's choosing, checked against no oracle:
JSON (MySQL binary JSON) as MySQL's JSON text in quotes (`'{"a": [1, 2]}'`; DECIMAL members as
their digits, temporal members as quoted strings with six fraction digits, other opaque members as
"base64:typeN:..."; a partial update whose before value the binlog lacks as the nested calls that
apply its diffs: `JSON_REPLACE(@2, '$.age', 26)`), and VECTOR as its stored bytes in quotes. MariaDB's compressed columns (VARCHAR/BLOB COMPRESSED) print in
mariadb-binlog as their stored, compressed bytes; rows.py inflates them and the compressed form is
not kept, so `vv_value` gives the inflated value in quotes there.

Sources (facts only): MariaDB sql/log_event_client.cc (log_event_print_value, my_b_write_quoted,
my_b_write_bit), sql/rpl_utility.cc (table_def: which metadata each type carries and how it is
read into one number), sql-common/my_time.c (my_datetime_to_str, my_time_to_str,
my_timeval_to_str), strings/decimal.c (decimal2string).
"""
from __future__ import annotations

import calendar
import datetime as _dt
import decimal
import functools
import re
import struct
from typing import Any

from ..generated import enums
from ..generated import types as value_types
from ..generated.sets import SETS
from ..runtime.construct import set_members
from ..runtime.values import Geometry, Text, binary_char_length, codec_of, errors_of
from .forms import form_name, plan

__all__ = ["vv_value", "vv_type", "vv_meta", "vv_form", "vv_print_type", "vv_column_text", "vv_writer", "vv_plan", "vv_lines", "VV_FORMS", "quote_bytes", "value_bytes", "json_diff_calls",
           "json_diff_op"]

_CODE = {name: code for code, name in enums.COLUMN_TYPE.items()}
_INT_NAME = {_CODE["TINY"]: "TINYINT", _CODE["SHORT"]: "SHORTINT", _CODE["INT24"]: "MEDIUMINT",
             _CODE["LONG"]: "INT", _CODE["LONGLONG"]: "LONGINT"}


def _fixed_size(code: int) -> int:
    """Bytes the spec's column_value stores for every value of a column of type `code` (the
    integers: value_tiny .. value_longlong in specs/types/columns.yaml)."""
    col = {"type": code, "unsigned": False, "meta": None}
    return value_types.column_value.sizeof(_index=0, columns=[col])


_INT_WIDTH = {code: _fixed_size(code) for code in _INT_NAME}
_TIMESTAMP_WIDTH = _fixed_size(_CODE["TIMESTAMP"])
_BLOB_NAME = {1: "TINYBLOB/TINYTEXT", 2: "BLOB/TEXT", 3: "MEDIUMBLOB/MEDIUMTEXT",
              4: "LONGBLOB/LONGTEXT"}
_BLOBS = set_members(SETS["blob_columns"], None)  # specs/types/column_classes.yaml
_VARCHARS = {_CODE["VARCHAR"], _CODE["VAR_STRING"]}

_DATE_TEXT = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_DATETIME_TEXT = re.compile(r"^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$")
_TIME_TEXT = re.compile(r"^(-?)(\d{2,4}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$")


# ---------------------------------------------------------------------------------------------
# The column as mariadb-binlog sees it

def _get(col, key, default=None):
    value = col.get(key) if col is not None else None
    return default if value is None else value


def _print_type(col) -> int:
    """The type code mariadb-binlog switches on: a STRING column's real type when its metadata
    names ENUM or SET (as table_def::type() does), else the TABLE_MAP code."""
    code = int(col.type)
    if code == _CODE["STRING"]:
        meta = col.get("meta")
        if meta is not None and int(meta.real_type) in (_CODE["ENUM"], _CODE["SET"]):
            return int(meta.real_type)
    return code


def vv_meta(col) -> int:
    """The column's metadata as the one number mariadb-binlog prints after `meta=`.

    Two-byte metadata is read as MariaDB's table_def reads it: the bytes of CHAR/ENUM/SET (real
    type, length) and DECIMAL (precision, scale) metadata as one big-endian number, BIT's (extra
    bits, whole bytes) as one little-endian number (colmeta_number_be, colmeta_number_le in
    specs/types/rows.yaml); VARCHAR the little-endian maximum. Types MariaDB keeps no metadata for
    (the integers, the old temporal types, VAR_STRING) print 0; MySQL's JSON and VECTOR, which
    mariadb-binlog cannot print, show their one metadata byte (the length-prefix size), as MySQL's
    tool does.
    """
    code = int(col.type)
    meta = col.get("meta")
    if meta is None:
        return 0
    if code in _META_NUMBER:
        return _meta_bytes_number(code, tuple((k, v) for k, v in meta.items() if k[:1] != "_"))
    if code in (_CODE["VARCHAR"], _CODE["VARCHAR_COMPRESSED"]) or code in _BLOBS or code in (
            _CODE["BLOB_COMPRESSED"], _CODE["FLOAT"], _CODE["DOUBLE"], _CODE["GEOMETRY"],
            _CODE["TIME2"], _CODE["DATETIME2"], _CODE["TIMESTAMP2"], _CODE["JSON"],
            _CODE["VECTOR"]):
        return int(meta)
    return 0


# the metadata kept as one number whose bytes are a struct: the column types, the TABLE_MAP's
# metadata type of each, and how MariaDB reads those bytes again (specs/types/rows.yaml)
_META_NUMBER = {_CODE["STRING"]: ("colmeta_string", "colmeta_number_be"),
                _CODE["ENUM"]: ("colmeta_string", "colmeta_number_be"),
                _CODE["SET"]: ("colmeta_string", "colmeta_number_be"),
                _CODE["NEWDECIMAL"]: ("colmeta_decimal", "colmeta_number_be"),
                _CODE["BIT"]: ("colmeta_bit", "colmeta_number_le")}


@functools.lru_cache(maxsize=1024)
def _meta_bytes_number(code: int, fields: tuple) -> int:
    """The metadata `fields` of a column of type `code` built with its metadata type, and read
    back as the one number MariaDB keeps."""
    layout, number = _META_NUMBER[code]
    return getattr(value_types, number).parse(getattr(value_types, layout).build(dict(fields)))


def _meta_field(col, name) -> int:
    """A field of the column's metadata (rows.yaml's metadata types), 0 without metadata."""
    meta = col.get("meta")
    return int(getattr(meta, name)) if meta is not None else 0


def _bit_count(col) -> int:
    """The bits of a BIT(n) column: its metadata's whole bytes and extra bits."""
    return _meta_field(col, "bytes") * 8 + _meta_field(col, "bits")


def _string_length(col) -> int:
    """The length mariadb-binlog shows in STRING(n): the CHAR column's maximum byte length."""
    meta = col.get("meta")
    return int(meta.max_length) if meta is not None else 0


def _type_name(col) -> str:
    code = _print_type(col)
    meta = vv_meta(col)
    if code in _INT_NAME:
        return _INT_NAME[code]
    if code == _CODE["NEWDECIMAL"]:
        return f"DECIMAL({_meta_field(col, 'precision')},{_meta_field(col, 'scale')})"
    if code in (_CODE["FLOAT"], _CODE["DOUBLE"], _CODE["TIMESTAMP"], _CODE["DATETIME"],
                _CODE["TIME"], _CODE["YEAR"], _CODE["GEOMETRY"], _CODE["JSON"], _CODE["VECTOR"]):
        return enums.COLUMN_TYPE[code]
    if code == _CODE["BIT"]:
        return f"BIT({_bit_count(col)})"
    if code == _CODE["TIMESTAMP2"]:
        return f"TIMESTAMP({meta})"
    if code == _CODE["DATETIME2"]:
        return f"DATETIME({meta})"
    if code == _CODE["TIME2"]:
        return f"TIME({meta})"
    if code in (_CODE["DATE"], _CODE["NEWDATE"]):
        return "DATE"
    if code == _CODE["ENUM"]:
        size = _meta_field(col, "length")
        return "ENUM(1 byte)" if size == 1 else f"ENUM({size} bytes)"
    if code == _CODE["SET"]:
        return f"SET({_meta_field(col, 'length')} bytes)"
    if code in _BLOBS or code == _CODE["BLOB_COMPRESSED"]:
        suffix = " COMPRESSED" if code == _CODE["BLOB_COMPRESSED"] else ""
        return _BLOB_NAME.get(meta, f"BLOB({meta})") + suffix
    if code in _VARCHARS or code == _CODE["VARCHAR_COMPRESSED"]:
        suffix = " COMPRESSED" if code == _CODE["VARCHAR_COMPRESSED"] else ""
        return f"VARSTRING({meta}){suffix}"
    if code == _CODE["STRING"]:
        return f"STRING({_string_length(col)})"
    return enums.COLUMN_TYPE.get(code, f"TYPE{code}")


def vv_type(col, is_null: bool = False) -> str:
    """The type comment mariadb-binlog -vv prints after a value, without the `/* */`:
    `INT meta=0 nullable=0 is_null=0`. `is_null` says whether this value is SQL NULL."""
    nullable = 1 if _get(col, "nullable", True) else 0
    null = 1 if is_null else 0
    return f"{_type_name(col)} meta={vv_meta(col)} nullable={nullable} is_null={null}"


# ---------------------------------------------------------------------------------------------
# Values

def quote_bytes(data: bytes) -> str:
    """Bytes in single quotes as mariadb-binlog writes them: bytes below 0x20 as \\xNN (lower-case
    hex), every other byte unchanged (quote and backslash included). The result is the UTF-8
    reading of those bytes, with surrogateescape for bytes that are not UTF-8."""
    data = bytes(data)
    if _CONTROL_BYTE.search(data):
        data = _CONTROL_BYTE.sub(_escape_control, data)
    return "'" + data.decode("utf-8", "surrogateescape") + "'"


_CONTROL_BYTE = re.compile(rb"[\x00-\x1f]")


def _escape_control(m) -> bytes:
    return b"\\x%02x" % m[0][0]


def value_bytes(value, col) -> bytes:
    """The stored bytes of a string-like value: a str in the column's charset (UTF-8 when it is
    not known), bytes as they are, a BINARY(n) value without the 0x00 pad rows.py added back, a
    Geometry as its four-byte SRID then its WKB (value_geometry after its length; written here,
    since a column from a user's schema has no metadata to build value_geometry with)."""
    if isinstance(value, Geometry):
        return struct.pack("<I", value.srid) + bytes(value.wkb)
    if isinstance(value, (bytes, bytearray, memoryview)):
        value = bytes(value)
    return Text().encode(value, col)["data"]


def _stored(type_name: str, value, col) -> bytes:
    """The bytes the spec's column value type `type_name` (specs/types/columns.yaml) stores for
    `value` in the column `col`."""
    return getattr(value_types, type_name).build(value, _index=0, columns=[col])


def _meta_number(col) -> int:
    """A column's metadata when it is one number: for VECTOR the size of the length in front of
    the value (colmeta_pack_length)."""
    return int(col.get("meta"))


def _readings(value: int, width: int) -> tuple:
    """(signed, unsigned): an integer stored in `width` bytes, read both ways."""
    bits = 8 * width
    unsigned = int(value) & ((1 << bits) - 1)
    signed = unsigned - (1 << bits) if unsigned >> (bits - 1) else unsigned
    return signed, unsigned


def _int_text(value: int, width: int) -> str:
    signed, unsigned = _readings(value, width)
    return f"{signed} ({unsigned})" if signed < 0 else str(signed)


def _fraction(us: int, digits: int) -> str:
    return "." + f"{us:06d}"[:digits] if digits > 0 else ""


def _us(text) -> int:
    return int(text.ljust(6, "0")) if text else 0


def _date_parts(value):
    if isinstance(value, _dt.date):
        return value.year, value.month, value.day
    m = _DATE_TEXT.match(value) if isinstance(value, str) else None
    if not m:
        raise ValueError(f"not a DATE value: {value!r}")
    return int(m[1]), int(m[2]), int(m[3])


def _datetime_parts(value):
    if isinstance(value, _dt.datetime):
        return (value.year, value.month, value.day, value.hour, value.minute, value.second,
                value.microsecond)
    m = _DATETIME_TEXT.match(value) if isinstance(value, str) else None
    if not m:
        raise ValueError(f"not a DATETIME value: {value!r}")
    return tuple(int(g) for g in m.groups()[:6]) + (_us(m[7]),)


def _time_parts(value):
    """(negative, hours, minutes, seconds, microseconds) of a TIME value."""
    if isinstance(value, _dt.timedelta):
        negative = value < _dt.timedelta(0)
        mag = -value if negative else value
        total_us = (mag.days * 86400 + mag.seconds) * 1_000_000 + mag.microseconds
        secs, us = divmod(total_us, 1_000_000)
        return negative, secs // 3600, secs // 60 % 60, secs % 60, us
    m = _TIME_TEXT.match(value) if isinstance(value, str) else None
    if not m:
        raise ValueError(f"not a TIME value: {value!r}")
    return m[1] == "-", int(m[2]), int(m[3]), int(m[4]), _us(m[5])


def _timestamp_parts(value):
    """(seconds since the epoch, microseconds) of a TIMESTAMP value."""
    if isinstance(value, str):
        if value.startswith("0000-00-00 00:00:00"):
            return 0, 0
        raise ValueError(f"not a TIMESTAMP value: {value!r}")
    if value.tzinfo is None:
        raise ValueError(f"a TIMESTAMP value is an aware datetime, not {value!r}")
    return calendar.timegm(value.utctimetuple()), value.microsecond


def _enum_index(value, col) -> int:
    if isinstance(value, int):
        return value
    if value == "":
        return 0
    members = col.get("enum_values") or []
    if value not in members:
        raise ValueError(f"ENUM value {value!r} is not one of {members!r}")
    return members.index(value) + 1


def _bits(data: bytes, nbits: int) -> str:
    """b'...' of the last nbits bits of data, most significant first."""
    digits = "".join(f"{b:08b}" for b in data)
    return "b'" + digits[len(digits) - nbits:] + "'"


def _json_text(value) -> str:
    """A JSON document as MySQL writes its text (binlog_grammar.runtime.jsonb.json_text)."""
    from ..runtime.jsonb import json_text

    return json_text(value)


def _sql_quote(text: str) -> str:
    return quote_bytes(text.encode("utf-8", "surrogateescape"))


def json_diff_calls(target: str, diffs, quote) -> str:
    """The diffs of a partial JSON update (rows.JsonDiff: op, path, value) applied to the SQL
    expression `target`, as nested JSON_REPLACE / JSON_INSERT / JSON_REMOVE calls:
    `JSON_REPLACE(target, '$.age', 26)`. A string value is a quoted SQL string, a number its
    digits, anything else CAST('<JSON text>' AS JSON); `quote(text)` writes a SQL string literal.
    The -vv text writes them on `@N`, `sql` (binlog_grammar.output.sql_literals) on the column's
    name."""
    from ..runtime.jsonb import json_text

    expr = target
    for op, path, v in diffs:
        op = json_diff_op(op)
        if op == "REMOVE":
            expr = f"JSON_REMOVE({expr}, {quote(str(path))})"
            continue
        if isinstance(v, str):
            arg = quote(v)
        elif isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool):
            arg = json_text(v)
        else:
            arg = f"CAST({quote(json_text(v))} AS JSON)"
        expr = f"JSON_{op}({expr}, {quote(str(path))}, {arg})"
    return expr


def json_diff_op(op) -> str:
    """The name of a JSON diff operation: REPLACE, INSERT, REMOVE (an unknown code as its digits)."""
    return str(getattr(op, "name", op)).upper()


def _partial_json_text(value, col) -> str:
    """The diffs of a partial JSON update applied to the column, as nested JSON_REPLACE /
    JSON_INSERT / JSON_REMOVE calls on `@N`: `JSON_REPLACE(@2, '$.age', 26)`."""
    return json_diff_calls(f"@{int(col.index) + 1}", value.diffs, _sql_quote)


# ---------------------------------------------------------------------------------------------
# The forms (output/forms.py FORMS["vv"]): each made once per column, then run on its values

def _int_signed_width(col):
    bits = 8 * _INT_WIDTH[_print_type(col)]
    mask, half, full = (1 << bits) - 1, 1 << (bits - 1), 1 << bits

    def write(v):
        u = int(v) & mask
        return str(u) if u < half else f"{u - full} ({u})"
    return write


def _datetime_form(digits):
    def write(v):
        y, mo, d, h, mi, s, us = _datetime_parts(v)
        return f"'{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d}{_fraction(us, digits)}'"
    return write


def _time_form(digits):
    def write(v):
        neg, h, m, s, us = _time_parts(v)
        return f"'{'-' if neg else ''}{h:02d}:{m:02d}:{s:02d}{_fraction(us, digits)}'"
    return write


def _epoch_fsp(col):
    digits = vv_meta(col)

    def write(v):
        secs, us = _timestamp_parts(v)
        return f"{secs}{_fraction(us, digits)}"
    return write


def _date_colon(v):
    y, m, d = _date_parts(v)
    return f"'{y:04d}:{m:02d}:{d:02d}'"


def _year_1900(v):
    stored = 0 if v == 0 else int(v) - 1900
    return f"{stored + 1900:04d}"


def _json_text_quoted(col):
    def write(v):
        if hasattr(v, "diffs"):  # rows.PartialJson: the diffs of a partial update
            return _partial_json_text(v, col)
        return _sql_quote(_json_text(v))
    return write


def _quoted_bytes(col):
    """The stored bytes in quotes (value_bytes, with the column's codec and BINARY pad found
    once)."""
    codec = codec_of(col) or "utf-8"
    errors = errors_of(codec)
    strip = binary_char_length(col) is not None

    def write(v):
        if isinstance(v, str):
            return quote_bytes(v.encode(codec, errors))
        if isinstance(v, (bytes, bytearray, memoryview)):
            data = bytes(v)
            return quote_bytes(data.rstrip(b"\0") if strip else data)
        return quote_bytes(value_bytes(v, col))
    return write


VV_FORMS = {
    "int_signed_width": _int_signed_width,
    "decimal_digits": lambda col: lambda v: format(decimal.Decimal(v), "f"),
    "float_left20g": lambda col: lambda v: format(float(v), "<20g"),
    "double_g20": lambda col: lambda v: format(float(v), ".20g"),
    "year_1900": lambda col: _year_1900,
    "date_colon": lambda col: _date_colon,
    "datetime": lambda col: _datetime_form(0),
    "datetime_fsp": lambda col: _datetime_form(vv_meta(col)),
    # the stored seconds printed with %d
    "epoch_seconds": lambda col: lambda v: str(_readings(_timestamp_parts(v)[0],
                                                         _TIMESTAMP_WIDTH)[0]),
    "epoch_fsp": _epoch_fsp,
    "time": lambda col: _time_form(0),
    "time_fsp": lambda col: _time_form(vv_meta(col)),
    "bits": lambda col: functools.partial(_bit_text, col, _bit_count(col)),
    "enum_index": lambda col: lambda v: str(_enum_index(v, col)),
    "set_bits": lambda col: functools.partial(_set_text, col, _meta_field(col, "length") * 8),
    "json_text_quoted": _json_text_quoted,
    "vector_bytes": lambda col: functools.partial(_vector_text, col, _meta_number(col)),
    "quoted_bytes": _quoted_bytes,
}


def _bit_text(col, nbits, v):
    return _bits(_stored("value_bit", int(v), col), nbits)


def _set_text(col, nbits, v):
    return _bits(_stored("value_set", v, col), nbits)


def _vector_text(col, skip, v):
    return quote_bytes(_stored("value_vector", v, col)[skip:])


# the number a form takes from its column, for the compiled backend's forms (output/vv_native.py),
# read with the functions the forms above read it with
_FORM_ARGS = {
    "int_signed_width": lambda col: _INT_WIDTH[_print_type(col)],
    "datetime_fsp": vv_meta, "time_fsp": vv_meta, "epoch_fsp": vv_meta,
    "bits": _bit_count,
    "set_bits": lambda col: _meta_field(col, "length") * 8,
}


def vv_print_type(col) -> int:
    """The type code the -vv text writes a column as (its form and type comment follow it)."""
    return _print_type(col)


def vv_form(col) -> tuple:
    """(the name of the column's form, the number it takes from the column: a width, fraction
    digits or bits; 0 for a form that takes none)."""
    form = form_name("vv", _print_type(col))
    return form, int(_FORM_ARGS[form](col)) if form in _FORM_ARGS else 0


def vv_writer(col):
    """The writer of the column's values (not NULL) in its form (forms.FORMS["vv"])."""
    return VV_FORMS[form_name("vv", _print_type(col))](col)


def vv_value(value: Any, col) -> str:
    """The text mariadb-binlog -vv prints for this column value (after `@N=`), from the Python
    value rows.py decoded for `col`. See the module docstring for each type."""
    if value is None:
        return "NULL"
    return vv_writer(col)(value)


def vv_plan(columns) -> list:
    """A table's row plan for the -vv text, made once per TABLE_MAP: for each column (name,
    `###   @N=`, its writer, ` /* TYPE ... is_null=0 */`, the whole line of a NULL)."""
    return plan("vv", columns, _plan_entry)


def vv_column_text(col) -> tuple:
    """The text around a column's values in the -vv lines: (`###   @N=`, ` /* TYPE ... is_null=0
    */`, the whole line of a NULL), the type comments made from the column's type codes and
    metadata numbers only. Both backends write these (output/vv_native.py for the compiled one)."""
    head = _vv_head(col)
    return head, f" /* {vv_type(col, False)} */", f"{head}NULL /* {vv_type(col, True)} */"


def _vv_head(col) -> str:
    """`###   @N=`: N is the column's position, an int (no name or value of the binlog in it)."""
    return f"###   @{int(col.index) + 1}="


def _plan_entry(col):
    try:
        write = vv_writer(col)
        head, tail, null = vv_column_text(col)
    except Exception:  # noqa: BLE001 - metadata the forms cannot read: fail on a value, as before
        head = _vv_head(col)
        return (col.name, head, functools.partial(_slow_line, head, col), None, None)
    return (col.name, head, write, tail, null)


def vv_lines(values: dict, columns):
    """The `###   @N=value /* TYPE ... */` lines of a row image, by the table's plan."""
    get = values.get
    missing = _MISSING
    for name, head, write, tail, null in vv_plan(columns):
        v = get(name, missing)
        if v is missing:
            continue
        if tail is None:  # a column whose writer could not be made: its whole line
            yield write(v)
        elif v is None:
            yield null
        else:
            yield head + write(v) + tail


_MISSING = object()


def _slow_line(head, col, v):
    return f"{head}{vv_value(v, col)} /* {vv_type(col, is_null=v is None)} */"
