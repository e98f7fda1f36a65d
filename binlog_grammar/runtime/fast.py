"""The few helpers the fast readers call (generated/fast.py, written by codegen.python, and the
per-table readers of codegen.table): records, the errors of bytes they cannot read, a column's
metadata, bitmaps, packed and serialization-library integers (their byte forms are runtime.ints
and runtime.bitmaps, as for construct), the `as:` adapters, and the two algorithm types."""
from __future__ import annotations

import struct

from .bitmaps import bits_at
from .decimal import decimal_size, decode_decimal
from .ints import packed_size, packed_value, sv_sint_of, sv_uint_size, sv_uint_value
from .jsonb import JsonBinaryError, decode_json_binary
from .values import ADAPTERS, codec_of


class FastPathError(ValueError):
    """Bytes the fast readers cannot read; the construct path then gives the precise error."""


# What a generated reader raises on bytes it cannot read: FastPathError only, from its own checks
# and from the helpers below, which turn the data errors of what they call (a DECIMAL's digits, a
# JSON document, a value an `as:` adapter refuses) into it where the bytes are read. The caller
# then parses with construct for the precise error. Anything else (KeyError, TypeError,
# AttributeError, ...) is a bug in a generated reader and must surface, not be re-parsed.
FAST_ERRORS = (FastPathError,)


# the errors a reader raises, each naming the field whose bytes it cannot read

def too_short(field, need, have):
    return FastPathError(f"field {field}: needs {need} bytes, {have} left")


def left_over(field, n):
    return FastPathError(f"field {field}: {n} byte(s) left over in its region")


def no_terminator(field):
    return FastPathError(f"field {field}: no terminator before the end of its region")


def not_expected(field, got, want):
    return FastPathError(f"field {field}: {got!r} is not {want!r}")


def no_case(field, key):
    return FastPathError(f"field {field}: no case for {key!r}")


def bad_count(field, n):
    return FastPathError(f"field {field}: {n} elements")


def meta_number(col):
    """A column's metadata number (a length, a size, an fsp), from its TABLE_MAP_EVENT, which may
    give none (None) or, damaged, another type's record."""
    meta = col["meta"]
    if not isinstance(meta, int):
        raise FastPathError(f"column {col.get('name')}: the TABLE_MAP_EVENT gives {meta!r}, not "
                            f"a number, as its metadata")
    return meta


def meta_field(col, key):
    """A field of a column's metadata record (precision, max_length, real type, ...)."""
    meta = col["meta"]
    if not isinstance(meta, dict) or key not in meta:
        raise FastPathError(f"column {col.get('name')}: the TABLE_MAP_EVENT gives {meta!r} as its "
                            f"metadata, without {key}")
    return meta[key]


def empty_element(field, i):
    return FastPathError(f"field {field}: element {i} is 0 bytes long, so the elements never end")


# the data errors of what the readers call on bytes they have read: a value these refuse is bad
# input (a month 13 in a TIMESTAMP's microseconds, a UTF-16 string cut in the middle of a
# character, a compressed column that does not inflate); any other exception is a bug
_VALUE_ERRORS = (ValueError, OverflowError)


class _Checked:
    """An `as:` adapter (pyvalues.ADAPTERS) whose decode turns the values it refuses into
    FastPathError; bind() likewise for the readers specialised per table."""

    __slots__ = ("adapter", "name")

    def __init__(self, adapter):
        self.adapter = adapter
        self.name = adapter.name

    def decode(self, obj, col):
        try:
            return self.adapter.decode(obj, col)
        except _VALUE_ERRORS as e:
            raise FastPathError(f"{self.name} value: {e}") from None

    def bind(self, col):
        decode = self.adapter.bind(col)
        name = self.name
        if name in _NEVER_REFUSE or name == "text" and codec_of(col) in _TOTAL_CODECS:
            return decode  # the hot path of most columns: no wrapper call per value

        def checked(obj):
            try:
                return decode(obj)
            except _VALUE_ERRORS as e:
                raise FastPathError(f"{name} value: {e}") from None

        return checked


# adapters whose decode takes any value the spec reads (dates out of range become strings) and
# codecs that decode any bytes (surrogateescape, MySQL's latin1 gaps): a table reader calls
# them unwrapped; a change that makes one refuse values must take it out of these sets (the
# fuzz tests would show the ValueError)
_NEVER_REFUSE = {"year", "date", "datetime", "time", "enum", "set", "geometry", "json", "vector"}
_TOTAL_CODECS = {None, "utf-8", "cp1252", "ascii"}

CHECKED_ADAPTERS = {name: _Checked(a) for name, a in ADAPTERS.items()}


def read_json(data):
    """A MySQL binary JSON document (runtime.jsonb); a document it refuses is FastPathError."""
    try:
        return decode_json_binary(data)
    except (JsonBinaryError, IndexError, struct.error, RecursionError) as e:
        raise FastPathError(f"JSON document: {e}") from None


class Record(dict):
    """A parsed struct: a dict whose keys are also attributes (like construct's Container)."""

    __slots__ = ()

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self[name] = value


def read_bitmap(buf, pos, end, n, msb, field):
    """A bitmap of n bits (runtime.bitmaps) -> (Bits, pos after it)."""
    size = (n + 7) >> 3
    if n < 0 or pos + size > end:
        raise too_short(field, size, end - pos)
    return bits_at(buf, pos, n, msb), pos + size


def read_packed(buf, pos, end, field):
    """A packed integer (runtime.ints) -> (value, pos after it)."""
    if pos >= end:
        raise too_short(field, 1, 0)
    b = buf[pos]
    if b < 0xFB:
        return b, pos + 1
    n = packed_size(b)
    if not n or pos + n > end:
        raise FastPathError(f"field {field}: bad length-encoded integer")
    return packed_value(buf[pos:pos + n]), pos + n


def read_decimal(buf, pos, end, precision, scale, field):
    try:  # a precision and scale (from a TABLE_MAP's bytes), or digits, a DECIMAL cannot hold
        n = decimal_size(precision, scale)
        if pos + n > end:
            raise too_short(field, n, end - pos)
        return decode_decimal(buf[pos:pos + n], precision, scale), pos + n
    except ValueError as e:
        raise FastPathError(f"field {field}: {e}") from None


def read_sv_uint(buf, pos, end, field):
    """A serialization-library unsigned integer (runtime.ints, rt.SvUint) -> (value, pos after it)."""
    if pos >= end:
        raise too_short(field, 1, 0)
    n = sv_uint_size(buf[pos])
    if pos + n > end:
        raise too_short(field, n, end - pos)
    return sv_uint_value(buf[pos:pos + n]), pos + n


def read_sv_sint(buf, pos, end, field):
    """Its signed form (rt.SvSint) -> (value, pos after it)."""
    u, pos = read_sv_uint(buf, pos, end, field)
    return sv_sint_of(u), pos
