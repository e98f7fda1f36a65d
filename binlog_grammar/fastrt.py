"""The few helpers generated/fast.py calls (see fastgen.py): records, bounds errors, bitmaps,
packed integers, and the two algorithm types."""
from __future__ import annotations

import struct

from .decimal import decimal_size, decode_decimal
from .jsonb import decode_json_binary as _json  # noqa: F401
from .pyvalues import ADAPTERS as _ADAPT  # noqa: F401
from .runtime import Bits, sv_sint_of, sv_uint_size, sv_uint_value


class FastPathError(ValueError):
    """Bytes the fast readers cannot read; the construct path then gives the precise error."""


# what a generated reader raises on bytes it cannot read (its own checks, or Python's on a
# short buffer or a missing case): the caller then parses with construct for the precise error
FAST_ERRORS = (FastPathError, IndexError, TypeError, KeyError, ValueError, AttributeError,
               struct.error)


def _Short(field, need, have):
    return FastPathError(f"field {field}: needs {need} bytes, {have} left")


def _Left(field, n):
    return FastPathError(f"field {field}: {n} byte(s) left over in its region")


def _NoTerm(field):
    return FastPathError(f"field {field}: no terminator before the end of its region")


def _Bad(field, got, want):
    return FastPathError(f"field {field}: {got!r} is not {want!r}")


def _NoCase(field, key):
    return FastPathError(f"field {field}: no case for {key!r}")


class _Rec(dict):
    """A parsed struct: a dict whose keys are also attributes (like construct's Container)."""

    __slots__ = ()

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self[name] = value


_LSB = [tuple(bool(b >> i & 1) for i in range(8)) for b in range(256)]


def _bitmap(buf, pos, end, n, msb, field):
    size = (n + 7) >> 3
    if pos + size > end:
        raise _Short(field, size, end - pos)
    if size == 1 and not msb:  # most tables: the NULL bits of up to 8 columns
        byte = buf[pos]
        bits = Bits(_LSB[byte][:n])
        bits.pad = byte >> n if n & 7 else 0
        return bits, pos + 1
    if not msb:
        bits = Bits()
        for byte in buf[pos:pos + size]:
            bits.extend(_LSB[byte])
        del bits[n:]
        bits.pad = buf[pos + size - 1] >> (n & 7) if n & 7 else 0
        return bits, pos + size
    v = int.from_bytes(buf[pos:pos + size], "big" if msb else "little")
    if msb:
        total = size * 8
        bits = Bits(bool(v >> (total - 1 - i) & 1) for i in range(n))
        bits.pad = v & ((1 << (total - n)) - 1)
    else:
        bits = Bits(bool(v >> i & 1) for i in range(n))
        bits.pad = v >> n
    return bits, pos + size


def _bits(value: int, n: int) -> Bits:
    """The Bits of an LSB-first bitmap of n bits read as one little-endian int."""
    bits = Bits(bool(value >> i & 1) for i in range(n))
    bits.pad = value >> n
    return bits


def _packed(buf, pos, end, field):
    if pos >= end:
        raise _Short(field, 1, 0)
    b = buf[pos]
    if b < 0xFB:
        return b, pos + 1
    n = {0xFC: 2, 0xFD: 3, 0xFE: 8}.get(b)
    if n is None or pos + 1 + n > end:
        raise FastPathError(f"field {field}: bad length-encoded integer")
    return int.from_bytes(buf[pos + 1:pos + 1 + n], "little"), pos + 1 + n


def _decimal(buf, pos, end, precision, scale, field):
    n = decimal_size(precision, scale)
    if pos + n > end:
        raise _Short(field, n, end - pos)
    return decode_decimal(buf[pos:pos + n], precision, scale), pos + n


def _svuint(buf, pos, end, field):
    """rt.SvUint, from a buffer."""
    if pos >= end:
        raise _Short(field, 1, 0)
    n = sv_uint_size(buf[pos])
    if pos + n > end:
        raise _Short(field, n, end - pos)
    return sv_uint_value(buf[pos:pos + n]), pos + n


def _svsint(buf, pos, end, field):
    u, pos = _svuint(buf, pos, end, field)
    return sv_sint_of(u), pos
