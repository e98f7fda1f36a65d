"""What `stats` says about time: the span the input covers (its first and last event times) and,
for each largest and longest transaction listed, its first event's time and the tables it
touches.

The span is the least and the greatest event time of the files read (the events a header-only
walk, binlog.framing, meets: not those inside a MySQL compressed transaction), between
--start-position and --stop-position and inside the --start/--stop-datetime window. The compiled
`stats` (output/stats_fast.py) reads every event's header once, each either in its C loop
(output/stats_loop.py) or on its Python side, and takes the span in that same pass (`of`); every
other way of counting (the Python path, --jobs N, windows, damaged input) takes it after counting
by walking the files again (`span`), and the two give the same (tests/output/test_stats_span.py,
test_stats_loop.py). A listed transaction's time and tables are found by parsing the events
between its first and last byte (its TABLE_MAP events name the tables; a statement-based
transaction has none). Event times of 0 (the artificial ROTATE events of relay logs) are not
times. JSON carries the seconds and their UTC ISO form; the text adds the local zone's.
"""
from __future__ import annotations

import datetime as _dt
import mmap
import os
import struct
import sys
import time
from array import array
from itertools import islice

from ..binlog.framing import Walk, give_back
from ..binlog.parse import parse_event
from ..binlog.reader import first_format_event
from ..errors import BinlogGrammarError

UTC = _dt.timezone.utc


def utc_text(ts) -> str:
    return _dt.datetime.fromtimestamp(int(ts), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def local_text(ts) -> str:
    """In the zone the command runs in (TZ; `--utc` sets it), with the zone's name."""
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(int(ts)))


def span(files, start=None, stop=None, window=(None, None)) -> dict:
    """{"first": ts, "last": ts, "first_utc", "last_utc", "seconds"} of the events of `files`
    (paths; `start` (file index, offset) and `stop` (file index, offset) the positions read), the
    times inside `window` (epoch seconds, stop excluded) only; {} when there is none."""
    lo = hi = None
    for i, path in enumerate(files):
        try:
            _ev, state = first_format_event(path, verify_checksum=False)
            pos = start[1] if start is not None and start[0] == i else 4
            end = stop[1] if stop is not None and stop[0] == i else None
            for batch in _stamps(Walk(path, state.header_len, pos=pos, stop=end)):
                w_lo, w_hi = window
                if w_lo is not None or w_hi is not None:
                    batch = [t for t in batch if (w_lo is None or t >= w_lo)
                             and (w_hi is None or t < w_hi)]
                if 0 in batch:
                    batch = array("I", filter(None, batch))
                if not batch:
                    continue
                b_lo, b_hi = min(batch), max(batch)
                lo = b_lo if lo is None else min(lo, b_lo)
                hi = b_hi if hi is None else max(hi, b_hi)
        except (BinlogGrammarError, OSError):
            continue  # damage is the counting's to report
    return of(lo, hi)


def of(lo, hi) -> dict:
    """The span from its least and greatest time (None or a greatest of 0: there was none)."""
    if lo is None or not hi:
        return {}
    return {"first": lo, "last": hi, "first_utc": utc_text(lo), "last_utc": utc_text(hi),
            "seconds": hi - lo}


def _stamps(walk):
    """The event times of a walk, in batches (arrays of 4-byte counts): on the compiled walk
    read straight out of its records (no object per event: about 25 ms for a 1 GB binlog's
    two million events, where a Frame per event took 2.3 s), else from its Frames."""
    mod = walk.mod
    fmt = getattr(mod, "RECORD_FORMAT", "")
    fields = getattr(mod, "RECORD_FIELDS", ())
    if mod is None or "timestamp" not in fields or not fmt.startswith("<") \
            or array("I").itemsize != 4 or sys.byteorder != "little":
        yield from _stamps_slow(walk)
        return
    k = fields.index("timestamp")
    at, size = struct.calcsize("<" + fmt[1:1 + k]), struct.calcsize(fmt)
    if fmt[1 + k] != "I" or at % 4 or size % 4:
        yield from _stamps_slow(walk)
        return
    with open(walk.path, "rb") as fh:
        try:
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:
            return
        try:
            pos, end = walk.pos, walk.end
            length = min(walk.size, len(mm))
            dropped = 0
            while True:
                recs, pos, status, _code, _length = mod.walk(mm, length, pos, end, walk.hl,
                                                             False, 1 << 16)
                dropped = give_back(mm, dropped, pos)  # resident size flat as the file grows
                words = array("I")
                words.frombytes(recs)
                yield words[at // 4::size // 4]
                if status != mod.FULL:
                    return
        finally:
            mm.close()


def _stamps_slow(walk):
    frames = iter(walk)
    while True:
        batch = array("I", (f.timestamp or 0 for f in islice(frames, 1 << 16)))
        if not batch:
            return
        yield batch


def describe(summary: dict, formats=None) -> dict:
    """The summary of a listed transaction with its first event's time ("timestamp", and
    "timestamp_utc") and the tables its TABLE_MAP events name ("tables", db.table, in order).
    formats: a dict the calls of one run share, path -> the format state its first event gives
    (reading the FORMAT_DESCRIPTION_EVENT was a third of the time of ten such calls; a parse
    does not change what the state gives the next one)."""
    path, pos, end = summary.get("file"), summary.get("pos"), summary.get("end_pos")
    out = dict(summary)
    if not path or pos is None or not end or not os.path.exists(path):
        return out
    tables, first = [], None
    try:
        state = (formats if formats is not None else {}).get(path)
        if state is None:
            _ev, state = first_format_event(path, verify_checksum=False)
            if formats is not None:
                formats[path] = state
        with open(path, "rb") as fh:
            for f in Walk(path, state.header_len, pos=pos, stop=end):
                if first is None and f.timestamp:
                    first = f.timestamp
                fh.seek(f.offset)
                raw = fh.read(f.event_length)
                ev = parse_event(raw, state, file=path, offset=f.offset, verify_checksum=False)
                if ev.name == "TABLE_MAP_EVENT":
                    name = _name(ev.data)
                    if name not in tables:
                        tables.append(name)
    except (BinlogGrammarError, OSError, KeyError, UnicodeDecodeError):
        pass
    if first is not None:
        out["timestamp"] = first
        out["timestamp_utc"] = utc_text(first)
    out["tables"] = tables
    return out


def _name(data) -> str:
    def text(v):
        return v.decode("utf-8", "replace") if isinstance(v, (bytes, bytearray)) else str(v)

    return f"{text(data['db'])}.{text(data['table'])}"
