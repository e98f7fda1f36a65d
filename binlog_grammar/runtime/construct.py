"""The few construct classes and helpers that generated modules are made of.

Each class here is a general building block of the spec language (packed integers, bitmaps, TLV
lists, conditional and sized fields), never a layout of its own: the layouts are all in specs/.
Every class builds as well as it parses.
"""
from __future__ import annotations

import io
import re

from construct import (Adapter, Construct, Container, ExplicitError, ListContainer, SizeofError,
                       StreamError, stream_read, stream_tell, stream_write)

from ..lang.expr import Version, version_compare

__all__ = [
    "Version", "vcmp", "version", "remaining", "ctx", "length", "popcount", "tlv_value", "sizeof",
    "Packed", "SvUint", "SvSint", "UIntN", "Text", "Bitmap", "Bits", "EnumInt", "FlagsInt", "EnumValue",
    "FlagsValue", "Sized", "RepeatEos", "When", "TLVList", "NoCase", "RawBytes", "col", "rank",
    "As", "DecimalBin", "JsonBinary", "set_members",
]


# ---------------------------------------------------------------------------------------------
# expression helpers

def vcmp(op, a, b):
    return version_compare(op, a, b)


_VERSION_RE = re.compile(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?")


def version(text) -> Version | None:
    """The version of a server version string ('8.0.40-debug', '10.11.6-MariaDB-log')."""
    if text is None:
        return None
    if isinstance(text, Version):
        return text
    if isinstance(text, bytes):
        text = text.decode("latin-1")
    flavor = "mariadb" if "mariadb" in text.lower() else "mysql"
    if flavor == "mariadb" and text.startswith("5.5.5-"):
        text = text[6:]  # the replication handshake's prefix
    m = _VERSION_RE.match(text.strip())
    if not m:
        return Version(flavor, (0,))
    return Version(flavor, tuple(int(g) for g in m.groups() if g is not None))


_SET_CACHE: dict = {}


def set_members(entries, server) -> frozenset:
    """The members of a named set (generated/sets.py) for a server version: the union of the
    entries whose line (flavor) and since/until range take in `server`. With no version known
    (None), only the entries that name neither a line nor a version apply."""
    key = (entries, server)
    got = _SET_CACHE.get(key)
    if got is not None:
        return got
    out = set()
    for flavor, since, until, members in entries:
        if server is None:
            if flavor is None and since is None and until is None:
                out |= members
            continue
        if flavor is not None and server.flavor != flavor:
            continue
        if since is not None and not version_compare(">=", server, since):
            continue
        if until is not None and not version_compare("<", server, until):
            continue
        out |= members
    got = frozenset(out)
    if len(_SET_CACHE) > 4096:
        _SET_CACHE.clear()
    _SET_CACHE[key] = got
    return got


def server_version(text: str) -> Version:
    """`mysql-8.4.0`, `mariadb-10.11.6`, or a server's own version string (`10.11.6-MariaDB`)."""
    from ..lang.expr import parse_version_literal

    if text.startswith(("mysql-", "mariadb-")):
        try:
            return parse_version_literal(text)
        except ValueError:
            raise ValueError(f"not a server version: {text!r}") from None
    v = version(text)
    if v.number == (0,):
        raise ValueError(f"not a server version: {text!r}")
    return v


def remaining(this) -> int:
    """Bytes left in the region being parsed (the event data, a sized field, a TLV value)."""
    stream = this["_io"]
    if this.get("_building"):
        raise ExplicitError("'remaining' has no meaning while building")
    pos = stream.tell()
    end = stream.seek(0, 2)
    stream.seek(pos)
    return end - pos


def ctx(this, name):
    params = this.get("_params") or {}
    if name not in params:
        raise ExplicitError(f"context value ctx.{name} was not given to this parse")
    return params[name]


def length(x) -> int:
    if x is None:
        return 0
    if isinstance(x, str):
        return len(x.encode("utf-8", "surrogateescape"))
    return len(x)


def popcount(bits) -> int:
    return list(bits).count(True) if not isinstance(bits, list) else bits.count(True)


def rank(bits, i) -> int:
    """Number of set bits before position i (the NULL-bit index of the i-th column)."""
    return bits[:i].count(True)


def col(this):
    """The column being decoded: ctx.columns at the nearest enclosing repeat index."""
    c = this
    while c is not None:
        if "_index" in c:
            return ctx(c, "columns")[c["_index"]]
        c = c.get("_")
    raise ExplicitError("col is used outside a row image (no column is being decoded)")


def matches(text, pattern) -> bool:
    """Does the regular expression match at the start of the text?"""
    return text is not None and re.match(pattern, str(text)) is not None


def tlv_value(items, ident):
    """Value of the first entry of a parsed TLV list with this id (None when absent)."""
    for entry in items or ():
        if entry.get("id") == ident:
            return entry.get("value")
    return None


def sizeof(subcon, value, this) -> int:
    """Bytes that `value` takes when built with `subcon` in the current struct's context."""
    stream = io.BytesIO()
    subcon._build(value, stream, this, "(sizeof)")
    return len(stream.getvalue())


# ---------------------------------------------------------------------------------------------
# integers

class Packed(Construct):
    """MySQL's length-encoded integer (net_store_length): < 0xFB inline, 0xFC u16, 0xFD u24, 0xFE u64."""

    def _parse(self, stream, context, path):
        first = stream_read(stream, 1, path)[0]
        if first < 0xFB:
            return first
        width = {0xFC: 2, 0xFD: 3, 0xFE: 8}.get(first)
        if width is None:
            raise ExplicitError(f"byte 0x{first:02X} does not start a packed integer", path=path)
        return int.from_bytes(stream_read(stream, width, path), "little")

    def _build(self, obj, stream, context, path):
        obj = int(obj)
        if obj < 0:
            raise ExplicitError(f"a packed integer cannot be negative ({obj})", path=path)
        if obj < 0xFB:
            data = bytes([obj])
        elif obj < 1 << 16:
            data = b"\xfc" + obj.to_bytes(2, "little")
        elif obj < 1 << 24:
            data = b"\xfd" + obj.to_bytes(3, "little")
        elif obj < 1 << 64:
            data = b"\xfe" + obj.to_bytes(8, "little")
        else:
            raise ExplicitError(f"{obj} does not fit a packed integer", path=path)
        stream_write(stream, data, len(data), path)
        return obj

    def _sizeof(self, context, path):
        raise SizeofError("a packed integer has no fixed size", path=path)


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


def sv_sint_of(u: int) -> int:
    """The signed value of a serialization-library integer from its unsigned form (zig-zag)."""
    return -(u >> 1) - 1 if u & 1 else u >> 1


class SvUint(Construct):
    """Unsigned integer of MySQL's serialization library: trailing one bits of the first byte count
    the extra bytes; the little-endian whole shifted right by (extra + 1) is the value; a first
    byte 0xFF is followed by the 8-byte value."""

    def _parse(self, stream, context, path):
        first = stream_read(stream, 1, path)
        rest = stream_read(stream, sv_uint_size(first[0]) - 1, path)
        return sv_uint_value(first + rest)

    def _build(self, obj, stream, context, path):
        obj = int(obj)
        if obj < 0 or obj >= 1 << 64:
            raise ExplicitError(f"{obj} does not fit an unsigned serialization integer", path=path)
        for n in range(1, 9):  # n bytes hold 7*n bits
            if obj < 1 << (7 * n):
                whole = (obj << n) | ((1 << (n - 1)) - 1)
                data = whole.to_bytes(n, "little")
                break
        else:
            data = b"\xff" + obj.to_bytes(8, "little")
        stream_write(stream, data, len(data), path)
        return obj

    def _sizeof(self, context, path):
        raise SizeofError("variable size", path=path)


class SvSint(SvUint):
    """Signed form: bit 0 of the unsigned value is the sign (zig-zag)."""

    def _parse(self, stream, context, path):
        return sv_sint_of(SvUint._parse(self, stream, context, path))

    def _build(self, obj, stream, context, path):
        obj = int(obj)
        if not -(1 << 63) <= obj < 1 << 63:
            raise ExplicitError(f"{obj} does not fit a signed serialization integer", path=path)
        u = ((-obj - 1) << 1) | 1 if obj < 0 else obj << 1
        SvUint._build(self, u, stream, context, path)
        return obj


# ---------------------------------------------------------------------------------------------
# strings and bitmaps

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


class Bits(list):
    """A parsed bitmap: a list of booleans; `pad` keeps the unused bits of the last byte."""

    pad = 0


class Bitmap(Construct):
    """`bits` booleans in ceil(bits/8) bytes; lsb: bit 0 of byte 0 first; msb: bit 7 of byte 0 first."""

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
        value = int.from_bytes(data, "little")
        out = Bits()
        if self.order == "lsb":
            out.extend(bool(value >> i & 1) for i in range(n))
            out.pad = value >> n
        else:
            for i in range(n):
                out.append(bool(data[i // 8] & (0x80 >> (i % 8))))
            mask = 0
            for i in range(n, len(data) * 8):
                if data[i // 8] & (0x80 >> (i % 8)):
                    mask |= 1 << (i - n)
            out.pad = mask
        return out

    def _build(self, obj, stream, context, path):
        n = self._n(context)
        if len(obj) != n:
            raise ExplicitError(f"bitmap has {len(obj)} bits, expected {n}", path=path)
        nbytes = (n + 7) // 8
        pad = getattr(obj, "pad", 0)
        if self.order == "lsb":
            value = sum(1 << i for i, b in enumerate(obj) if b) | (pad << n)
            data = value.to_bytes(nbytes, "little") if nbytes else b""
        else:
            buf = bytearray(nbytes)
            for i, b in enumerate(obj):
                if b:
                    buf[i // 8] |= 0x80 >> (i % 8)
            for i in range(n, nbytes * 8):
                if pad >> (i - n) & 1:
                    buf[i // 8] |= 0x80 >> (i % 8)
            data = bytes(buf)
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
    def __init__(self, subcon, bits):
        super().__init__(subcon)
        self.bits = bits

    def _decode(self, obj, context, path):
        return FlagsValue(obj, self.bits)

    def _encode(self, obj, context, path):
        return int(obj)


# ---------------------------------------------------------------------------------------------
# regions, arrays, conditions

def _region(stream, size, path):
    data = stream_read(stream, size, path)
    return io.BytesIO(data)


def _parse_in(subcon, region, context, path):
    """Parse from a sub-region; `remaining` inside it counts the region's bytes."""
    saved = context.get("_io")
    context["_io"] = region
    try:
        return subcon._parsereport(region, context, path)
    finally:
        context["_io"] = saved


def _check_consumed(sub, path, what):
    pos = sub.tell()
    end = sub.seek(0, 2)
    if pos != end:
        raise ExplicitError(f"{end - pos} byte(s) left over at the end of {what} "
                            f"(the spec does not describe them)", path=path)


class Sized(Construct):
    """The value lives in a region of exactly `size` bytes (None: the rest of the enclosing region)
    and must fill it."""

    def __init__(self, size, subcon, check_on_build=True):
        super().__init__()
        self.size = size
        self.subcon = subcon
        self.flagbuildnone = subcon.flagbuildnone
        self.check_on_build = check_on_build  # False when the size is measured from `remaining`

    def region_size(self, stream, context, path) -> int:
        """Bytes of the region this value lives in (the rest of the stream when size is None)."""
        if self.size is None:
            pos = stream.tell()
            size = stream.seek(0, 2) - pos
            stream.seek(pos)
            return size
        size = self.size(context) if callable(self.size) else self.size
        if size < 0:
            raise ExplicitError(f"negative size {size}", path=path)
        return size

    def _parse(self, stream, context, path):
        size = self.region_size(stream, context, path)
        sub = _region(stream, size, path)
        obj = _parse_in(self.subcon, sub, context, path)
        _check_consumed(sub, path, f"a {size}-byte region")
        return obj

    def _build(self, obj, stream, context, path):
        sub = io.BytesIO()
        buildret = self.subcon._build(obj, sub, context, path)
        data = sub.getvalue()
        if self.size is not None and self.check_on_build:
            size = self.size(context) if callable(self.size) else self.size
            if len(data) != size:
                raise ExplicitError(f"value takes {len(data)} bytes but its size says {size}", path=path)
        stream_write(stream, data, len(data), path)
        return buildret

    def _sizeof(self, context, path):
        if self.size is None:
            raise SizeofError("takes the rest of the region", path=path)
        return self.size(context) if callable(self.size) else self.size


class RepeatEos(Construct):
    """Elements until the enclosing region ends; an element that does not parse is an error, and
    so is one that reads no bytes (it would repeat forever: a rows event whose images hold no
    column, whose NULL bitmaps are 0 bytes)."""

    def __init__(self, subcon):
        super().__init__()
        self.subcon = subcon

    def _parse(self, stream, context, path):
        out = ListContainer()
        pos = stream.tell()
        end = stream.seek(0, 2)
        stream.seek(pos)
        i = 0
        while (at := stream.tell()) < end:
            context._index = i
            out.append(self.subcon._parsereport(stream, context, f"{path} -> [{i}]"))
            if stream.tell() == at:
                raise ExplicitError(f"element {i} is 0 bytes long, so the elements never end",
                                    path=path)
            i += 1
        return out

    def _build(self, obj, stream, context, path):
        out = ListContainer()
        for i, e in enumerate(obj):
            context._index = i
            out.append(self.subcon._build(e, stream, context, f"{path} -> [{i}]"))
        return out

    def _sizeof(self, context, path):
        raise SizeofError("repeats to the end of the region", path=path)


class When(Construct):
    """A conditional field: parsed when the condition holds. Built when the condition holds, or,
    for a condition on `remaining` (which has no meaning while building), when the value is not
    None."""

    def __init__(self, cond, subcon, by_value=False):
        super().__init__()
        self.cond = cond
        self.subcon = subcon
        self.by_value = by_value
        self.flagbuildnone = True  # an absent (missing or None) value builds nothing

    def _parse(self, stream, context, path):
        if self.cond(context):
            return self.subcon._parsereport(stream, context, path)
        return None

    def _build(self, obj, stream, context, path):
        if self.by_value:
            if obj is None:
                return None
        elif not self.cond(context):
            return None
        return self.subcon._build(obj, stream, context, path)

    def _sizeof(self, context, path):
        raise SizeofError("conditional", path=path)


class NoCase(Construct):
    """The default of a switch without a default: a clear parse error."""

    def __init__(self, what):
        super().__init__()
        self.what = what

    def _parse(self, stream, context, path):
        raise ExplicitError(f"no case of {self.what} matches this value", path=path)

    def _build(self, obj, stream, context, path):
        raise ExplicitError(f"no case of {self.what} matches this value", path=path)


class RawBytes(Construct):
    """All bytes left in the region (what an unknown event type holds)."""

    def _parse(self, stream, context, path):
        return stream.read()

    def _build(self, obj, stream, context, path):
        stream_write(stream, bytes(obj), len(obj), path)
        return obj


class TLVList(Construct):
    """Entries (tag, [length], value) until the region ends or an end-mark tag.

    Parses to a list of Containers {tag, id, value}; an unknown tag gives
    {tag, id: None, unknown: True, raw}
    (with unknown='stop', raw is every byte after the tag and the list ends there), so the list
    always rebuilds byte for byte.
    """

    def __init__(self, tag, length, cases, end="eos", unknown="stop", tag_names=None):
        super().__init__()
        self.tag = tag
        self.length = length
        self.cases = cases  # tag value -> (id, construct)
        self.by_id = {ident: (tag_value, sub) for tag_value, (ident, sub) in cases.items()}
        self.end = end
        self.unknown = unknown
        self.tag_names = tag_names or {}

    def _name_tag(self, value):
        if self.tag_names:
            return EnumValue(value, self.tag_names.get(value))
        return value

    def _parse(self, stream, context, path):
        out = ListContainer()
        pos = stream.tell()
        end = stream.seek(0, 2)
        stream.seek(pos)
        while True:
            if stream.tell() >= end:
                if self.end != "eos":
                    raise ExplicitError(f"the list ends without its end mark {self.end}", path=path)
                return out
            tag = self.tag._parsereport(stream, context, path)
            if self.end != "eos" and tag == self.end:
                return out
            case = self.cases.get(tag)
            if case is None:
                if self.unknown == "error":
                    raise ExplicitError(f"unknown tag {tag}", path=path)
                if self.unknown == "stop":
                    out.append(Container(tag=self._name_tag(tag), id=None, unknown=True,
                                         raw=stream.read()))
                    return out
                n = self.length._parsereport(stream, context, path)
                out.append(Container(tag=self._name_tag(tag), id=None, unknown=True,
                                     raw=stream_read(stream, n, path)))
                continue
            ident, sub = case
            subpath = f"{path} -> {ident}"
            if self.length is None:
                value = sub._parsereport(stream, context, subpath)
            else:
                n = self.length._parsereport(stream, context, subpath)
                region = _region(stream, n, subpath)
                value = _parse_in(sub, region, context, subpath)
                _check_consumed(region, subpath, f"the {n}-byte value of {ident}")
            out.append(Container(tag=self._name_tag(tag), id=ident, value=value))

    def _build(self, obj, stream, context, path):
        for i, entry in enumerate(obj):
            ident = entry.get("id")
            if ident is None:
                tag = int(entry["tag"])
                raw = bytes(entry["raw"])
                self.tag._build(tag, stream, context, path)
                if self.unknown != "stop":
                    self.length._build(len(raw), stream, context, path)
                stream_write(stream, raw, len(raw), path)
                if self.unknown == "stop" and i != len(obj) - 1:
                    raise ExplicitError("an unknown entry ends the list; nothing may follow it", path=path)
                continue
            if ident not in self.by_id:
                raise ExplicitError(f"no tlv case named {ident!r}", path=path)
            tag, sub = self.by_id[ident]
            self.tag._build(tag, stream, context, path)
            subpath = f"{path} -> {ident}"
            if self.length is None:
                sub._build(entry.get("value"), stream, context, subpath)
            else:
                region = io.BytesIO()
                sub._build(entry.get("value"), region, context, subpath)
                data = region.getvalue()
                self.length._build(len(data), stream, context, subpath)
                stream_write(stream, data, len(data), subpath)
        if self.end != "eos":
            self.tag._build(self.end, stream, context, path)
        return obj

    def _sizeof(self, context, path):
        raise SizeofError("variable size", path=path)


def stream_end_check(stream, what):
    """Raise if bytes remain in `stream` (used by the reader on a whole event)."""
    _check_consumed(stream, what, what)


__all__ += ["stream_end_check", "StreamError", "stream_tell"]


class _RawLength(Construct):
    """Builds a bytes or str value as its raw bytes (used by sizeof of a sized bytes/str field)."""

    def _build(self, obj, stream, context, path):
        data = obj.encode("utf-8", "surrogateescape") if isinstance(obj, str) else bytes(obj)
        stream_write(stream, data, len(data), path)
        return obj


RawLength = _RawLength()


# ---------------------------------------------------------------------------------------------
# Python values of column layouts, and the two algorithms the specs name as built-in types

class As(Adapter):
    """A spec type with `as: NAME`: the struct's fields <-> the Python value (pyvalues.ADAPTERS)."""

    def __init__(self, subcon, name):
        from .values import ADAPTERS

        super().__init__(subcon)
        self.name = name
        self.adapter = ADAPTERS[name]

    def _decode(self, obj, context, path):
        try:
            return self.adapter.decode(obj, _col_or_none(context))
        except ValueError as e:
            raise ExplicitError(f"{e} (path {path})") from None

    def _encode(self, obj, context, path):
        try:
            return self.adapter.encode(obj, _col_or_none(context))
        except ValueError as e:
            raise ExplicitError(f"{e} (path {path})") from None


def _col_or_none(context):
    try:
        return col(context)
    except (ExplicitError, KeyError, IndexError, TypeError):
        return None


class _Algorithm(Construct):
    """A built-in type implemented by a hand-written class, imported when first used."""

    def __init__(self, module, name, *args):
        super().__init__()
        self._where = (module, name, args)
        self._sub = None

    @property
    def sub(self):
        if self._sub is None:
            import importlib

            module, name, args = self._where
            self._sub = getattr(importlib.import_module(module, __package__), name)(*args)
        return self._sub

    def _parse(self, stream, context, path):
        return self.sub._parsereport(stream, context, path)

    def _build(self, obj, stream, context, path):
        return self.sub._build(obj, stream, context, path)

    def _sizeof(self, context, path):
        return self.sub._sizeof(context, path)


def DecimalBin(precision, scale):
    """Type `decimal`: MySQL's packed DECIMAL digits (binlog_grammar.runtime.decimal)."""
    return _Algorithm(".decimal", "DecimalBin", precision, scale)


def JsonBinary():
    """Type `json_binary`: MySQL's binary JSON document, the whole enclosing region (binlog_grammar.runtime.jsonb)."""
    return _Algorithm(".jsonb", "JsonBinary")
