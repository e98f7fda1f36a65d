"""MySQL's binary JSON document <-> the Python value: reading a document by its offsets, writing
what MySQL's serializer writes, and JsonBinary, the construct class of the spec type `json_binary`.
The type codes and the container records are those of specs/types/json_binary.yaml, whose top
comment says what the spec language cannot state and is therefore done here. The layout and the
Python values are described in runtime/jsonb/__init__.py.

doc-ref: sql-common/json_binary.h, sql-common/json_binary.cc (serialize, parse_binary),
sql-common/json_dom.cc (Json_decimal, Json_datetime).
"""
from __future__ import annotations

import datetime as _dt
import decimal as _pydecimal
import math
import struct
from dataclasses import dataclass
from typing import NamedTuple

from construct import Construct, ExplicitError, SizeofError, stream_read_entire, stream_write

from ..decimal import decimal_size, decode_decimal, encode_decimal

__all__ = ["JsonBinary", "JsonBinaryError", "JsonOpaque", "MAX_DEPTH", "decode_json_binary",
           "encode_json_binary", "key_order", "to_utf8"]

# The layout stated in specs/types/json_binary.yaml, under its names. runtime/ may not import
# generated/ (binlog_grammar/README.md), so the numbers are repeated here;
# tests/specs/test_specs_json_binary.py checks them against the spec's enums and records.

#: enum json_value_type: the type byte of a document and of each value entry (JSONB_TYPE_*)
JSON_VALUE_TYPE = {0x00: "SMALL_OBJECT", 0x01: "LARGE_OBJECT", 0x02: "SMALL_ARRAY",
                   0x03: "LARGE_ARRAY", 0x04: "LITERAL", 0x05: "INT16", 0x06: "UINT16",
                   0x07: "INT32", 0x08: "UINT32", 0x09: "INT64", 0x0A: "UINT64", 0x0B: "DOUBLE",
                   0x0C: "STRING", 0x0F: "OPAQUE"}
(SMALL_OBJECT, LARGE_OBJECT, SMALL_ARRAY, LARGE_ARRAY, LITERAL, INT16, UINT16, INT32, UINT32,
 INT64, UINT64, DOUBLE, STRING, OPAQUE) = JSON_VALUE_TYPE
#: enum json_literal: the byte of a LITERAL value
JSON_LITERAL = {0x00: "NULL_LITERAL", 0x01: "TRUE_LITERAL", 0x02: "FALSE_LITERAL"}
NULL_LITERAL, TRUE_LITERAL, FALSE_LITERAL = JSON_LITERAL


class Form(NamedTuple):
    """The records of one form of container: json_small_header, json_small_key_entry,
    json_small_value_entry, or the json_large_ ones."""

    offset: int  # bytes of element_count, size, key_offset and offset_or_inline
    header: int  # json_*_header: element_count, size
    key_entry: int  # json_*_key_entry: key_offset, key_length
    value_entry: int  # json_*_value_entry: type, offset_or_inline
    limit: int  # the largest count, size or offset the form holds
    inlined: frozenset  # the value types stored in offset_or_inline itself (inlined_type)


KEY_LENGTH = 2  # key_length is a u16le in both forms
KEY_MAX = (1 << 8 * KEY_LENGTH) - 1
VALUE_TYPE = 1  # the type of a value entry is a u8


def _form(offset: int, inlined) -> Form:
    return Form(offset, 2 * offset, offset + KEY_LENGTH, VALUE_TYPE + offset,
                (1 << 8 * offset) - 1, frozenset(inlined))


SMALL = _form(2, {LITERAL, INT16, UINT16})  # u16le counts, sizes and offsets
LARGE = _form(4, {LITERAL, INT16, UINT16, INT32, UINT32})  # u32le

# MySQL field types an opaque value may carry (include/field_types.h, enum_field_types)
FIELD_TIMESTAMP, FIELD_DATE, FIELD_TIME, FIELD_DATETIME = 7, 10, 11, 12
FIELD_VAR_STRING, FIELD_NEWDECIMAL = 253, 246

#: Deepest nesting of arrays and objects MySQL accepts (JSON_DOCUMENT_MAX_DEPTH).
MAX_DEPTH = 100
_DECIMAL_MAX_PRECISION, _DECIMAL_MAX_SCALE = 65, 30  # DECIMAL_MAX_PRECISION / DECIMAL_MAX_SCALE
_TIME_MAX = _dt.timedelta(hours=838, minutes=59, seconds=59)  # TIME_MAX_VALUE
_INTS = {INT16: (2, True), UINT16: (2, False), INT32: (4, True), UINT32: (4, False),
         INT64: (8, True), UINT64: (8, False)}
