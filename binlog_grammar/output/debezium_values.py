"""Column values as the Debezium MySQL/MariaDB connector writes them in its change events (JSON
converter), under its default settings and the options users set: the forms of
FORMS["debezium"] (runtime/forms.py), each made once per column (`FORM(col, settings) ->
write(value)`, for a value that is not None).

| form | column | value (default; with options) |
|---|---|---|
| int | TINYINT .. INT (signed or not) | the number |
| year | YEAR | the year; YEAR 0000 is 1900 (the connector's binlog reader adds 1900 to the stored byte) |
| bigint | BIGINT | the number; BIGINT UNSIGNED above 2^63-1 wraps to a negative long (bigint.unsigned.handling.mode=long, the default) or is a Decimal of scale 0 (precise: the base64 of its big-endian two's-complement bytes) |
| decimal | DECIMAL | precise (default): base64 of the unscaled value's shortest big-endian two's-complement bytes at the column's scale; string: its digits at the column's scale; double: a number |
| float32 / float64 | FLOAT / DOUBLE | the number (FLOAT as the shortest decimal of its 32-bit value) |
| epoch_days | DATE | days since 1970-01-01 |
| datetime | DATETIME | milliseconds since the epoch (fsp 0-3) or microseconds (fsp 4-6) read as UTC; time.precision.mode=connect: milliseconds |
| zoned_timestamp | TIMESTAMP | ISO-8601 UTC text ending in Z, the fraction written to the column's fsp digits |
| micro_time | TIME | microseconds (adaptive_time_microseconds, the default; adaptive: milliseconds when fsp <= 3); connect: milliseconds, null for a negative TIME or one of 24 hours or more |
| bits | BIT | BIT(1) a boolean; BIT(n) base64 of its ceil(n/8) bytes, least significant first |
| enum / enum_set | ENUM / SET | the member; the members in definition order joined by "," |
| geometry | GEOMETRY | {"wkb": base64, "srid": N, null for 0}; a POINT column (GEOMETRY_TYPE metadata) {"x", "y", "wkb", "srid"} |
| json | JSON | the document's text (MySQL's) |
| string | CHAR, VARCHAR, TEXT, BINARY, BLOB | text (bytes that do not decode as U+FFFD, as Java decodes); binary: base64 (binary.handling.mode bytes or base64), base64-url-safe, hex |
| value | anything else | by its Python value |

Zero and invalid dates (kept as MySQL's text by the reader) are null, as the connector writes
them (its schema makes temporal fields optional). enable.time.adjuster (default true) reads a
DATE/DATETIME year 0-99 as a two-digit year.
"""
from __future__ import annotations

import base64
import datetime as dt
import decimal
import functools
import math
import struct
from dataclasses import dataclass
from typing import Optional

from ..runtime.values import CHARSET_CODECS, Geometry, codec_of
from .forms import form_name, plan

EPOCH = dt.datetime(1970, 1, 1)
_EXACT = decimal.Context(prec=200)  # DECIMAL has at most 65 digits: scaling never rounds
EPOCH_DATE = dt.date(1970, 1, 1)
_ZERO_TS = "1970-01-01T00:00:00Z"


@dataclass(frozen=True)
class Settings:
    """The connector properties that change how values are written."""

    decimal_mode: str = "precise"  # decimal.handling.mode: precise | string | double
    time_mode: str = "adaptive_time_microseconds"  # time.precision.mode (also adaptive, connect)
    binary_mode: str = "bytes"  # binary.handling.mode: bytes | base64 | base64-url-safe | hex
    bigint_mode: str = "long"  # bigint.unsigned.handling.mode: long | precise
    time_adjuster: bool = True  # enable.time.adjuster: years 0-69 -> 20yy, 70-99 -> 19yy


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unscaled_bytes(n: int) -> bytes:
    """The shortest big-endian two's-complement bytes of n (Java's BigInteger.toByteArray)."""
    size = (n + (n < 0)).bit_length() // 8 + 1
    return n.to_bytes(size, "big", signed=True)


