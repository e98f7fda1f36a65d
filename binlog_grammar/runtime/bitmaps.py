"""The spec language's `bitmap`, on bytes, written once for every backend: the construct class
(runtime.scalars.Bitmap) and the fast readers (runtime.fast.read_bitmap, bits_of_int) call these.

A bitmap of n bits takes ceil(n/8) bytes. In order `lsb` bit 0 of byte 0 is the first bit; in
order `msb` bit 7 of byte 0 is. It parses to Bits, a list of booleans that keeps the unused bits
of its last byte in `pad` (the first unused bit in pad's bit 0), so that it builds back to the
same bytes.
"""
from __future__ import annotations

__all__ = ["Bits", "bits_at", "bits_of_int", "bitmap_bytes"]


class Bits(list):
    """A parsed bitmap: a list of booleans; `pad` keeps the unused bits of the last byte."""

    pad = 0


# the bits of each byte value, bit 0 first
_LSB = [tuple(bool(b >> i & 1) for i in range(8)) for b in range(256)]


def bits_at(buf, pos: int, n: int, msb: bool) -> Bits:
    """The n bits of the bitmap at buf[pos:], which holds its (n + 7) // 8 bytes."""
    size = (n + 7) >> 3
    if not msb:
        if size == 1:  # most tables: the NULL bits of up to 8 columns
            byte = buf[pos]
            bits = Bits(_LSB[byte][:n])
            bits.pad = byte >> n if n & 7 else 0
            return bits
        bits = Bits()
        for byte in buf[pos:pos + size]:
            bits.extend(_LSB[byte])
        del bits[n:]
        bits.pad = buf[pos + size - 1] >> (n & 7) if n & 7 else 0
        return bits
    total = size * 8
    v = int.from_bytes(buf[pos:pos + size], "big")
    bits = Bits(bool(v >> (total - 1 - i) & 1) for i in range(n))
    pad = 0  # bit n of the bitmap first, as in lsb order
    for i in range(n, total):
        if v >> (total - 1 - i) & 1:
            pad |= 1 << (i - n)
    bits.pad = pad
    return bits


def bits_of_int(value: int, n: int) -> Bits:
    """The Bits of an lsb bitmap of n bits read as one little-endian int."""
    bits = Bits(bool(value >> i & 1) for i in range(n))
    bits.pad = value >> n
    return bits


def bitmap_bytes(bits, n: int, msb: bool) -> bytes:
    """The bytes of a bitmap of n bits (a list of booleans, with `pad` when it has one)."""
    if len(bits) != n:
        raise ValueError(f"bitmap has {len(bits)} bits, expected {n}")
    size = (n + 7) // 8
    pad = getattr(bits, "pad", 0)
    if not msb:
        value = sum(1 << i for i, b in enumerate(bits) if b) | (pad << n)
        return value.to_bytes(size, "little") if size else b""
    buf = bytearray(size)
    for i, b in enumerate(bits):
        if b:
            buf[i // 8] |= 0x80 >> (i % 8)
    for i in range(n, size * 8):
        if pad >> (i - n) & 1:
            buf[i // 8] |= 0x80 >> (i % 8)
    return bytes(buf)
