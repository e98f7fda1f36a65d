"""Helpers for tests that write event bytes out by hand: little-endian packers, and parsing one
event's data with a context, checking that the parsed value builds the same bytes again."""
import pytest
from construct import ConstructError

from binlog_grammar.generated.catalog import EVENTS


def event_type(name_or_code):
    if isinstance(name_or_code, int):
        return EVENTS[name_or_code]
    for et in EVENTS.values():
        if et.name == name_or_code:
            return et
    raise KeyError(name_or_code)


def ctx_for(name_or_code, **over):
    """A binlog v4 context for one event type (default post-header length of its spec)."""
    et = event_type(name_or_code)
    ctx = {"binlog_version": 4, "header_len": 19, "checksum_alg": 1, "server": None,
           "type_code": et.code, "post_header_len": et.post_header_len[0]}
    ctx.update(over)
    return ctx


def parse(name_or_code, data, **over):
    """Parse event data, check that it builds back to the same bytes, return the value."""
    et = event_type(name_or_code)
    ctx = ctx_for(et.code, **over)
    value = et.parse(data, ctx)
    assert et.build(value, ctx) == data
    return value


def fails(name_or_code, data, **over):
    et = event_type(name_or_code)
    with pytest.raises(ConstructError):
        et.parse(data, ctx_for(et.code, **over))


def _le(width, signed=False):
    return lambda v: v.to_bytes(width, "little", signed=signed)


u8, u16, u24, u32, u48, u56, u64 = (_le(w) for w in (1, 2, 3, 4, 6, 7, 8))
s64 = _le(8, signed=True)


def lenenc(v):
    """MySQL's length-encoded integer, shortest form (net_store_length)."""
    if v < 251:
        return u8(v)
    if v < 1 << 16:
        return b"\xfc" + u16(v)
    if v < 1 << 24:
        return b"\xfd" + u24(v)
    return b"\xfe" + u64(v)