def decimal_bytes(v: decimal.Decimal, scale: int) -> str:
    """A DECIMAL as Kafka Connect's Decimal in JSON: base64 of its unscaled value's bytes."""
    return _b64(unscaled_bytes(int(_EXACT.scaleb(v, scale).to_integral_value(decimal.ROUND_HALF_UP))))


def float32(v: float):
    """The shortest decimal that reads back as the same 32-bit float (what Java's
    Float.toString gives, as a JSON number)."""
    if not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    target = struct.pack("<f", v)
    for digits in range(1, 10):
        cand = float(f"{v:.{digits}g}")
        try:
            if struct.pack("<f", cand) == target:
                return cand
        except OverflowError:  # rounded past the largest float
            continue
    return v


def nullable(col) -> bool:
    n = col.get("nullable")
    return True if n is None else bool(n)


def _zero(col, epoch_value):
    """A zero or invalid date (the reader's MySQL text): null, as the connector reads it, but
    in a NOT NULL column, whose field is required, the epoch (its required field's fallback)."""
    return None if nullable(col) else epoch_value


def adjust_year(v, s):
    """enable.time.adjuster: a DATE/DATETIME year 0-99 read as a two-digit year (0-69 -> 2000+,
    70-99 -> 1900+), as the connector's MySqlValueConverters.adjustTemporal does."""
    if s.time_adjuster and v.year < 100:
        try:
            return v.replace(year=v.year + (2000 if v.year < 70 else 1900))
        except ValueError:  # 29 February of a year the added century makes common
            return v
    return v


def fsp_of(col) -> int:
    f = col.get("fsp")
    return int(f) if f else 0


def _int(col, s):
    return lambda v: v if type(v) is int else _other(v, s)


def _year(col, s):
    # the connector's binlog reader gives 1900 + the stored byte: YEAR 0000 is 1900
    return lambda v: (v or 1900) if type(v) is int else _other(v, s)


def _bigint(col, s):
    unsigned = bool(col.get("unsigned"))

    def write(v):
        if type(v) is not int:
            return _other(v, s)
        if unsigned and s.bigint_mode == "precise":
            return _b64(unscaled_bytes(v))
        if v >= 1 << 63:
            return v - (1 << 64)
        return v
    return write


def _decimal(col, s):
    meta = col.get("meta")
    scale = int(meta.get("scale", 0)) if hasattr(meta, "get") else 0
    quantum = decimal.Decimal(1).scaleb(-scale)

    def write(v):
        if not isinstance(v, decimal.Decimal):
            return _other(v, s)
        if s.decimal_mode == "string":
            return format(_EXACT.quantize(v, quantum), "f")
        if s.decimal_mode == "double":
            return float(v)
        return decimal_bytes(v, scale)
    return write


def _float32(col, s):
    return lambda v: float32(v) if type(v) is float else _other(v, s)


def as_double(write):
    """A FLOAT column's writer where the connector's schema is a double (FLOAT(M,D)): the
    32-bit value the binlog holds, written as the double it is (1.1 is 1.100000023841858)."""
    return lambda v: v if type(v) is float and math.isfinite(v) else write(v)


def _float64(col, s):
    return lambda v: (v if math.isfinite(v) else float32(v)) if type(v) is float else _other(v, s)


def _epoch_days(col, s):
    def write(v):
        if type(v) is dt.date:
            return (adjust_year(v, s) - EPOCH_DATE).days
        return _zero(col, 0) if isinstance(v, str) else _other(v, s)
    return write


