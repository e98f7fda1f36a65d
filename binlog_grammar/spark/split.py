"""Splitting binlog files at transaction boundaries, and reading one split.

No Spark here: the planner and the split reader are plain Python, used by the `binlog` data source
(binlog_grammar.spark.datasource) on the driver and in the workers.

The rule (also in the package docstring):
- every file is at least one split; a file is cut into several only when it is a binlog v4 file
  (it starts with a FORMAT_DESCRIPTION_EVENT) larger than the split size;
- a cut is made at the first transaction boundary at or after every `split_bytes` bytes from the
  previous cut. A boundary is the offset of a GTID event (every GTID flavour: MySQL's GTID,
  ANONYMOUS_GTID and tagged GTID, MariaDB's GTID_EVENT), the offset just after an XID_EVENT, or a
  QUERY_EVENT `BEGIN` that no GTID event precedes. The TABLE_MAP_EVENTs of a transaction are inside
  it, so every split holds the table maps its rows events need;
- the boundaries are found by a header-only scan: the 19-byte common headers are walked with
  `struct.unpack_from` over a buffered read (where type_code and event_length sit comes from the
  spec's header layout, binlog.header.probe, not written down here), and only a QUERY_EVENT that
  might be the `BEGIN` of a cut, and the GTID event a cut inherits, are parsed;
- each split carries what a worker needs to start in the middle of its file: the offset of the
  FORMAT_DESCRIPTION_EVENT in force (the worker reads it first, with reader.parse_event and
  reader.update_state, then frames events from the split's start), how many GTID events the input
  holds before it (so `tx_seq` numbers transactions over the whole input, as stream.Stream does),
  and the GTID in force at its start when it does not begin with a GTID event.

The scan also reports, per file, whether the server still had it open (the
LOG_EVENT_BINLOG_IN_USE_F flag of its FORMAT_DESCRIPTION_EVENT) and the last boundary in it: the
pipeline reads an open file only up to that boundary, so a transaction still being written is
read by the next run.
"""
from __future__ import annotations

import glob
import math
import os
import re
from dataclasses import asdict, dataclass, field
from typing import Iterable, Iterator, Optional

from ..errors import BinlogError
from ..binlog import boundaries as B
from ..binlog.gtid import gtid_of
from ..binlog.framing import Walk
from ..binlog.header import V4_HEADER_LEN, probe
from ..binlog.reader import (
    FDE_CODE, MAGIC, BinlogFile, FormatState, event_name, first_format_event, parse_event, update_state)
from . import fs as rfs
from .options import DEFAULT_SPLIT_BYTES

CHUNK = 4 << 20  # bytes read at a time by the header scan
IN_USE_NAME = "LOG_EVENT_BINLOG_IN_USE_F"
MIN_AUTO_SPLIT = 1 << 20  # min_partitions never makes splits smaller than this


def header_struct():
    """(struct.Struct reading (type_code, event_length) from a v4 header, header length): the
    spec's layout, from binlog.header."""
    return probe(V4_HEADER_LEN), V4_HEADER_LEN


# ---------------------------------------------------------------------------------------------
# inputs

_NUM = re.compile(r"(\d+)")


def natural_key(path: str):
    """Binlog order for names that sort wrongly as text (mysql-bin.999999 < mysql-bin.1000000)."""
    return [int(p) if p.isdigit() else p for p in _NUM.split(path)]


BESIDE = (".index", ".state")  # a server's files beside its binlogs: the index, the GTID state


def is_binlog(path: str) -> bool:
    """Does the file begin with the binlog magic bytes (a binlog or relay log, not an index,
    a .state file or anything else a server's folder holds)?"""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


_NUMBERED = re.compile(r"(.*)\.(\d+)$")


def binlog_key(path: str):
    """A binlog's place: its folder, its name, then its number (`mysql-bin.999999` before
    `mysql-bin.1000000`; a name without a number before the numbered files of that name)."""
    d, base = os.path.split(path)
    m = _NUMBERED.match(base)
    return (d.split(os.sep), m.group(1), int(m.group(2))) if m else (d.split(os.sep), base, -1)


