"""Header-only framing: walk a binlog's events by their common headers without parsing them.

For scans that only need where events are and what they are (stats by type, finding transaction
boundaries to split a file, skipping what filters drop). The header layout comes from the specs
(header.layout: the common header's fields by the file's header length), so each header is one
unpack. A length field that points past the end of the file, or below the header length, is a
BinlogError naming the file, the offset and the event type, and so is a damaged
FORMAT_DESCRIPTION_EVENT (decided as for every command, by reader.first_format_event).

Two backends walk, with identical results (tests/native/): the compiled one (generated from the
same specs into generated/native/, binlog_grammar.native) over the file mapped into memory, with
the GIL released, and the Python one below, the reference, over buffered reads (8 MiB; memory
stays flat). binlog_grammar.native decides which runs.
"""
from __future__ import annotations

import mmap
import os
import struct
import zlib
from collections import namedtuple
from operator import itemgetter

from .. import native
from ..errors import BinlogError, TruncatedError
from ..generated import enums
from .header import V4_HEADER_LEN, layout, probe
from .parse import CHECKSUM_LEN
from .reader import MAGIC, first_format_event

CHUNK = 8 << 20
BATCH = 1 << 16  # records the compiled walk writes per call
GIVE_BACK = 32 << 20  # the compiled walk drops the pages it has passed in steps of this size

# One event as a walk sees it: its offset, the common header's fields (in the spec's order; None
# for a field the file's header length lacks) and whether its CRC32 footer matches (None: not
# checked).
Frame = namedtuple("Frame", ("offset",) + layout(V4_HEADER_LEN)[1] + ("checksum_ok",))
# Why a walk stopped: "end" (it reached `stop`), "short_header" (`left` bytes, fewer than a
# header, at `pos`), "bad_length" (the event at `pos` has length `length`, below the header's or
# past the end of the file; `type_code` is its type).
Stop = namedtuple("Stop", "status pos left type_code length")
_CRC = {-1: None, 0: False, 1: True}


def compiled():
    """The compiled framing module when it runs and was built from the specs this package has
    (a stale build is refused: BackendError when the compiled backend was asked for)."""
    mod = native.framing()
    if mod is None:
        return None
    if mod.RECORD_FIELDS != Frame._fields or any(
            layout(hl)[1] != fields for hl, fields in mod.LAYOUTS.items()):
        if native.requested() == "c":
            raise native.BackendError("the compiled backend was built from other specs: "
                                      "rebuild it (pip install -e .)")
        return None
    return mod