def _micros(v: dt.datetime) -> int:
    d = v - EPOCH
    return (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds


def _datetime(col, s):
    micro = s.time_mode != "connect" and fsp_of(col) > 3

    def write(v):
        if type(v) is dt.datetime:
            us = _micros(adjust_year(v.replace(tzinfo=None), s))
            return us if micro else us // 1000
        return _zero(col, 0) if isinstance(v, str) else _other(v, s)
    return write


def zoned_text(v: dt.datetime, fsp: int) -> str:
    """A TIMESTAMP as io.debezium.time.ZonedTimestamp: ISO-8601 in UTC, fsp fraction digits."""
    if v.tzinfo is not None:
        v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
    text = v.strftime("%Y-%m-%dT%H:%M:%S") if v.year >= 1000 else (
        f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}:{v.second:02d}")
    if fsp:
        text += "." + f"{v.microsecond:06d}"[:fsp]
    return text + "Z"


def _zoned_timestamp(col, s):
    fsp = fsp_of(col)

    def write(v):
        if type(v) is dt.datetime:
            return zoned_text(v, fsp)
        return _zero(col, _ZERO_TS) if isinstance(v, str) else _other(v, s)
    return write


def _micro_time(col, s):
    millis = s.time_mode == "connect" or (s.time_mode == "adaptive" and fsp_of(col) <= 3)

    def write(v):
        if type(v) is not dt.timedelta:
            return _other(v, s)
        us = (v.days * 86400 + v.seconds) * 1_000_000 + v.microseconds
        if s.time_mode == "connect" and not 0 <= us < 86_400_000_000:
            return None  # Kafka Connect's Time holds a time of day: the connector writes null
        return us // 1000 if millis else us
    return write


def _bits(col, s):
    meta = col.get("meta")
    width = (int(meta.get("bytes", 0)) * 8 + int(meta.get("bits", 0))) if hasattr(meta, "get") else 0

    def write(v):
        if type(v) is not int:
            return _other(v, s)
        if width == 1:
            return bool(v)
        size = max(1, (width + 7) // 8)
        return _b64(v.to_bytes(size, "little"))
    return write


def _enum(col, s):
    return lambda v: v if isinstance(v, str) else _other(v, s)


def _enum_set(col, s):
    order = {m: i for i, m in enumerate(col.get("set_values") or ())}

    def write(v):
        if isinstance(v, (set, frozenset)):
            return ",".join(sorted(v, key=lambda m: (order.get(m, len(order)), m)))
        return _other(v, s)
    return write


GEOM_POINT = 1  # the spatial type code of POINT in GEOMETRY_TYPE (Field::geometry_type)


def point_xy(wkb: bytes):
    """x and y of a WKB point (OGC well-known binary, not a binlog layout: a byte order, the
    type, two doubles), or None when the bytes are not one."""
    if len(wkb) < 21 or wkb[0] not in (0, 1):
        return None
    order = "<" if wkb[0] == 1 else ">"
    if struct.unpack(order + "I", wkb[1:5])[0] != GEOM_POINT:
        return None
    return struct.unpack(order + "dd", wkb[5:21])


def _geometry(col, s):
    point = col.get("geometry_type") == GEOM_POINT

    def write(v):
        if not isinstance(v, Geometry):
            return _other(v, s)
        wkb = bytes(v.wkb)
        xy = point_xy(wkb) if point else None
        if xy is not None:  # io.debezium.data.geometry.Point
            return {"x": xy[0], "y": xy[1], "wkb": _b64(wkb), "srid": v.srid or None}
        return {"wkb": _b64(wkb), "srid": v.srid or None}
    return write


def _json(col, s):
    def write(v):
        if hasattr(v, "diffs"):  # a partial update without its before value: not a document
            return None
        from ..runtime.jsonb import json_text

        return json_text(v) if not isinstance(v, str) else v
    return write


def binary_text(data: bytes, mode: str) -> str:
    """Binary bytes as binary.handling.mode writes them in JSON."""
    if mode == "hex":
        return data.hex()
    if mode == "base64-url-safe":
        return base64.urlsafe_b64encode(data).decode("ascii")
    return _b64(data)  # bytes (the JSON converter's base64) and base64


def text_value(v: str) -> str:
    """Text as Java holds it: bytes its charset does not decode (kept by the reader as
    surrogate escapes) become U+FFFD."""
    if v.isascii():
        return v
    try:
        v.encode("utf-8")
        return v
    except UnicodeEncodeError:
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in v)


def _string(col, s, server_charset=None):
    binary = col.get("charset") == "binary"
    known = col.get("charset") is not None
    assumed = CHARSET_CODECS.get(server_charset or "", "utf-8")

    def write(v):
        if isinstance(v, str):
            return text_value(v)
        if isinstance(v, (bytes, bytearray, memoryview)):
            if not binary and not known:  # no charset metadata: the server's (as dump's)
                return bytes(v).decode(assumed, "replace")
            return binary_text(bytes(v), s.binary_mode)
        return _other(v, s)
    return write


def _other(v, s):
    """A value of an unexpected Python type, by its type."""
    if v is None or isinstance(v, (bool, int, str)):
        return text_value(v) if isinstance(v, str) else v
    if isinstance(v, float):
        return v if math.isfinite(v) else float32(v)
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, (bytes, bytearray, memoryview)):
        return binary_text(bytes(v), s.binary_mode)
    if isinstance(v, dt.datetime):
        us = _micros(v.replace(tzinfo=None))
        return zoned_text(v, 6) if v.tzinfo is not None else us // 1000
    if isinstance(v, dt.date):
        return (v - EPOCH_DATE).days
    if isinstance(v, dt.timedelta):
        return (v.days * 86400 + v.seconds) * 1_000_000 + v.microseconds
    if isinstance(v, Geometry):
        return {"wkb": _b64(bytes(v.wkb)), "srid": v.srid or None}
    if isinstance(v, (set, frozenset)):
        return ",".join(sorted(str(x) for x in v))
    return text_value(str(v))


