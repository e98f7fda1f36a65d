"""What generated modules call at run time, as `rt`: the construct classes and helpers they are
made of, in one namespace.

Each class is a general building block of the spec language, never a layout of its own: the
layouts are all in specs/. Every class builds as well as it parses. They live by kind:
- runtime.scalars: integers (packed, serialization-library, computed size), text, bitmaps, enums
  and flags; their byte forms in runtime.ints and runtime.bitmaps, which the fast path shares;
- runtime.regions: sized regions, repetition to a region's end, conditions, TLV lists;
- runtime.functions and runtime.versions: the functions expressions call and server versions;
- here: the expression helpers that read the parse context (remaining, ctx, col, sizeof), the
  `as:` adapters of column values, and the two algorithm types (decimal.py, jsonb/).
"""
from __future__ import annotations

import io

from construct import Adapter, Construct, ExplicitError, StreamError, stream_tell  # noqa: F401

from .functions import length, matches, popcount, rank, tlv_value  # noqa: F401
from .regions import (NoCase, RawBytes, RawLength, RepeatEos, Sized, TLVList, When,  # noqa: F401
                      check_consumed, stream_end_check)
from .scalars import (Bitmap, Bits, EnumInt, EnumValue, FlagsInt, FlagsValue, Packed,  # noqa: F401
                      SvSint, SvUint, Text, UIntN)
from .versions import Version, server_version, set_members, vcmp, version  # noqa: F401

__all__ = [
    "Version", "vcmp", "version", "remaining", "ctx", "length", "popcount", "tlv_value", "sizeof",
    "Packed", "SvUint", "SvSint", "UIntN", "Text", "Bitmap", "Bits", "EnumInt", "FlagsInt", "EnumValue",
    "FlagsValue", "Sized", "RepeatEos", "When", "TLVList", "NoCase", "RawBytes", "col", "rank",
    "As", "DecimalBin", "JsonBinary", "set_members", "matches", "server_version", "check_consumed",
    "stream_end_check", "StreamError", "stream_tell", "RawLength",
]


# ---------------------------------------------------------------------------------------------
# expression helpers that read the parse context

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
    """A context value of the parse (`ctx.name` in a spec: specs/context.yaml)."""
    params = this.get("_params") or {}
    if name not in params:
        raise ExplicitError(f"context value ctx.{name} was not given to this parse")
    return params[name]


def col(this):
    """The column being decoded: ctx.columns at the nearest enclosing repeat index."""
    c = this
    while c is not None:
        if "_index" in c:
            return ctx(c, "columns")[c["_index"]]
        c = c.get("_")
    raise ExplicitError("col is used outside a row image (no column is being decoded)")


def sizeof(subcon, value, this) -> int:
    """Bytes that `value` takes when built with `subcon` in the current struct's context."""
    stream = io.BytesIO()
    subcon._build(value, stream, this, "(sizeof)")
    return len(stream.getvalue())


# ---------------------------------------------------------------------------------------------
# Python values of column layouts, and the two algorithms the specs name as built-in types

class As(Adapter):
    """A spec type with `as: NAME`: the struct's fields <-> the Python value (runtime.values.ADAPTERS)."""

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
