"""The construct classes of single values in the spec language: packed and serialization-library
integers, integers of a computed size, text, bitmaps, and the ints that know their enum or flag
names. Generated modules reach them as rt.Packed, rt.Bitmap, ... (runtime.construct).

Each builds as well as it parses. The byte forms of packed integers and bitmaps are written once,
in runtime.ints and runtime.bitmaps, which the fast readers call too.
"""
from __future__ import annotations

from construct import Adapter, Construct, ExplicitError, SizeofError, stream_read, stream_write

from .bitmaps import Bits, bitmap_bytes, bits_at
from .ints import (packed_bytes, packed_size, packed_value, sv_sint_of, sv_sint_to_uint,
                   sv_uint_bytes, sv_uint_size, sv_uint_value)

__all__ = ["Packed", "SvUint", "SvSint", "UIntN", "Text", "Bits", "Bitmap", "EnumValue",
           "FlagsValue", "EnumInt", "FlagsInt"]


# ---------------------------------------------------------------------------------------------
# integers

def _write_int(stream, to_bytes, obj, path):
    """Build an integer with a writer of runtime.ints; a value it cannot hold is a construct error."""
    obj = int(obj)
    try:
        data = to_bytes(obj)
    except ValueError as e:
        raise ExplicitError(str(e), path=path) from None
    stream_write(stream, data, len(data), path)
    return obj


def _sv_sint_bytes(value: int) -> bytes:
    return sv_uint_bytes(sv_sint_to_uint(value))


class Packed(Construct):
    """MySQL's length-encoded integer (net_store_length): < 0xFB inline, 0xFC u16, 0xFD u24, 0xFE u64."""

    def _parse(self, stream, context, path):
        first = stream_read(stream, 1, path)
        size = packed_size(first[0])
        if size == 1:
            return first[0]
        if not size:
            raise ExplicitError(f"byte 0x{first[0]:02X} does not start a packed integer", path=path)
        return packed_value(first + stream_read(stream, size - 1, path))

    def _build(self, obj, stream, context, path):
        return _write_int(stream, packed_bytes, obj, path)

    def _sizeof(self, context, path):
        raise SizeofError("a packed integer has no fixed size", path=path)


class SvUint(Construct):
    """Unsigned integer of MySQL's serialization library (runtime.ints): trailing one bits of the
    first byte count the extra bytes; the little-endian whole shifted right by (extra + 1) is the
    value; a first byte 0xFF is followed by the 8-byte value."""

    def _parse(self, stream, context, path):
        first = stream_read(stream, 1, path)
        rest = stream_read(stream, sv_uint_size(first[0]) - 1, path)
        return sv_uint_value(first + rest)

    def _build(self, obj, stream, context, path):
        return _write_int(stream, sv_uint_bytes, obj, path)

    def _sizeof(self, context, path):
        raise SizeofError("variable size", path=path)


class SvSint(SvUint):
    """Signed form: bit 0 of the unsigned value is the sign (zig-zag)."""

    def _parse(self, stream, context, path):
        return sv_sint_of(SvUint._parse(self, stream, context, path))

    def _build(self, obj, stream, context, path):
        return _write_int(stream, _sv_sint_bytes, obj, path)


class UIntN(Construct):
    """An unsigned integer of a computed number of bytes (0 bytes hold the value 0)."""

    def __init__(self, length, big_endian):
        super().__init__()
        self.length = length
        self.big = big_endian

    def _n(self, context, path):
        n = self.length(context) if callable(self.length) else self.length
        if n < 0:
            raise ExplicitError(f"integer size {n} is negative", path=path)
        return n

    def _parse(self, stream, context, path):
        data = stream_read(stream, self._n(context, path), path)
        return int.from_bytes(data, "big" if self.big else "little")

    def _build(self, obj, stream, context, path):
        n = self._n(context, path)
        try:
            data = int(obj).to_bytes(n, "big" if self.big else "little")
        except (OverflowError, TypeError, ValueError):
            raise ExplicitError(f"{obj!r} does not fit in {n} unsigned bytes", path=path) from None
        stream_write(stream, data, n, path)
        return obj

    def _sizeof(self, context, path):
        return self._n(context, path)