def binlog_order(paths: Iterable[str], root: str = "") -> list:
    """Paths in binlog order (binlog_key), relative to `root`."""
    return sorted(paths, key=lambda p: binlog_key(os.path.relpath(p, root) if root else p))


def folder_binlogs(folder: str) -> list:
    """The binlog files under `folder` and its subfolders (by their magic bytes), in binlog
    order; BinlogError when there is none."""
    found = []
    for d, subdirs, names in os.walk(folder):
        subdirs.sort()
        found += [p for p in (os.path.join(d, n) for n in names) if os.path.isfile(p)
                  and is_binlog(p)]
    if not found:
        raise BinlogError("no binlog file in this folder (none begins with the binlog magic "
                          "bytes fe 62 69 6e)", folder)
    return binlog_order(found, folder)


def expand_paths(items: Iterable[str]) -> list:
    """Files in reading order: a file as given; a folder's binlog files, its subfolders' too
    (folder_binlogs); a glob's matches in binlog order (folders among them as folders, the
    `.index` and `.state` files a server keeps beside its binlogs left out); a `.index` file replaced by the files it lists. `file:` URIs
    are read as local paths. Raises BinlogError for a glob that matches no file, a folder
    holding none, or a missing file."""
    from ..binlog.stream import expand_inputs

    out = []
    for item in items:
        path = str(item)
        if rfs.is_remote(path):  # object storage, HDFS: listed through pyarrow (spark/fs.py)
            out += rfs.expand(path, lambda us: sorted(us, key=binlog_key))
            continue
        if path.startswith("file://"):
            path = path[len("file://"):]
        elif path.startswith("file:"):
            path = path[len("file:"):]
        if glob.has_magic(path):
            found = []
            for p in binlog_order(glob.glob(path)):
                if os.path.isdir(p):
                    found += folder_binlogs(p)
                elif p.endswith(BESIDE) and not is_binlog(p):
                    continue  # mariadb-bin.* matches the index and state files beside the logs
                else:  # a damaged file is read (and reported), not left out
                    found.append(p)
            if not found:
                raise BinlogError("no file matches this pattern", path)
            out += found
            continue
        if os.path.isdir(path):
            out += folder_binlogs(path)
            continue
        out += expand_inputs([path])
    for p in out:
        if rfs.is_remote(p):
            rfs.info(p)
        elif not os.path.exists(p):
            raise BinlogError("No such file or directory", p)
    return out


# ---------------------------------------------------------------------------------------------
# the plan

@dataclass
class Split:
    """A run of whole transactions of one file: events at offsets start <= offset < stop."""

    path: str
    file_index: int  # the file's place in the input (0: the first file)
    start: int  # offset of the first event read (4: from the file's start)
    stop: Optional[int]  # offset where the split ends (None: the end of the file)
    fde_pos: Optional[int] = None  # the FORMAT_DESCRIPTION_EVENT in force (None: start at 4)
    tx_seq_base: int = 0  # GTID events in the input before `start`
    gtid: Optional[str] = None  # GTID in force at `start` (None, or the one of a GTID event before)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "Split":
        return cls(**d)


@dataclass
class FileScan:
    """What the header scan learnt about one file."""

    path: str
    size: int
    splittable: bool = False  # binlog v4 with a readable FORMAT_DESCRIPTION_EVENT
    in_use: bool = False  # the server had the file open (IN_USE flag of its FDE)
    gtid_events: int = 0  # top-level GTID events in the whole file
    last_boundary: Optional[int] = None  # the last transaction boundary (None: none seen)
    scanned_to: int = 0  # where the header walk stopped (== size when it reached the end)
    cuts: list = field(default_factory=list)  # Split-like dicts: start, stop, fde_pos, gtids_before, gtid