_SCALAR_NAMES = {LITERAL: "literal", INT16: "int16", UINT16: "uint16", INT32: "int32",
                 UINT32: "uint32", INT64: "int64", UINT64: "uint64", DOUBLE: "double",
                 STRING: "string", OPAQUE: "opaque"}


class JsonBinaryError(ExplicitError):
    """A binary JSON document that cannot be parsed, or a value that cannot be built into one."""


@dataclass(frozen=True)
class JsonOpaque:
    """An opaque JSON value this module does not turn into a Python value: the MySQL field type
    (enum_field_types) and the raw data."""

    field_type: int
    data: bytes


def key_order(key_bytes: bytes):
    """MySQL's order of object keys: shorter first, then bytewise."""
    return len(key_bytes), key_bytes


def to_utf8(text: str, what: str) -> bytes:
    """A key or string as utf8mb4 bytes (`what` names it in the error of one that cannot be)."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise JsonBinaryError(f"{what} {text!r} cannot be stored as utf8mb4") from None


# ---------------------------------------------------------------------------------------------
# temporal and decimal opaque values

def _pack_temporal(value) -> tuple[int, int]:
    """(field type, packed int64) of a date, datetime or timedelta (my_time.cc,
    TIME_to_longlong_{date,datetime,time}_packed: integer part << 24 | microseconds)."""
    if isinstance(value, _dt.datetime):
        if value.tzinfo is not None:
            raise JsonBinaryError(f"cannot store an aware datetime ({value!r}) in JSON: MySQL "
                                  f"DATETIME has no time zone")
        ymd = ((value.year * 13 + value.month) << 5) | value.day
        hms = (value.hour << 12) | (value.minute << 6) | value.second
        return FIELD_DATETIME, (((ymd << 17) | hms) << 24) + value.microsecond
    if isinstance(value, _dt.date):
        ymd = ((value.year * 13 + value.month) << 5) | value.day
        return FIELD_DATE, (ymd << 17) << 24
    if abs(value) > _TIME_MAX:
        raise JsonBinaryError(f"{value!r} is outside MySQL's TIME range (-838:59:59 to 838:59:59)")
    micros = value // _dt.timedelta(microseconds=1)
    seconds, frac = divmod(abs(micros), 1_000_000)
    hms = (seconds // 3600 << 12) | (seconds // 60 % 60 << 6) | seconds % 60
    packed = (hms << 24) + frac
    return FIELD_TIME, -packed if micros < 0 else packed


def _unpack_temporal(field_type: int, data: bytes):
    """The date/datetime/timedelta of an opaque temporal value, or None when the bytes are not
    exactly what that value packs to (zero dates, out-of-range fields, stray bits)."""
    if len(data) != 8:
        return None
    packed = int.from_bytes(data, "little", signed=True)
    magnitude = abs(packed)
    frac, intpart = magnitude & 0xFFFFFF, magnitude >> 24
    try:
        if field_type == FIELD_TIME:
            hour, minute, second = (intpart >> 12) % 1024, (intpart >> 6) % 64, intpart % 64
            value = _dt.timedelta(hours=hour, minutes=minute, seconds=second, microseconds=frac)
            value = -value if packed < 0 else value
        else:
            ymd, hms = intpart >> 17, intpart & 0x1FFFF
            year, month, day = (ymd >> 5) // 13, (ymd >> 5) % 13, ymd & 31
            if field_type == FIELD_DATE:
                value = _dt.date(year, month, day)
            else:
                value = _dt.datetime(year, month, day, hms >> 12, (hms >> 6) & 63, hms & 63, frac)
        if _pack_temporal(value)[1] != packed:
            return None
    except (ValueError, OverflowError, JsonBinaryError):
        return None
    return value


def _decimal_precision_scale(value: _pydecimal.Decimal) -> tuple[int, int]:
    """Precision and scale of a Decimal as MySQL's my_decimal has them (intg + frac, frac): at
    least one integer digit, as string2decimal counts the 0 of "0.5"."""
    _sign, digits, exponent = value.as_tuple()
    scale = max(0, -exponent)
    return max(1, len(digits) + exponent) + scale, scale


def _opaque_value(field_type: int, data: bytes):
    if field_type == FIELD_NEWDECIMAL and len(data) >= 2:
        precision, scale = data[0], data[1]  # Json_decimal::get_binary: precision, scale, digits
        if precision > _DECIMAL_MAX_PRECISION or scale > _DECIMAL_MAX_SCALE:
            return JsonOpaque(field_type, data)  # no SQL DECIMAL value is that wide
        try:
            if decimal_size(precision, scale) == len(data) - 2:
                return decode_decimal(data[2:], precision, scale)
        except ValueError:
            pass
    elif field_type in (FIELD_DATE, FIELD_TIME, FIELD_DATETIME, FIELD_TIMESTAMP):
        value = _unpack_temporal(field_type, data)
        if value is not None:
            return value
    return JsonOpaque(field_type, data)


# ---------------------------------------------------------------------------------------------
# reading

def _error(message: str):
    raise JsonBinaryError(message)


class _Reader:
    """Reads values by offset, checking each against the bounds of its container."""

    def __init__(self, data: bytes):
        self.data = data

    def uint(self, pos: int, size: int) -> int:
        return int.from_bytes(self.data[pos:pos + size], "little")

    def value(self, vtype: int, pos: int, end: int, depth: int):
        """The value of type `vtype` whose bytes start at `pos`; `end` bounds the region it
        lives in. Returns (value, bytes it takes)."""
        if vtype in (SMALL_OBJECT, LARGE_OBJECT, SMALL_ARRAY, LARGE_ARRAY):
            return self.container(vtype, pos, end, depth + 1)
        return self.scalar(vtype, pos, end)

    def scalar(self, vtype: int, pos: int, end: int):
        data = self.data
        name = _SCALAR_NAMES.get(vtype)
        if name is None:
            _error(f"unknown JSON value type 0x{vtype:02X} at byte {pos}")
        if vtype == LITERAL:
            if end - pos < 1:
                _error(f"literal at byte {pos} is cut short")
            lit = data[pos]
            if lit not in (NULL_LITERAL, TRUE_LITERAL, FALSE_LITERAL):
                _error(f"unknown JSON literal 0x{lit:02X} at byte {pos}")
            return {NULL_LITERAL: None, TRUE_LITERAL: True, FALSE_LITERAL: False}[lit], 1
        if vtype in _INTS:
            size, signed = _INTS[vtype]
            if end - pos < size:
                _error(f"{name} at byte {pos} needs {size} bytes, {end - pos} left")
            return int.from_bytes(data[pos:pos + size], "little", signed=signed), size
        if vtype == DOUBLE:
            if end - pos < 8:
                _error(f"double at byte {pos} needs 8 bytes, {end - pos} left")
            return struct.unpack_from("<d", data, pos)[0], 8
        start = pos
        if vtype == OPAQUE:
            if end - pos < 1:
                _error(f"opaque value at byte {pos} is cut short")
            field_type = data[pos]
            pos += 1
        length, nlen = self.varlen(pos, end, name)
        pos += nlen
        if end - pos < length:
            _error(f"{name} at byte {start} claims {length} bytes, {end - pos} left")
        raw = bytes(data[pos:pos + length])
        taken = pos + length - start
        if vtype == STRING:
            return raw.decode("utf-8", "surrogateescape"), taken
        return _opaque_value(field_type, raw), taken

    def varlen(self, pos: int, end: int, what: str) -> tuple[int, int]:
        """A data-length (json_binary.cc, read_variable_length): at most 5 bytes, < 2**32."""
        value = 0
        for i in range(min(5, end - pos)):
            byte = self.data[pos + i]
            value |= (byte & 0x7F) << (7 * i)
            if not byte & 0x80:
                if value > 0xFFFFFFFF:
                    break
                return value, i + 1
        _error(f"{what} at byte {pos} has a bad or cut-short length")

    def container(self, vtype: int, pos: int, end: int, depth: int):
        large = vtype in (LARGE_OBJECT, LARGE_ARRAY)
        is_object = vtype in (SMALL_OBJECT, LARGE_OBJECT)
        kind = ("large " if large else "small ") + ("object" if is_object else "array")
        if depth > MAX_DEPTH:
            _error(f"JSON document nested deeper than {MAX_DEPTH} levels (at byte {pos})")
        osize, head, key_entry, value_entry, _limit, inlined = LARGE if large else SMALL
        if end - pos < head:
            _error(f"{kind} at byte {pos} is cut short: its header needs {head} bytes, "
                   f"{end - pos} left")
        count, size = self.uint(pos, osize), self.uint(pos + osize, osize)
        if size > end - pos:
            _error(f"{kind} at byte {pos} claims {size} bytes, {end - pos} left")
        header = head + count * ((key_entry if is_object else 0) + value_entry)
        if header > size:
            _error(f"{kind} at byte {pos} claims {count} members, too many for its {size} bytes")
        values_at = pos + head + (count * key_entry if is_object else 0)
        out = []
        for i in range(count):
            entry = values_at + i * value_entry
            etype = self.data[entry]
            if etype in inlined:
                value, _n = self.scalar(etype, entry + VALUE_TYPE, entry + value_entry)
            else:
                offset = self.uint(entry + VALUE_TYPE, osize)
                if not header <= offset < size:
                    _error(f"{kind} at byte {pos}: member {i} has offset {offset}, outside "
                           f"its value area ({header} to {size})")
                value, _n = self.value(etype, pos + offset, pos + size, depth)
            out.append(value)
        if not is_object:
            return out, size
        obj = {}
        for i in range(count):
            entry = pos + head + i * key_entry
            offset, length = self.uint(entry, osize), self.uint(entry + osize, KEY_LENGTH)
            if offset < header or offset + length > size:
                _error(f"{kind} at byte {pos}: key {i} ({length} bytes at offset {offset}) lies "
                       f"outside its key area ({header} to {size})")
            key = bytes(self.data[pos + offset:pos + offset + length]).decode("utf-8", "surrogateescape")
            if key in obj:
                _error(f"{kind} at byte {pos} has the key {key!r} twice")
            obj[key] = out[i]
        return obj, size


def decode_json_binary(data: bytes):
    """The Python value of a whole binary JSON document. The empty document is None (MySQL reads
    0 bytes as the JSON null literal: json_binary.cc, parse_binary)."""
    if len(data) == 0:
        return None
    value, taken = _Reader(data).value(data[0], 1, len(data), 0)
    if 1 + taken != len(data):
        _error(f"{len(data) - 1 - taken} byte(s) after the end of the JSON document")
    return value


# ---------------------------------------------------------------------------------------------
# writing

class _TooBig(Exception):
    """An offset or size does not fit the small format: retry with the large one."""


def _varlen(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _inline(value, large: bool):
    """(type, number) when MySQL stores `value` in its value entry (attempt_inline_value)."""
    if value is None:
        return LITERAL, NULL_LITERAL
    if isinstance(value, bool):
        return LITERAL, TRUE_LITERAL if value else FALSE_LITERAL
    if isinstance(value, int):
        if -(1 << 15) <= value < (1 << 15):
            return INT16, value
        if large and -(1 << 31) <= value < (1 << 31):
            return INT32, value
    return None


def _scalar_bytes(value) -> tuple[int, bytes]:
    """(type, bytes) of a scalar (json_binary.cc, serialize_json_value)."""
    if value is None:
        return LITERAL, bytes([NULL_LITERAL])
    if isinstance(value, bool):
        return LITERAL, bytes([TRUE_LITERAL if value else FALSE_LITERAL])
    if isinstance(value, int):
        if -(1 << 15) <= value < (1 << 15):
            return INT16, value.to_bytes(2, "little", signed=True)
        if -(1 << 31) <= value < (1 << 31):
            return INT32, value.to_bytes(4, "little", signed=True)
        if -(1 << 63) <= value < (1 << 63):
            return INT64, value.to_bytes(8, "little", signed=True)
        if 0 <= value < (1 << 64):
            return UINT64, value.to_bytes(8, "little")
        raise JsonBinaryError(f"integer {value} does not fit MySQL's JSON integers (int64/uint64)")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise JsonBinaryError(f"{value!r} cannot be stored in JSON (MySQL accepts finite doubles only)")
        return DOUBLE, struct.pack("<d", value)
    if isinstance(value, str):
        raw = to_utf8(value, "string")
        if len(raw) > 0xFFFFFFFF:
            raise JsonBinaryError("string longer than 4 GiB")
        return STRING, _varlen(len(raw)) + raw
    if isinstance(value, _pydecimal.Decimal):
        if not value.is_finite():
            raise JsonBinaryError(f"{value!r} cannot be stored in JSON")
        precision, scale = _decimal_precision_scale(value)
        if precision > _DECIMAL_MAX_PRECISION or scale > _DECIMAL_MAX_SCALE:
            raise JsonBinaryError(f"{value!r} needs DECIMAL({precision},{scale}); MySQL allows "
                                  f"at most DECIMAL({_DECIMAL_MAX_PRECISION},{_DECIMAL_MAX_SCALE})")
        value = JsonOpaque(FIELD_NEWDECIMAL, bytes([precision, scale])
                           + encode_decimal(value, precision, scale))
    elif isinstance(value, (_dt.date, _dt.timedelta)):  # datetime is a date
        field_type, packed = _pack_temporal(value)
        value = JsonOpaque(field_type, packed.to_bytes(8, "little", signed=True))
    if isinstance(value, JsonOpaque):
        if not (isinstance(value.field_type, int) and 0 <= value.field_type <= 255):
            raise JsonBinaryError(f"opaque field type {value.field_type!r} is not a byte")
        data = bytes(value.data)
        return OPAQUE, bytes([value.field_type]) + _varlen(len(data)) + data
    raise JsonBinaryError(f"a {type(value).__name__} cannot be stored in JSON")


def _append_value(dest: bytearray, value, depth: int, small_parent: bool) -> int:
    """Append `value` to dest; return its type. A container goes small if it can; a small
    container holding one that cannot is too big itself (serialize_json_value)."""
    if isinstance(value, (dict, list, tuple)):
        is_object = isinstance(value, dict)
        start = len(dest)
        try:
            _append_container(dest, value, is_object, False, depth)
            return SMALL_OBJECT if is_object else SMALL_ARRAY
        except _TooBig:
            if small_parent:
                raise
            del dest[start:]
        _append_container(dest, value, is_object, True, depth)
        return LARGE_OBJECT if is_object else LARGE_ARRAY
    vtype, data = _scalar_bytes(value)
    dest += data
    return vtype


def _append_container(dest: bytearray, value, is_object: bool, large: bool, depth: int) -> None:
    """serialize_json_object / serialize_json_array."""
    depth += 1
    if depth > MAX_DEPTH:
        raise JsonBinaryError(f"JSON value nested deeper than {MAX_DEPTH} levels")
    osize, head, key_entry, value_entry, limit, _inlined = LARGE if large else SMALL

    def fits(n):
        if n <= limit:
            return True
        if large:
            raise JsonBinaryError("JSON document larger than 4 GiB")
        raise _TooBig()

    if is_object:
        keyed = []
        for key, member in value.items():
            if not isinstance(key, str):
                raise JsonBinaryError(f"JSON object keys must be str, not {type(key).__name__}")
            keyed.append((to_utf8(key, "key"), member))
        keyed.sort(key=lambda kv: key_order(kv[0]))
        for (a, _), (b, _) in zip(keyed, keyed[1:]):
            if a == b:
                raise JsonBinaryError(f"two keys are the same utf8mb4 bytes {a!r}")
        members = [m for _, m in keyed]
    else:
        members = list(value)
    count = len(members)
    fits(count)
    start = len(dest)
    dest += count.to_bytes(osize, "little") + bytes(head - osize)  # element_count, size
    if is_object:
        offset = head + count * (key_entry + value_entry)
        for key, _ in keyed:
            if len(key) > KEY_MAX:
                raise JsonBinaryError(f"JSON key of {len(key)} bytes; keys are limited to 65535")
            fits(offset)
            dest += offset.to_bytes(osize, "little") + len(key).to_bytes(KEY_LENGTH, "little")
            offset += len(key)
    entry = len(dest)
    dest += bytes(count * value_entry)
    if is_object:
        for key, _ in keyed:
            dest += key
    mask = limit
    for member in members:
        inline = _inline(member, large)
        if inline is not None:
            dest[entry] = inline[0]
            dest[entry + VALUE_TYPE:entry + value_entry] = (inline[1] & mask).to_bytes(osize, "little")
        else:
            offset = len(dest) - start
            fits(offset)
            dest[entry + VALUE_TYPE:entry + value_entry] = offset.to_bytes(osize, "little")
            dest[entry] = _append_value(dest, member, depth, small_parent=not large)
        entry += value_entry
    size = len(dest) - start
    fits(size)
    dest[start + osize:start + head] = size.to_bytes(osize, "little")


def encode_json_binary(value) -> bytes:
    """MySQL's binary JSON document for a Python value (json_binary.cc, serialize)."""
    dest = bytearray(1)
    dest[0] = _append_value(dest, value, 0, small_parent=False)
    return bytes(dest)


class JsonBinary(Construct):
    """A MySQL binary JSON document taking every byte of its stream (use it inside a sized
    region). Parses to the Python value (see the module docstring) and builds one back; the
    empty document (0 bytes) parses to None, as MySQL reads it as the JSON null literal."""

    def _parse(self, stream, context, path):
        data = stream_read_entire(stream, path)
        try:
            return decode_json_binary(data)
        except JsonBinaryError as e:
            raise JsonBinaryError(str(e), path=path) from None

    def _build(self, obj, stream, context, path):
        try:
            data = encode_json_binary(obj)
        except JsonBinaryError as e:
            raise JsonBinaryError(str(e), path=path) from None
        except RecursionError:
            raise JsonBinaryError("JSON value nested too deeply", path=path) from None
        stream_write(stream, data, len(data), path)
        return obj

    def _sizeof(self, context, path):
        raise SizeofError("a JSON document has no fixed size", path=path)
