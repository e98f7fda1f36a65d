"""MySQL's packed binary DECIMAL (NEWDECIMAL), as a construct class that parses and builds.

doc-ref: strings/decimal.cc, decimal2bin / bin2decimal / decimal_bin_size (mysql-server)

A DECIMAL(p, s) value takes ``decimal_size(p, s)`` bytes. Its p - s integer digits and its s
fraction digits are cut into groups of nine decimal digits; each group is a big-endian binary
number::

    [leading partial integer group]  intg % 9 digits in dig2bytes[intg % 9] bytes
    [full integer groups]            9 digits in 4 bytes each
    [full fraction groups]           9 digits in 4 bytes each
    [trailing partial fraction group] the next s % 9 digits in dig2bytes[s % 9] bytes

(intg = p - s; dig2bytes = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4].) A negative number then has every
byte inverted, and finally the top bit of the first byte is flipped, so the bit is set for a
non-negative number and the bytes of one (p, s) compare with memcmp like the numbers.

decimal.cc's own example, DECIMAL(14,4): 1234567890.1234 is ``81 0D FB 38 D2 04 D2`` and
-1234567890.1234 is ``7E F2 04 C7 2D FB 2D``.

Zero: MySQL never stores a negative zero (string2decimal and the arithmetic drop its sign), so
building any zero writes the positive form. Bytes holding a negative zero (possible only when
written by something else) parse as bin2decimal reads them: ``Decimal('-0.00')`` when the scale is
not 0, ``Decimal('0')`` for scale 0; they do not rebuild to the same bytes.
"""
from __future__ import annotations

import decimal as _pydecimal
import functools

from construct import Construct, ExplicitError, evaluate, stream_read, stream_write

__all__ = ["DIG2BYTES", "DecimalBin", "DecimalBinError", "decimal_size"]

#: Bytes needed for a group of 0..9 decimal digits (decimal.cc, dig2bytes).
DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)
_DIGITS_PER_GROUP = 9
_GROUP_BYTES = 4


class DecimalBinError(ExplicitError):
    """A packed DECIMAL that cannot be parsed or built (bad digits, a value that does not fit)."""


def _check_precision_scale(precision, scale) -> None:
    if isinstance(precision, bool) or not isinstance(precision, int) or precision < 1:
        raise ValueError(f"DECIMAL precision must be an integer >= 1, not {precision!r}")
    if isinstance(scale, bool) or not isinstance(scale, int) or not 0 <= scale <= precision:
        raise ValueError(f"DECIMAL({precision},{scale!r}): scale must be an integer from 0 to the precision")


