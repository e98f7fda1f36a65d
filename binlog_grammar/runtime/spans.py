"""Which bytes belong to which field: a span recorder for the generated construct structs.

`record(con, data, **ctx)` parses `data` with `con` and returns the parsed value and a tree of
spans: for every named field, the stream offsets before and after it. Nothing here knows a
layout: the recorder walks the struct the compiler generated (Struct.subcons; Renamed -> subcon;
nested Struct; the wrappers that runtime.construct names and construct's Rebuild, Array,
RepeatUntil, Switch), parsing exactly as construct does, and treats every other construct as a
leaf that it lets parse itself. Offsets inside a sized region (rt.Sized, a TLV value with a
length) are translated back to offsets in the whole input.

The docs use it to number the bytes of the hex examples; `binlog-grammar dump --format hexdump`
(binlog_grammar/output/hexdump.py) labels every byte of an event with it. With `tlv_parts=True` a TLV
entry's span also gets a "(tag)" span and, when the list has lengths, a "(length)" span before its
value, so that every byte of the entry has a span of its own.
"""
from __future__ import annotations

import io
from dataclasses import dataclass, field as dc_field

from construct import (Array, Container, ExplicitError, ListContainer, RangeError, Rebuild, Renamed,
                       RepeatUntil, StopFieldError, Struct, Switch, stream_read)
from construct.core import evaluate

from . import construct as rt

__all__ = ["Span", "record", "flatten"]


@dataclass
class Span:
    """Bytes [start, end) of the input that one field (or array element, or TLV entry) took."""

    name: str
    start: int
    end: int
    children: list = dc_field(default_factory=list)
    value: object = None

    @property
    def size(self) -> int:
        return self.end - self.start

    def __repr__(self):
        return f"Span({self.name!r}, {self.start}, {self.end}, {len(self.children)} children)"