class _Walker:
    """Walks the headers of one v4 file from an offset with a buffered read."""

    def __init__(self, fh, size, pos):
        self.fh = fh
        self.size = size
        self.buf = b""
        self.base = pos

    def header(self, pos, hl):
        """(type_code, event_length) of the header at `pos`, or None when it is not all there."""
        end = self.base + len(self.buf)
        if pos < self.base or pos + hl > end:
            if self.base <= pos < end:
                rest = self.buf[pos - self.base:]
            else:
                self.fh.seek(pos)
                rest = b""
            self.buf = rest + self.fh.read(CHUNK)
            self.base = pos
            if len(self.buf) < hl:
                return None
        return probe(hl).unpack_from(self.buf, pos - self.base)

    def walk(self, pos, stop, hl):
        """(offset, type_code, event_length) of each whole event from `pos` until `stop`; it
        ends early at an event whose header is cut short, whose length is below the header's or
        runs past the end of the file (damage, or a last event still being written: the worker
        that reads it reports it). The caller may stop early. The walk is binlog.framing's, on
        the backend binlog_grammar.native chooses (the compiled one releases the GIL)."""
        return iter(Walk(self.fh.name, hl, pos, stop, size=self.size, short=True))

    def event_bytes(self, pos, length):
        if self.base <= pos and pos + length <= self.base + len(self.buf):
            return self.buf[pos - self.base:pos + length - self.base]
        here = self.fh.tell()
        self.fh.seek(pos)
        raw = self.fh.read(length)
        self.fh.seek(here)
        return raw


def _read_first_event(fh, path, size):
    """The file's FORMAT_DESCRIPTION_EVENT, checked as every command checks it
    (reader.first_format_event), or None: not a v4 file, or damaged at once (the worker, reading
    the file as one split, reports it)."""
    try:
        ev = first_format_event(path)[0]
    except BinlogError:
        return None
    return ev if ev.type is not None and ev.type.code == FDE_CODE else None


def scan_file(path: str, split_bytes: Optional[int] = None, start: Optional[int] = None) -> FileScan:
    """Walk the headers of `path`; cut it every `split_bytes` (None: never) at a transaction
    boundary, beginning at `start` (a boundary; None: the file's start)."""
    uri = path
    if rfs.is_remote(path):  # the header walk reads the whole object: one local copy
        path = rfs.local_copy(path)
    size = os.path.getsize(path)
    out = FileScan(uri, size)
    with open(path, "rb", buffering=0) as fh:
        fde = _read_first_event(fh, path, size)
        if fde is None:  # not v4 (or damaged at once): one split, read by BinlogFile
            out.cuts = [dict(start=start or len(MAGIC), stop=None, fde_pos=None, gtids_before=0,
                             gtid=None)]
            return out
        state = FormatState()
        update_state(state, fde)
        out.splittable = True
        flags = fde.header.get("flags")
        out.in_use = IN_USE_NAME in (getattr(flags, "names", None) or ())
        hl = state.header_len
        names = {}
        for code in range(256):
            names[code] = event_name(code, state)
        # where a cut may go, by the roles of the specs (binlog/boundaries.py): before a GTID
        # event, after a commit (XID), and before a statement that is a BEGIN
        roles = {code: B.ROLE_OF.get(n) for code, n in names.items()}
        gtid_codes = {c for c, r in roles.items() if r in B.CUT_BEFORE_ROLES}
        query_codes = {c for c, r in roles.items() if r == B.STATEMENT_ROLE}
        xid_codes = {c for c, r in roles.items() if r in B.CUT_AFTER_ROLES}
        stop_codes = {c for c, n in names.items() if n == "START_ENCRYPTION_EVENT"}
        fde_codes = {FDE_CODE}
        first_pos = len(MAGIC)
        begin = start if start is not None and start > first_pos else first_pos
        walker = _Walker(fh, size, first_pos)
        scanned_to = first_pos  # where the walk stopped
        fde_pos = first_pos
        gtids = 0
        last_gtid_pos = None  # offset of the last GTID event seen
        prev_gtid = False  # the previous event was a GTID event
        after_xid = False  # the previous event was an XID_EVENT
        cuts = []
        next_cut = None  # offset from which the next cut is wanted
        for pos, code, length in walker.walk(first_pos, size, hl):
            is_gtid = code in gtid_codes
            if not cuts and pos >= begin:
                cuts.append(dict(start=begin, stop=None, fde_pos=fde_pos, gtids_before=gtids,
                                 gtid_pos=None if is_gtid and pos == begin else last_gtid_pos))
                next_cut = begin + split_bytes if split_bytes else None
            boundary = is_gtid or after_xid
            if not boundary and code in query_codes and not prev_gtid and (
                    next_cut is not None and pos >= next_cut):
                boundary = _is_begin(walker, pos, length, state, path)
            if boundary:
                out.last_boundary = pos
                if next_cut is not None and pos >= next_cut:
                    cuts[-1]["stop"] = pos
                    cuts.append(dict(start=pos, stop=None, fde_pos=fde_pos, gtids_before=gtids,
                                     gtid_pos=None if is_gtid else last_gtid_pos))
                    next_cut = pos + split_bytes
            if is_gtid:
                gtids += 1
                last_gtid_pos = pos
            elif code in fde_codes and pos != first_pos:
                fde_pos = pos
            prev_gtid = is_gtid
            after_xid = code in xid_codes
            scanned_to = pos + length
            if code in stop_codes:
                break  # the rest is ciphertext
        out.scanned_to = scanned_to
        if after_xid and scanned_to == size:
            out.last_boundary = scanned_to
        out.gtid_events = gtids
        if not cuts:  # `start` is at (or past) the end of what the scan could walk
            cuts.append(dict(start=begin, stop=None, fde_pos=fde_pos, gtids_before=gtids,
                             gtid_pos=last_gtid_pos))
        for c in cuts:
            gpos = c.pop("gtid_pos")
            c["gtid"] = _gtid_at(walker, gpos, state, path) if gpos is not None else None
            if c["start"] == first_pos:
                c["fde_pos"] = None
        out.cuts = cuts
    return out