def decimal_size(precision: int, scale: int) -> int:
    """Bytes of a DECIMAL(precision, scale) in MySQL's binary format (decimal.cc, decimal_bin_size)."""
    _check_precision_scale(precision, scale)
    intg = precision - scale
    return (intg // _DIGITS_PER_GROUP * _GROUP_BYTES + DIG2BYTES[intg % _DIGITS_PER_GROUP]
            + scale // _DIGITS_PER_GROUP * _GROUP_BYTES + DIG2BYTES[scale % _DIGITS_PER_GROUP])


def _group_widths(precision: int, scale: int) -> list[int]:
    """The digit count of each group, in wire order."""
    intg = precision - scale
    widths = []
    if intg % _DIGITS_PER_GROUP:
        widths.append(intg % _DIGITS_PER_GROUP)
    widths += [_DIGITS_PER_GROUP] * (intg // _DIGITS_PER_GROUP + scale // _DIGITS_PER_GROUP)
    if scale % _DIGITS_PER_GROUP:
        widths.append(scale % _DIGITS_PER_GROUP)
    return widths


def _group_nbytes(width: int) -> int:
    return _GROUP_BYTES if width == _DIGITS_PER_GROUP else DIG2BYTES[width]


@functools.lru_cache(maxsize=1024)
def _plan(precision: int, scale: int) -> tuple:
    """(size, ((offset, bytes, digits, 10 ** digits), ...)) of DECIMAL(precision, scale)."""
    size = decimal_size(precision, scale)
    groups, pos = [], 0
    for width in _group_widths(precision, scale):
        n = _group_nbytes(width)
        groups.append((pos, pos + n, width, 10 ** width))
        pos += n
    return size, tuple(groups)


def decode_decimal(data: bytes, precision: int, scale: int) -> _pydecimal.Decimal:
    """The Decimal held by exactly decimal_size(precision, scale) bytes (ValueError if bad)."""
    size, groups = _plan(precision, scale)
    if len(data) != size:
        raise ValueError(f"DECIMAL({precision},{scale}) takes {size} bytes, not {len(data)}")
    negative = not data[0] & 0x80
    whole = int.from_bytes(data, "big") ^ (1 << (8 * size - 1))  # the sign bit flipped back
    if negative:
        whole ^= (1 << (8 * size)) - 1  # negative numbers are stored with every bit inverted
    buf = whole.to_bytes(size, "big")
    parts = []
    for start, stop, width, limit in groups:
        group = int.from_bytes(buf[start:stop], "big")
        if group >= limit:
            raise ValueError(f"DECIMAL({precision},{scale}): a {width}-digit group holds {group}, "
                             f"more than {width} decimal digits")
        parts.append(str(group).zfill(width))
    digits = "".join(parts) or "0"
    if negative and scale == 0 and not digits.strip("0"):
        negative = False  # bin2decimal: a zero with no digits at all becomes a plain zero
    text = f"{digits[:len(digits) - scale]}.{digits[len(digits) - scale:]}" if scale else digits
    return _pydecimal.Decimal(f"-{text}" if negative else text)


def encode_decimal(value, precision: int, scale: int) -> bytes:
    """The bytes of `value` (Decimal, int or str) as DECIMAL(precision, scale); ValueError if it
    is not a finite number that fits exactly (no rounding)."""
    _check_precision_scale(precision, scale)
    where = f"DECIMAL({precision},{scale})"
    if isinstance(value, bool) or not isinstance(value, (_pydecimal.Decimal, int, str)):
        raise ValueError(f"{where} needs a Decimal, int or str, not {type(value).__name__}")
    try:
        d = _pydecimal.Decimal(value)
    except _pydecimal.InvalidOperation:
        raise ValueError(f"{where}: {value!r} is not a number") from None
    if not d.is_finite():
        raise ValueError(f"{where}: {value!r} is not a finite number")
    sign, digit_tuple, exponent = d.as_tuple()
    coefficient = int("".join(map(str, digit_tuple)) or "0")
    shift = exponent + scale  # the value times 10**scale is coefficient * 10**shift
    if shift >= 0:
        n = coefficient * 10 ** shift
    else:
        n, rest = divmod(coefficient, 10 ** -shift)
        if rest:
            raise ValueError(f"{where}: {value!r} has more than {scale} fraction digit(s)")
    if n >= 10 ** precision:
        raise ValueError(f"{where}: {value!r} has more than {precision - scale} integer digit(s)")
    negative = bool(sign) and n != 0  # MySQL never stores a negative zero
    digits = str(n).zfill(precision)
    out = bytearray()
    pos = 0
    for width in _group_widths(precision, scale):
        out += int(digits[pos:pos + width]).to_bytes(_group_nbytes(width), "big")
        pos += width
    if negative:
        out = bytearray(b ^ 0xFF for b in out)
    out[0] ^= 0x80
    return bytes(out)


class DecimalBin(Construct):
    """DECIMAL(precision, scale) in MySQL's binary format; parses to a ``decimal.Decimal`` with
    exactly `scale` fraction digits, builds from a Decimal, int or str that fits exactly.

    `precision` and `scale` are ints or functions of the context (like construct's sizes).
    """

    def __init__(self, precision, scale):
        super().__init__()
        self.precision = precision
        self.scale = scale

    def _params(self, context, path):
        precision = evaluate(self.precision, context)
        scale = evaluate(self.scale, context)
        try:
            _check_precision_scale(precision, scale)
        except ValueError as e:
            raise DecimalBinError(str(e), path=path) from None
        return precision, scale

    def _parse(self, stream, context, path):
        precision, scale = self._params(context, path)
        data = stream_read(stream, decimal_size(precision, scale), path)
        try:
            return decode_decimal(data, precision, scale)
        except ValueError as e:
            raise DecimalBinError(str(e), path=path) from None

    def _build(self, obj, stream, context, path):
        precision, scale = self._params(context, path)
        try:
            data = encode_decimal(obj, precision, scale)
        except ValueError as e:
            raise DecimalBinError(str(e), path=path) from None
        stream_write(stream, data, len(data), path)
        return obj

    def _sizeof(self, context, path):
        return decimal_size(*self._params(context, path))