# ---------------------------------------------------------------------------------------------
# strings and bitmaps

class Text(Adapter):
    """Bytes as text: UTF-8, with bytes that are not UTF-8 kept (surrogateescape), so any bytes
    round-trip exactly. With pad, trailing pad bytes are stripped on parse and added on build."""

    def __init__(self, subcon, pad=None, size=None):
        super().__init__(subcon)
        self.pad = pad
        self.size = size

    def _decode(self, obj, context, path):
        if self.pad is not None:
            obj = obj.rstrip(bytes([self.pad]))
        return obj.decode("utf-8", "surrogateescape")

    def _encode(self, obj, context, path):
        data = obj.encode("utf-8", "surrogateescape")
        if self.pad is not None:
            size = self.size(context) if callable(self.size) else self.size
            if len(data) > size:
                raise ExplicitError(f"{len(data)} bytes do not fit in {size}", path=path)
            data = data + bytes([self.pad]) * (size - len(data))
        return data


class Bitmap(Construct):
    """`bits` booleans in ceil(bits/8) bytes; lsb: bit 0 of byte 0 first; msb: bit 7 of byte 0
    first (runtime.bitmaps)."""

    def __init__(self, bits, order="lsb"):
        super().__init__()
        self.bits = bits
        self.order = order

    def _n(self, context):
        return self.bits(context) if callable(self.bits) else self.bits

    def _parse(self, stream, context, path):
        n = self._n(context)
        if n < 0:
            raise ExplicitError(f"a bitmap cannot have {n} bits", path=path)
        data = stream_read(stream, (n + 7) // 8, path)
        return bits_at(data, 0, n, self.order == "msb")

    def _build(self, obj, stream, context, path):
        try:
            data = bitmap_bytes(obj, self._n(context), self.order == "msb")
        except ValueError as e:
            raise ExplicitError(str(e), path=path) from None
        stream_write(stream, data, len(data), path)
        return obj

    def _sizeof(self, context, path):
        return (self._n(context) + 7) // 8


# ---------------------------------------------------------------------------------------------
# enums and flags

class EnumValue(int):
    """An int that also knows its name in the spec's enum (None for a value with no name)."""

    def __new__(cls, value, name=None):
        obj = int.__new__(cls, value)
        obj.name = name
        return obj

    def __repr__(self):
        return f"{self.name}({int(self)})" if self.name else str(int(self))

    __str__ = __repr__


class FlagsValue(int):
    """An int that also knows the names of its set bits (`names`; unnamed bits as hex)."""

    def __new__(cls, value, table):
        obj = int.__new__(cls, value)
        obj._table = table
        return obj

    @property
    def names(self) -> list:  # worked out when asked: most flags are never printed
        value = int(self)
        names = [name for bit, name in self._table.items() if value & bit == bit and bit]
        rest = value & ~sum(self._table)
        if rest:
            names.append(hex(rest))
        return names

    def __repr__(self):
        return f"{hex(int(self))}({'|'.join(self.names)})" if self.names else hex(int(self))

    __str__ = __repr__


class EnumInt(Adapter):
    """An integer field with an enum: parses to EnumValue; builds from a member's name or an int."""

    def __init__(self, subcon, members):
        super().__init__(subcon)
        self.members = members
        self.by_name = {v: k for k, v in members.items()}

    def _decode(self, obj, context, path):
        return EnumValue(obj, self.members.get(obj))

    def _encode(self, obj, context, path):
        if isinstance(obj, str):
            if obj not in self.by_name:
                raise ExplicitError(f"{obj!r} is not a member of this enum", path=path)
            return self.by_name[obj]
        return int(obj)


class FlagsInt(Adapter):
    """An integer field with flags: parses to FlagsValue; builds from an int."""

    def __init__(self, subcon, bits):
        super().__init__(subcon)
        self.bits = bits

    def _decode(self, obj, context, path):
        return FlagsValue(obj, self.bits)

    def _encode(self, obj, context, path):
        return int(obj)