def _is_begin(walker, pos, length, state, path) -> bool:
    raw = walker.event_bytes(pos, length)
    try:
        ev = parse_event(raw, state, file=path, offset=pos, verify_checksum=False)
        return B.boundary(ev) == B.BEGIN
    except BinlogError:
        return False


def _gtid_at(walker, pos, state, path):
    h = walker.header(pos, V4_HEADER_LEN)
    if h is None:
        return None
    raw = walker.event_bytes(pos, h[1])
    try:
        return gtid_of(parse_event(raw, state, file=path, offset=pos, verify_checksum=False))
    except BinlogError:
        return None


def plan(paths: list, split_bytes: Optional[int] = DEFAULT_SPLIT_BYTES, min_partitions: int = 0,
         starts: Optional[dict] = None, stops: Optional[dict] = None, tx_seq_base: int = 0,
         scans: Optional[list] = None) -> tuple:
    """Splits of `paths` (in order) and the FileScans behind them.

    `split_bytes` None or 0: one split per file. `min_partitions`: lower the split size so the
    input makes about that many splits (never below 1 MiB). `starts` / `stops`: per path, where to
    begin (a transaction boundary, as a previous plan's `last_boundary` or a file's end) and where
    to end (an offset; the pipeline's committed end of an open file). `tx_seq_base`: GTID events
    before the first file (a previous run's count). `scans`: FileScans made already (in parallel).
    """
    starts = starts or {}
    stops = stops or {}
    size = split_bytes or None
    if min_partitions and min_partitions > 0:
        total = sum(_size(p) for p in paths)
        auto = max(MIN_AUTO_SPLIT, math.ceil(total / min_partitions))
        size = min(size, auto) if size else auto
    if scans is None:
        scans = [scan_file(p, size, starts.get(p)) for p in paths]
    splits = []
    seq = tx_seq_base
    for i, (p, sc) in enumerate(zip(paths, scans)):
        stop_at = stops.get(p)
        for c in sc.cuts:
            if stop_at is not None and c["start"] >= stop_at:
                break
            stop = c["stop"]
            if stop_at is not None and (stop is None or stop > stop_at):
                stop = stop_at
            splits.append(Split(p, i, c["start"], stop, c["fde_pos"], seq + c["gtids_before"],
                                c["gtid"]))
        seq += sc.gtid_events
    return splits, scans


