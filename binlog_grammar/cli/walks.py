"""Walks of a file's headers that give only the events a reader wants (cli/pieces.py: the
statements before a split, for its character sets; cli/replay_jobs.py: the statements and last
GTID before a split, for the replay script's session)."""
from __future__ import annotations

import mmap
import struct
from operator import itemgetter


class Last:
    """What picked() finds of the events whose code `codes` (a bytearray of 256) marks: the
    last one before where the walk is (`ref`: offset, type code, length; None: none yet)."""

    def __init__(self, codes):
        self.codes, self.ref = codes, None


def picked(walk, keep, last=None):
    """The (offset, type code, length) of the events of a short Walk whose code `keep` (a
    bytearray of 256, which the caller may change as it reads) marks, and walk.stop as the walk
    sets it: the compiled walk's records picked by their codes in C (bytes.translate, find),
    not each made a tuple in Python (0.06 -> 0.02 s of a worker's CPU on the 127 MB binlog).
    `last`: a Last, whose `ref` is, at each record given and once the walk ends, the (offset,
    type code, length) of the last event before it whose code last.codes marks (found by
    bytes.rfind, not given one by one: a GTID event per transaction)."""
    mod = walk.mod
    if mod is None:
        for r in walk:
            if last is not None and last.codes[r[1]]:
                last.ref = r
            elif keep[r[1]]:
                yield r
        return
    from ..binlog.framing import BATCH, Stop, give_back

    fmt, fields = mod.RECORD_FORMAT, mod.RECORD_FIELDS
    size, at_code = struct.calcsize(fmt), struct.calcsize(fmt[:1 + fields.index("type_code")])
    record = struct.Struct(fmt)
    pick = itemgetter(0, fields.index("type_code"), fields.index("event_length"))
    pos = walk.pos
    with open(walk.path, "rb") as fh:
        try:
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # an empty file cannot be mapped
            mm = b""
        try:
            end = min(walk.size, len(mm))
            dropped = 0
            while True:
                recs, pos, status, code, length = mod.walk(mm, end, pos, walk.end, walk.hl,
                                                           walk.checksums, BATCH)
                dropped = give_back(mm, dropped, pos)  # resident size flat as the file grows
                codes, i = recs[at_code::size], 0
                marks = codes.translate(bytes(keep))
                lasts = codes.translate(bytes(last.codes)) if last is not None else None
                while True:
                    i = marks.find(1, i)
                    if i < 0:
                        break
                    before = bytes(keep)
                    j = lasts.rfind(1, 0, i) if lasts is not None else -1
                    if j >= 0:
                        last.ref = pick(record.unpack_from(recs, j * size))
                    yield pick(record.unpack_from(recs, i * size))
                    i += 1
                    if keep != before:  # the caller changed what it wants: mark the rest again
                        marks = codes.translate(bytes(keep))
                j = lasts.rfind(1) if lasts is not None else -1
                if j >= 0:
                    last.ref = pick(record.unpack_from(recs, j * size))
                if status != mod.FULL:
                    break
        finally:
            if isinstance(mm, mmap.mmap):
                mm.close()
    if status == mod.SHORT_HEADER:
        walk.stop = Stop("short_header", pos, end - pos, None, None)
    else:
        bad = status == mod.BAD_LENGTH
        walk.stop = Stop("bad_length" if bad else "end", pos, walk.size - pos,
                         code if bad else None, length if bad else None)


__all__ = ["picked", "Last"]
