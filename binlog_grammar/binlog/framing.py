"""Header-only framing: walk a binlog's events by their common headers without parsing them.

For scans that only need where events are and what they are (stats by type, finding transaction
boundaries to split a file, skipping what filters drop). The header layout comes from the specs
(header.probe: type_code and event_length by the file's header length), so each header is one
unpack. Reads are buffered (8 MiB) and memory stays flat; a length
field that points past the end of the file, or below the header length, is a BinlogError naming
the file, the offset and the event type, and so is a damaged FORMAT_DESCRIPTION_EVENT (decided as
for every command, by reader.first_format_event).
"""
from __future__ import annotations

import os

from ..errors import BinlogError, TruncatedError
from ..generated import enums
from .header import probe
from .reader import MAGIC, first_format_event

CHUNK = 8 << 20


def _header_len(path) -> int:
    """The header length the file's first event (its FORMAT_DESCRIPTION_EVENT) gives, read with
    every check the reader makes of it (reader.first_format_event): a damaged FDE is the
    BinlogError every command reports."""
    return first_format_event(path)[1].header_len


def scan(path):
    """Yield (offset, type_code, event_length) for every event of the file, in order."""
    path = os.fspath(path)
    hl = _header_len(path)
    unpack = probe(hl).unpack_from  # (type_code, event_length)
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        pos = base = len(MAGIC)
        fh.seek(pos)
        buf = fh.read(CHUNK)  # buf holds the file from offset `base`
        while pos < size:
            rel = pos - base
            if rel + hl > len(buf):
                if rel >= len(buf):  # the last event ran past the buffer: continue from the file
                    fh.seek(pos)
                    buf = fh.read(CHUNK)
                else:
                    buf = buf[rel:] + fh.read(CHUNK)
                base, rel = pos, 0
                if len(buf) < hl:
                    raise TruncatedError(f"file ends inside an event header ({len(buf)} of {hl} bytes)",
                                         path, pos)
            code, length = unpack(buf, rel)
            if length < hl or pos + length > size:
                name = enums.EVENT_TYPE.get(code, f"type {code}")
                raise BinlogError(f"event_length {length} does not fit (header {hl} bytes, "
                                  f"{size - pos} bytes left in the file)", path, pos, name)
            yield pos, code, length
            pos += length
