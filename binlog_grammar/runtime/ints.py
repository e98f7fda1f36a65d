"""The two variable-length integers of the spec language, on bytes, written once for every
backend: the construct classes (runtime.scalars: Packed, SvUint, SvSint) and the fast readers
(runtime.fast: read_packed, read_sv_uint, read_sv_sint) call these.

- `packed`: MySQL's length-encoded integer (net_store_length): a first byte below
  0xFB is the value; 0xFC, 0xFD and 0xFE are followed by the value in 2, 3 and 8 little-endian
  bytes; 0xFB and 0xFF start no integer.
- `sv_uint` / `sv_sint`: an integer of MySQL's serialization library (libs/mysql/serialization,
  variable-length integers): the trailing one bits of the first byte count the extra bytes; the
  little-endian whole shifted right by (extra + 1) is the value; a first byte 0xFF is followed by
  the 8-byte value. The signed form zig-zags: bit 0 of the unsigned value is the sign.

Each reader takes the first byte to learn the size, then the whole integer's bytes; each writer
returns the bytes, or raises ValueError for a value the form cannot hold.
"""
from __future__ import annotations

__all__ = ["packed_size", "packed_value", "packed_bytes", "sv_uint_size", "sv_uint_value",
           "sv_uint_bytes", "sv_sint_of", "sv_sint_to_uint"]

_PACKED_SIZE = {0xFC: 3, 0xFD: 4, 0xFE: 9}


def packed_size(first: int) -> int:
    """Bytes of a packed integer, from its first byte: 1 (the byte is the value), 3, 4 or 9; 0
    when the byte starts no packed integer."""
    if first < 0xFB:
        return 1
    return _PACKED_SIZE.get(first, 0)


def packed_value(data: bytes) -> int:
    """The value of a whole packed integer (packed_size bytes)."""
    if len(data) == 1:
        return data[0]
    return int.from_bytes(data[1:], "little")


def packed_bytes(value: int) -> bytes:
    """The shortest packed integer of a value."""
    if value < 0:
        raise ValueError(f"a packed integer cannot be negative ({value})")
    if value < 0xFB:
        return bytes([value])
    if value < 1 << 16:
        return b"\xfc" + value.to_bytes(2, "little")
    if value < 1 << 24:
        return b"\xfd" + value.to_bytes(3, "little")
    if value < 1 << 64:
        return b"\xfe" + value.to_bytes(8, "little")
    raise ValueError(f"{value} does not fit a packed integer")


def sv_uint_size(first: int) -> int:
    """Bytes of a serialization-library unsigned integer, from its first byte: one more than
    its trailing one bits, or 9 when all eight are set."""
    extra = 0
    while extra < 8 and first & (1 << extra):
        extra += 1
    return 9 if extra == 8 else extra + 1


def sv_uint_value(data: bytes) -> int:
    """The value of a whole serialization-library unsigned integer (sv_uint_size bytes)."""
    if len(data) == 9:
        return int.from_bytes(data[1:], "little")
    return int.from_bytes(data, "little") >> len(data)


def sv_uint_bytes(value: int) -> bytes:
    """The shortest serialization-library unsigned integer of a value."""
    if value < 0 or value >= 1 << 64:
        raise ValueError(f"{value} does not fit an unsigned serialization integer")
    for n in range(1, 9):  # n bytes hold 7*n bits
        if value < 1 << (7 * n):
            return ((value << n) | ((1 << (n - 1)) - 1)).to_bytes(n, "little")
    return b"\xff" + value.to_bytes(8, "little")


def sv_sint_of(u: int) -> int:
    """The signed value of a serialization-library integer from its unsigned form (zig-zag)."""
    return -(u >> 1) - 1 if u & 1 else u >> 1


def sv_sint_to_uint(value: int) -> int:
    """The unsigned form of a signed serialization-library integer (zig-zag)."""
    if not -(1 << 63) <= value < 1 << 63:
        raise ValueError(f"{value} does not fit a signed serialization integer")
    return ((-value - 1) << 1) | 1 if value < 0 else value << 1