class _Rec:
    """Parses like construct while collecting spans. `base` is the offset of the current stream's
    position 0 in the whole input."""

    def __init__(self, tlv_parts=False):
        self.tlv_parts = tlv_parts

    def parse(self, con, stream, context, path, base, out):
        """Parse `con` at the stream's position; append spans of named parts to `out`."""
        if isinstance(con, Renamed):
            if con.name is None:
                return self.parse(con.subcon, stream, context, path, base, out)
            start = base + stream.tell()
            span = Span(con.name, start, start)
            value = self.parse(con.subcon, stream, context, f"{path} -> {con.name}", base, span.children)
            span.end = base + stream.tell()
            span.value = value
            out.append(span)
            return value
        if isinstance(con, Struct):
            return self._struct(con, stream, context, path, base, out)
        if isinstance(con, rt.Sized):
            return self._sized(con, stream, context, path, base, out)
        if isinstance(con, rt.When):
            if con.cond(context):
                return self.parse(con.subcon, stream, context, path, base, out)
            return None
        if isinstance(con, Rebuild):
            return self.parse(con.subcon, stream, context, path, base, out)
        if isinstance(con, Array):
            count = evaluate(con.count, context)
            if not 0 <= count:
                raise RangeError(f"invalid count {count}", path=path)
            obj = ListContainer()
            for i in range(count):
                context._index = i
                obj.append(self._element(con.subcon, i, stream, context, path, base, out))
            return obj
        if isinstance(con, rt.RepeatEos):
            obj = ListContainer()
            pos = stream.tell()
            end = stream.seek(0, 2)
            stream.seek(pos)
            i = 0
            while stream.tell() < end:
                context._index = i
                obj.append(self._element(con.subcon, i, stream, context, f"{path} -> [{i}]", base, out))
                i += 1
            return obj
        if isinstance(con, RepeatUntil):
            obj = ListContainer()
            i = 0
            while True:
                context._index = i
                e = self._element(con.subcon, i, stream, context, path, base, out)
                obj.append(e)
                if con.predicate(e, obj, context):
                    return obj
                i += 1
        if isinstance(con, Switch):
            key = evaluate(con.keyfunc, context)
            return self.parse(con.cases.get(key, con.default), stream, context, path, base, out)
        if isinstance(con, rt.TLVList):
            return self._tlv(con, stream, context, path, base, out)
        # a leaf: it parses itself (integers, bytes, strings, bitmaps, adapters, Const, ...)
        return con._parsereport(stream, context, path)

    def _element(self, sub, i, stream, context, path, base, out):
        start = base + stream.tell()
        span = Span(f"[{i}]", start, start)
        value = self.parse(sub, stream, context, path, base, span.children)
        span.end = base + stream.tell()
        span.value = value
        out.append(span)
        return value

    def _struct(self, con, stream, context, path, base, out):
        obj = Container()
        obj._io = stream
        context = Container(_=context, _params=context._params, _root=None, _parsing=context._parsing,
                            _building=context._building, _sizing=context._sizing,
                            _subcons=con._subcons, _io=stream, _index=context.get("_index", None))
        context._root = context._.get("_root", context)
        for sc in con.subcons:
            try:
                subobj = self.parse(sc, stream, context, path, base, out)
            except StopFieldError:
                break
            if sc.name:
                obj[sc.name] = subobj
                context[sc.name] = subobj
        return obj

    def _region(self, stream, size, path, base):
        """A sub-stream of `size` bytes and the offset of its start in the whole input."""
        start = base + stream.tell()
        return io.BytesIO(stream_read(stream, size, path)), start

    def _in_region(self, sub, region, region_base, context, path, out):
        saved = context.get("_io")
        context["_io"] = region
        try:
            return self.parse(sub, region, context, path, region_base, out)
        finally:
            context["_io"] = saved

    def _sized(self, con, stream, context, path, base, out):
        size = con.region_size(stream, context, path)
        region, region_base = self._region(stream, size, path, base)
        obj = self._in_region(con.subcon, region, region_base, context, path, out)
        rt.check_consumed(region, path, f"a {size}-byte region")
        return obj

    def _tlv(self, con, stream, context, path, base, out):
        obj = ListContainer()
        pos = stream.tell()
        end = stream.seek(0, 2)
        stream.seek(pos)
        i = 0
        while True:
            if stream.tell() >= end:
                if con.end != "eos":
                    raise ExplicitError(f"the list ends without its end mark {con.end}", path=path)
                return obj
            start = base + stream.tell()
            tag = con.tag._parsereport(stream, context, path)
            if con.end != "eos" and tag == con.end:
                out.append(Span("(end)", start, base + stream.tell(), value=tag))
                return obj
            case = con.cases.get(tag)
            if case is None:
                if con.unknown == "error":
                    raise ExplicitError(f"unknown tag {tag}", path=path)
                parts = [Span("(tag)", start, base + stream.tell(), value=con._name_tag(tag))]
                if con.unknown == "stop":
                    raw_start = base + stream.tell()
                    entry = Container(tag=con._name_tag(tag), id=None, unknown=True, raw=stream.read())
                else:
                    lstart = base + stream.tell()
                    n = con.length._parsereport(stream, context, path)
                    parts.append(Span("(length)", lstart, base + stream.tell(), value=n))
                    raw_start = base + stream.tell()
                    entry = Container(tag=con._name_tag(tag), id=None, unknown=True,
                                      raw=stream_read(stream, n, path))
                parts.append(Span("(raw)", raw_start, base + stream.tell(), value=entry.raw))
                obj.append(entry)
                out.append(Span(f"[{i}]", start, base + stream.tell(), value=entry,
                                children=parts if self.tlv_parts else []))
                if con.unknown == "stop":
                    return obj
                i += 1
                continue
            ident, sub = case
            subpath = f"{path} -> {ident}"
            span = Span(f"[{i}]", start, start)
            if self.tlv_parts:
                span.children.append(Span("(tag)", start, base + stream.tell(),
                                          value=con._name_tag(tag)))
            vspan = Span(ident, 0, 0)
            if con.length is None:
                vspan.start = base + stream.tell()
                value = self.parse(sub, stream, context, subpath, base, vspan.children)
                vspan.end = base + stream.tell()
            else:
                lstart = base + stream.tell()
                n = con.length._parsereport(stream, context, subpath)
                if self.tlv_parts:
                    span.children.append(Span("(length)", lstart, base + stream.tell(), value=n))
                region, region_base = self._region(stream, n, subpath, base)
                vspan.start = region_base
                value = self._in_region(sub, region, region_base, context, subpath, vspan.children)
                rt.check_consumed(region, subpath, f"the {n}-byte value of {ident}")
                vspan.end = region_base + n
            vspan.value = value
            entry = Container(tag=con._name_tag(tag), id=ident, value=value)
            obj.append(entry)
            span.end = base + stream.tell()
            span.value = entry
            span.children.append(vspan)
            out.append(span)
            i += 1


def record(con, data: bytes, *, tlv_parts: bool = False, **ctx):
    """Parse `data` with `con` (as con.parse(data, **ctx) would) and return (value, spans): the
    spans of the top-level named fields, each with the spans of its parts. `tlv_parts` adds the
    "(tag)" and "(length)" spans of TLV entries (and "(raw)" for an unknown entry's bytes)."""
    stream = io.BytesIO(data)
    context = Container(**ctx)
    context._parsing = True
    context._building = False
    context._sizing = False
    context._params = context
    spans = []
    value = _Rec(tlv_parts).parse(con, stream, context, "(parsing)", 0, spans)
    return value, spans


def flatten(spans, prefix=""):
    """(dotted path, span) of every span, depth first, parents before their parts."""
    for s in spans:
        name = f"{prefix}{s.name}" if s.name.startswith("[") or not prefix else f"{prefix}.{s.name}"
        yield name, s
        yield from flatten(s.children, name)