def _size(p) -> int:
    try:
        return rfs.size(p) if rfs.is_remote(p) else os.path.getsize(p)
    except (OSError, BinlogError):
        return 0


def local_path(split: "Split") -> str:
    """Where the split's bytes are read: its path, or for a remote URI a sparse local copy of the
    ranges it needs (spark/fs.py)."""
    if not rfs.is_remote(split.path):
        return split.path
    return rfs.split_copy(split.path, split.start, split.stop, split.fde_pos)


# ---------------------------------------------------------------------------------------------
# reading one split

class SplitReader:
    """The events of one split, in order, as BinlogFile yields them (`state` is the FormatState
    in force; errors name the file, the offset and the event type). With skip_damaged, damaged
    events are stepped over and listed on `damage` (BinlogFile's)."""

    def __init__(self, split: Split, verify_checksum=True, skip_damaged=False):
        self.split = split
        self.verify_checksum = verify_checksum
        self.skip_damaged = skip_damaged
        self.state = FormatState()
        self._file = None

    @property
    def damage(self) -> list:
        return self._file.damage if self._file is not None else []

    def __iter__(self) -> Iterator:
        sp = self.split
        kwargs = {"skip_damaged": True} if self.skip_damaged else {}
        f = BinlogFile(sp.path, self.verify_checksum, local=local_path(sp),
                       start=sp.start if sp.fde_pos is not None else None, format_at=sp.fde_pos,
                       **kwargs)
        self.state = f.state
        self._file = f
        for ev in f:
            if sp.stop is not None and ev.offset >= sp.stop:
                return
            if ev.offset >= sp.start:
                yield ev


# ---------------------------------------------------------------------------------------------
# a split as a stream

def split_stream(split: Split, paths: list, filters=None, verify_checksum=True, schemas=None,
                 skip_damaged=False, raw_rows=False):
    """A stream.Stream over one split: its events, transactions and row changes are those the
    plain reader gives for the same offsets of the same file over the whole input `paths` (the
    filters' positions apply to the first and the last of `paths`; `tx_seq` counts from the
    split's `tx_seq_base`). skip_damaged and raw_rows as stream.open_stream's: damaged events
    stepped over (on the stream's `damage` once read), rows events that cannot be decoded given
    with no changes and the reason (`undecoded`)."""
    from ..binlog.payload import inner_events_or_damage
    from ..binlog.rows import RowDecoder
    from ..binlog.stream import Stream, StreamEvent

    class SplitStream(Stream):
        def _all_events(self):
            sp = split
            decoder = RowDecoder(self.schemas)
            reader = SplitReader(sp, self.verify_checksum, self.skip_damaged)
            gtid = sp.gtid
            seq = sp.tx_seq_base
            i = sp.file_index
            verify = self.verify_checksum
            damage = [] if self.skip_damaged else None
            on_undecoded = self._on_undecoded
            what = _kinds()
            tables = decoder.tables
            try:
                for ev in reader:
                    et = ev.type
                    kind = what.get(et.code) if et is not None else None
                    if kind is None:  # most events: nothing to look up
                        yield i, StreamEvent(ev, None, gtid, decoder, seq, None)
                        continue
                    if kind == "rows":  # the table id rows_head() read (binlog/batch.py)
                        head = getattr(ev, "_head", None)
                        yield i, StreamEvent(ev, tables.get(head[0] if head else
                                                            int(ev.data.table_id)),
                                             gtid, decoder, seq, on_undecoded)
                        continue
                    if kind == "map":
                        yield i, StreamEvent(ev, decoder.table_map(ev), gtid, decoder, seq, None)
                        continue
                    if kind == "gtid":
                        gtid = gtid_of(ev)
                        seq += 1
                    for e in inner_events_or_damage(ev, reader.state, verify, damage):
                        table = None
                        if e.type is not None and e.type.name == "TABLE_MAP_EVENT":
                            table = decoder.table_map(e)
                        elif e.type is not None and e.type.row_op:
                            table = decoder.tables.get(int(e.data.table_id))
                        yield i, StreamEvent(e, table, gtid, decoder, seq,
                                             on_undecoded if e.type is not None
                                             and e.type.row_op else None)
            finally:
                self.damage += reader.damage + (damage or [])

    s = SplitStream([], filters, verify_checksum, schemas, skip_damaged, raw_rows=raw_rows)
    s.paths = list(paths)
    return s