class Walk:
    """The events of the file at `path` from offset `pos` while the offset is below `stop`, as
    Frames (or, with short=True, as (offset, type_code, event_length)), headers of `header_len`
    bytes. Event lengths are checked against `size` (default: the file's size). It ends at
    `stop`, at a header cut short or at a length that does not fit; `.stop` (a Stop) says which
    once the iteration is over. With `checksums`, each event's CRC32 footer is checked.
    `backend`: "c", "python" or None (binlog_grammar.native's choice)."""

    def __init__(self, path, header_len, pos=len(MAGIC), stop=None, size=None, checksums=False,
                 short=False, backend=None):
        self.path = os.fspath(path)
        self.size = os.path.getsize(self.path) if size is None else size
        self.hl, self.pos, self.checksums, self.short = header_len, pos, checksums, short
        self.end = self.size if stop is None else min(stop, self.size)  # events start below it
        self.stop = None
        mod = compiled() if backend in (None, "c") else None
        if backend == "c" and mod is None:
            raise native.BackendError("the compiled backend is not available")
        # the compiled walk knows the spec's layouts: every length from the full one up, and the
        # shorter ones exactly
        full = max(mod.LAYOUTS) if mod is not None else None
        self.mod = mod if mod is not None and (header_len >= full or header_len in mod.LAYOUTS) \
            else None
        if backend == "c" and self.mod is None:
            raise native.BackendError(f"no compiled layout for a {header_len}-byte header")

    def __iter__(self):
        return self._c() if self.mod is not None else self._python()

    # -- the reference: buffered reads -------------------------------------------------------
    def _python(self):
        hl, size, pos, short = self.hl, self.size, self.pos, self.short
        names = layout(hl)[1]
        unpack = probe(hl, names).unpack_from
        where = [names.index(f) if f in names else None for f in Frame._fields[1:-1]]
        code_at, length_at = names.index("type_code"), names.index("event_length")
        with open(self.path, "rb") as fh:
            base, buf = pos, b""  # buf holds the file from offset `base`
            while pos < self.end:
                rel = pos - base
                if rel + hl > len(buf):
                    if rel >= len(buf):  # the last event ran past the buffer: continue from the file
                        fh.seek(pos)
                        buf = fh.read(CHUNK)
                    else:
                        fh.seek(base + len(buf))
                        buf = buf[rel:] + fh.read(CHUNK)
                    base, rel = pos, 0
                    if len(buf) < hl:
                        self.stop = Stop("short_header", pos, len(buf), None, None)
                        return
                values = unpack(buf, rel)
                code, length = values[code_at], values[length_at]
                if length < hl or pos + length > size:
                    self.stop = Stop("bad_length", pos, size - pos, code, length)
                    return
                if short:
                    yield pos, code, length
                else:
                    ok = None
                    if self.checksums:
                        if rel + length <= len(buf):
                            raw = buf[rel:rel + length]
                        else:
                            fh.seek(pos)
                            raw = fh.read(length)
                        ok = zlib.crc32(raw[:-CHECKSUM_LEN]) == int.from_bytes(raw[-CHECKSUM_LEN:],
                                                                                "little")
                    yield Frame(pos, *(None if i is None else values[i] for i in where), ok)
                pos += length
        self.stop = Stop("end", pos, size - pos, None, None)

    # -- the compiled walk over the mapped file ---------------------------------------------
    def _c(self):
        mod, hl, pos = self.mod, self.hl, self.pos
        fields = mod.RECORD_FIELDS
        unpack = struct.Struct(mod.RECORD_FORMAT).iter_unpack
        pick = itemgetter(0, fields.index("type_code"), fields.index("event_length"))
        present = mod.LAYOUTS[hl] if hl in mod.LAYOUTS else mod.LAYOUTS[max(mod.LAYOUTS)]
        absent = [i for i, f in enumerate(fields[1:-1], 1) if f not in present]
        with open(self.path, "rb") as fh:
            try:
                mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError:  # an empty file cannot be mapped
                mm = b""
            try:
                size = min(self.size, len(mm))
                dropped = 0  # the map's pages before this are given back (see give_back)
                while True:
                    recs, pos, status, code, length = mod.walk(mm, size, pos, self.end, hl,
                                                               self.checksums, BATCH)
                    dropped = give_back(mm, dropped, pos)
                    if self.short:
                        yield from map(pick, unpack(recs))
                    elif absent:
                        for r in unpack(recs):
                            r = list(r)
                            for i in absent:
                                r[i] = None
                            r[-1] = _CRC[r[-1]]
                            yield Frame._make(r)
                    else:
                        for r in unpack(recs):
                            yield Frame(*r[:-1], _CRC[r[-1]])
                    if status != mod.FULL:
                        break
            finally:
                if isinstance(mm, mmap.mmap):
                    mm.close()
        if status == mod.SHORT_HEADER:
            self.stop = Stop("short_header", pos, size - pos, None, None)
        elif status == mod.BAD_LENGTH:
            self.stop = Stop("bad_length", pos, self.size - pos, code, length)
        else:
            self.stop = Stop("end", pos, self.size - pos, None, None)


def give_back(mm, dropped: int, pos: int) -> int:
    """Drop the mapped pages the walk has passed (before `pos`) from this process's memory, as
    it goes: the pages of a map count in its resident size while it stands, so a walk over a
    1 GB file would otherwise hold 1 GB by its end (the pages stay in the page cache). Returns
    where the pages kept start."""
    cut = pos - pos % mmap.PAGESIZE
    if isinstance(mm, mmap.mmap) and cut - dropped >= GIVE_BACK:
        try:
            mm.madvise(mmap.MADV_DONTNEED, dropped, cut - dropped)
        except (AttributeError, OSError, ValueError):  # no madvise here: the pages stay
            return cut
        return cut
    return dropped


def _header_len(path) -> int:
    """The header length the file's first event (its FORMAT_DESCRIPTION_EVENT) gives, read with
    every check the reader makes of it (reader.first_format_event): a damaged FDE is the
    BinlogError every command reports."""
    return first_format_event(path)[1].header_len


def raise_stop(walk: Walk):
    """The BinlogError of a walk that stopped on damage (nothing for one that reached its end)."""
    st, hl = walk.stop, walk.hl
    if st.status == "short_header":
        raise TruncatedError(f"file ends inside an event header ({st.left} of {hl} bytes)",
                             walk.path, st.pos)
    if st.status == "bad_length":
        name = enums.EVENT_TYPE.get(st.type_code, f"type {st.type_code}")
        raise BinlogError(f"event_length {st.length} does not fit (header {hl} bytes, "
                          f"{st.left} bytes left in the file)", walk.path, st.pos, name)


def frames(path, checksums=None, backend=None):
    """Yield a Frame for every event of the file, in order; BinlogError at damage. `checksums`:
    check the CRC32 footers (None: when the file's FORMAT_DESCRIPTION_EVENT says it has them)."""
    path = os.fspath(path)
    ev, state = first_format_event(path)
    if checksums is None:
        checksums = state.checksum_alg == 1
    walk = Walk(path, state.header_len, checksums=checksums, backend=backend)
    yield from walk
    raise_stop(walk)


def scan(path, backend=None):
    """Yield (offset, type_code, event_length) for every event of the file, in order."""
    path = os.fspath(path)
    walk = Walk(path, _header_len(path), short=True, backend=backend)
    yield from walk
    raise_stop(walk)