def _value(col, s):
    return lambda v: _other(v, s)


DEBEZIUM_FORMS = {
    "int": _int, "year": _year, "bigint": _bigint, "decimal": _decimal, "float32": _float32,
    "float64": _float64, "epoch_days": _epoch_days, "datetime": _datetime,
    "zoned_timestamp": _zoned_timestamp, "micro_time": _micro_time, "bits": _bits,
    "enum": _enum, "enum_set": _enum_set, "geometry": _geometry, "json": _json,
    "string": _string, "value": _value,
}


def form_of(col) -> str:
    return form_name("debezium", col.get("real_type", col.get("type")))


def _entry(col, settings, server_charset):
    form = form_of(col)
    make = DEBEZIUM_FORMS[form]
    write = make(col, settings, server_charset) if form == "string" else make(col, settings)
    return col.name, write


def writer_of(col, settings: Settings, server_charset: Optional[str] = None):
    """One column's writer, write(value) for a value that is not None."""
    return _entry(col, settings, server_charset)[1]


def writers_of(columns, settings: Settings, server_charset: Optional[str] = None) -> dict:
    """Each column's writer (name -> write(value)), by its form: the table's plan."""
    return plan("debezium", columns, lambda c: _entry(c, settings, server_charset),
                (settings, server_charset), dict)


def image(values: Optional[dict], columns, settings: Settings,
          server_charset: Optional[str] = None, writers: Optional[dict] = None) -> Optional[dict]:
    """A row image as the connector's `before`/`after`: each column by its form (its writers
    made once per table, settings and server charset: `writers_of`)."""
    if values is None:
        return None
    if writers is None:
        writers = writers_of(columns, settings, server_charset)
    get = writers.get
    return {name: None if v is None else get(name, _other_of(settings))(v)
            for name, v in values.items()}


@functools.lru_cache(maxsize=64)
def _other_of(settings):
    return lambda v: _other(v, settings)
