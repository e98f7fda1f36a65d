"""The construct classes that place values in the bytes: a region of a given size, elements
repeated to the region's end, a conditional field, the default of a switch without one, the raw
rest of a region, and TLV lists. Generated modules reach them as rt.Sized, rt.When, ... (runtime.
construct); runtime.spans walks the same regions to record which bytes each field took.

Each builds as well as it parses. Inside a region, `remaining` (runtime.construct.remaining)
counts the region's bytes: a region is parsed from a stream of its own.
"""
from __future__ import annotations

import io

from construct import (Construct, Container, ExplicitError, ListContainer, SizeofError, stream_read,
                       stream_write)

from .scalars import EnumValue

__all__ = ["check_consumed", "Sized", "RepeatEos", "When", "NoCase", "RawBytes", "TLVList",
           "stream_end_check", "RawLength"]


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


def check_consumed(sub, path, what):
    """Raise if bytes remain after the stream's position: a region the spec does not fill."""
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
        check_consumed(sub, path, f"a {size}-byte region")
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
                check_consumed(region, subpath, f"the {n}-byte value of {ident}")
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
    check_consumed(stream, what, what)


class _RawLength(Construct):
    """Builds a bytes or str value as its raw bytes (used by sizeof of a sized bytes/str field)."""

    def _build(self, obj, stream, context, path):
        data = obj.encode("utf-8", "surrogateescape") if isinstance(obj, str) else bytes(obj)
        stream_write(stream, data, len(data), path)
        return obj


RawLength = _RawLength()