_KINDS: dict = {}


def _kinds() -> dict:
    """What the split stream looks at in an event, by type code: "rows" (its table), "map" (a
    TABLE_MAP_EVENT), "gtid" (a GTID starts a transaction; events inside it too, if any),
    "inner" (events held inside it); an event of any other code is given as it is."""
    if not _KINDS:
        from ..generated.catalog import EVENTS

        for code, et in EVENTS.items():
            if any(d.target == "events" for d in et.decode):
                _KINDS[code] = "inner"
            if et.role in B.GTID_ROLES:
                _KINDS[code] = "gtid"
            if et.name == "TABLE_MAP_EVENT":
                _KINDS[code] = "map"
            if et.row_op:
                _KINDS[code] = "rows"
    return _KINDS


def table_maps(split: Split, schemas=None):
    """(rows.Table, event) of every TABLE_MAP_EVENT in the split, those inside
    TRANSACTION_PAYLOAD_EVENTs too. Only table maps and payload events are parsed; checksums are
    not verified (reading the changes does that)."""
    from ..generated.catalog import EVENTS
    from ..binlog.reader import inner_events
    from ..binlog.rows import RowDecoder

    decoder = RowDecoder(schemas)
    path = local_path(split)
    with open(path, "rb", buffering=0) as fh:
        size = os.fstat(fh.fileno()).st_size
        fde = _read_first_event(fh, path, size)
        if fde is None:  # binlog v1/v3 (or damaged at once): parse it all
            reader = SplitReader(split, False)
            for ev in reader:
                for e in [ev, *_inner(ev, reader.state)]:
                    if e.type is not None and e.type.name == "TABLE_MAP_EVENT":
                        yield decoder.table_map(e), e
            return
        state = FormatState()
        update_state(state, fde)
        hl = state.header_len
        walker = _Walker(fh, size, len(MAGIC))
        if split.fde_pos not in (None, len(MAGIC)):
            h = walker.header(split.fde_pos, hl)
            if h is not None:
                update_state(state, parse_event(walker.event_bytes(split.fde_pos, h[1]), state,
                                                file=path, offset=split.fde_pos,
                                                verify_checksum=False))
        wanted = {}
        for code in range(256):
            et = EVENTS.get(state.event_code(code))
            if et is None:
                continue
            if et.name == "TABLE_MAP_EVENT":
                wanted[code] = "map"
            elif any(d.target == "events" for d in et.decode):
                wanted[code] = "payload"
            elif code == FDE_CODE:
                wanted[code] = "fde"
        seen = set()
        stop = split.stop if split.stop is not None else size
        for pos, code, length in walker.walk(split.start, stop, hl):
            kind = wanted.get(code)
            if kind is not None and not (kind == "fde" and pos == len(MAGIC)):
                raw = walker.event_bytes(pos, length)
                if kind != "map" or raw[hl:] not in seen:
                    if kind == "map":
                        seen.add(raw[hl:])
                    ev = parse_event(raw, state, file=path, offset=pos, verify_checksum=False)
                    if kind == "fde":
                        update_state(state, ev)
                    elif kind == "map":
                        yield decoder.table_map(ev), ev
                    else:
                        for e in inner_events(ev, state, False):
                            if e.type is not None and e.type.name == "TABLE_MAP_EVENT":
                                yield decoder.table_map(e), e


def _inner(ev, state):
    from ..binlog.reader import inner_events

    if ev.type is not None and any(d.target == "events" for d in ev.type.decode):
        return list(inner_events(ev, state, False))
    return []
