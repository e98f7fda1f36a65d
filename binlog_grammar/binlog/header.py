"""The common event header read without parsing the event: where its fields sit, and one unpack
of the fields a header walk needs.

Every reader that walks events by their headers (framing.scan, the resynchronisation after
damage in resync.py, the Spark split planner) reads them here. The layout is the spec's:
generated/fast.py's `layout_common_header(ctx)` gives the struct format of the common header for
a header length (13 bytes in binlog v1, 19 and more after), and the offsets below are summed
from that format, never written down.
"""
from __future__ import annotations

import re
import struct
from functools import lru_cache

from ..generated import fast as F

V4_HEADER_LEN = 19  # what a FORMAT_DESCRIPTION_EVENT's common_header_len is at least
V1_HEADER_LEN = 13  # binlog v1 (MySQL 3.23): the header without log_pos and flags
_CODE = re.compile(r"(\d*)([a-zA-Z?])")


@lru_cache(maxsize=None)
def layout(header_len: int) -> tuple:
    """(struct.Struct of the whole common header, its field names) for this header length."""
    return F.layout_common_header({"header_len": header_len})


@lru_cache(maxsize=None)
def offsets(header_len: int = V4_HEADER_LEN) -> dict:
    """{field name: (offset, struct code)} of the common header for this header length."""
    fmt, names = layout(header_len)
    order, codes = fmt.format[0], _CODE.findall(fmt.format[1:])
    out, at = {}, 0
    for name, (count, code) in zip(names, codes):
        piece = order + count + code
        out[name] = (at, piece[1:])
        at += struct.calcsize(piece)
    return out


@lru_cache(maxsize=None)
def probe(header_len: int = V4_HEADER_LEN, fields=("type_code", "event_length")) -> struct.Struct:
    """A struct.Struct whose unpack_from(buf, pos) gives `fields` (in this order, which is their
    order in the header) of the common header at `pos`, skipping the others."""
    fmt, names = layout(header_len)
    where = offsets(header_len)
    out, at = fmt.format[0], 0
    for name in fields:
        start, code = where[name]
        out += (f"{start - at}x" if start > at else "") + code
        at = start + struct.calcsize(fmt.format[0] + code)
    return struct.Struct(out)


def field_at(name: str, header_len: int = V4_HEADER_LEN) -> int:
    """The offset of a common-header field (type_code and event_length sit at the same place for
    every header length; flags only exists in headers of 19 bytes and more)."""
    return offsets(header_len)[name][0]


# where type_code, event_length and flags (the byte holding LOG_EVENT_BINLOG_IN_USE_F, its low
# byte: the field is little-endian) sit in the header
TYPE_AT = field_at("type_code")
LENGTH_AT = field_at("event_length")
LENGTH_SIZE = struct.calcsize("<" + offsets()["event_length"][1])
FLAGS_AT = field_at("flags")
TYPE_AND_LENGTH = probe()  # (type_code, event_length) of a header at a position
