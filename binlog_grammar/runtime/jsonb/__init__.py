"""MySQL's binary JSON (the storage format of JSON columns), as a construct class that parses and
builds (binary.py), plus the text MySQL prints for a JSON value (text.py) and the partial-update
diffs of PARTIAL_UPDATE_ROWS_EVENT (diff.py). The names other modules use are imported from here.

doc-ref: sql-common/json_binary.h (the format), sql-common/json_binary.cc (serialize, parse_binary),
sql-common/json_dom.cc (Json_wrapper::to_string, Json_decimal, Json_datetime), sql/json_diff.cc
(apply_json_diffs), strings/dtoa.cc (my_gcvt), mysys/base64.cc (mysql-server; 5.7 has them under sql/).

Layout (all integers little-endian; the type codes, the literals and the container records are
stated in specs/types/json_binary.yaml, the rest is code)::

    document  := type value                 (0 bytes: the JSON null literal)
    type      := 0x00 small object | 0x01 large object | 0x02 small array | 0x03 large array
               | 0x04 literal | 0x05 int16 | 0x06 uint16 | 0x07 int32 | 0x08 uint32
               | 0x09 int64 | 0x0A uint64 | 0x0B double | 0x0C string | 0x0F opaque
    object    := count size key-entry{count} value-entry{count} key* value*
    array     := count size value-entry{count} value*
    count, size, offset := uint16 in the small format, uint32 in the large one
    key-entry   := key-offset key-length(uint16)
    value-entry := type offset-or-inlined-value
    literal   := 0x00 null | 0x01 true | 0x02 false
    string    := data-length utf8mb4-bytes
    opaque    := field-type(uint8) data-length bytes
    data-length := 7 bits a byte, least significant first, high bit set when a byte follows

Offsets count from the start of their object or array (the byte after its type). Literals,
int16 and uint16 are stored in the value entry itself ("inlined"); in the large format int32 and
uint32 are too. Object keys are sorted by length, then bytewise. Values are read through their
offsets, never sequentially: a document updated in place (partial JSON update) may have unused
bytes between values.

Python values: object -> dict (keys in stored order), array -> list, null/true/false ->
None/True/False, every integer type -> int, double -> float, string -> str (bytes that are not
UTF-8 kept with surrogateescape), opaque NEWDECIMAL -> decimal.Decimal, DATE -> datetime.date,
TIME -> datetime.timedelta, DATETIME and TIMESTAMP -> datetime.datetime, any other opaque value
(or a temporal one that is not a valid value, such as a zero date) -> JsonOpaque.

Building writes what MySQL's serializer writes for the value: the small format unless an offset
or size does not fit 16 bits (then that container, and every small container holding it, uses
the large one), keys sorted, the smallest integer type (int16, int32, int64; uint64 only above
the int64 range), a Decimal as an opaque NEWDECIMAL with the precision and scale of its digits,
date/datetime/timedelta as opaque DATE/DATETIME/TIME. What cannot be rebuilt byte for byte from
the Python value alone: integers MySQL typed by their origin (uint16/uint32 from UNSIGNED
columns, uint64 for text numbers above 2**32), a DECIMAL column's declared precision, TIMESTAMP
(rebuilt as DATETIME), non-minimal lengths, and the unused bytes of documents updated in place.
"""
from __future__ import annotations

from .binary import (MAX_DEPTH, JsonBinary, JsonBinaryError, JsonOpaque, decode_json_binary,
                     encode_json_binary)
from .diff import apply_json_diff, parse_json_path
from .text import json_text

__all__ = ["JsonBinary", "JsonBinaryError", "JsonOpaque", "MAX_DEPTH", "apply_json_diff",
           "decode_json_binary", "encode_json_binary", "json_text", "parse_json_path"]
