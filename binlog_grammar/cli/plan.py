"""The split plan of `--jobs N` on the compiled header walk: the cuts spark.split.scan_file makes,
found without a Python step per event.

scan_file walks the headers in Python, one loop turn per event (about 0.1 s on a 127 MB binlog,
before any worker can start). Here the compiled walk (native._framing.walk) gives the events'
records in batches; the type codes of a batch are one bytes object (every record's code byte, a
slice with a step), in which a regular expression finds the next event that may make a cut and
bytes.count counts the GTID events before it. Only the offsets of a binary search, the events
that may be a `BEGIN` and the GTID event a cut inherits are looked at one by one.

The rule is scan_file's (a cut at the first transaction boundary at or after every `split_bytes`
from the previous cut: before a GTID event, after an XID, before a `BEGIN` that no GTID event
precedes), and so are the cuts: tests/cli/test_jobs_plan.py compares the two on the corpus, the
samples and damaged files for many split sizes. A file this cannot plan (no compiled walk, a
header layout it lacks, not binlog v4, damage or encryption before the end) gives None: the
caller runs scan_file, which says what to do with it.
"""
from __future__ import annotations

import mmap
import os
import re
import struct

from .. import native
from ..binlog import boundaries as B
from ..binlog.gtid import gtid_of
from ..binlog.reader import FDE_CODE, MAGIC, FormatState, event_name, first_format_event
from ..binlog.reader import parse_event, update_state
from ..errors import BinlogError
from ..generated.catalog import EVENTS

BATCH = 1 << 16  # records per compiled walk (2 MB of records at most in memory)
# the events whose offsets a cut lists for dump's replay form (cli/replay_jobs.py: its worker
# runs them instead of walking the file before its split), up to STATE_REFS of them; after one
# of REPLAY_UNSURE (and payload events) the cut lists none and the worker walks itself
REPLAY_STATE = ("FORMAT_DESCRIPTION_EVENT", "QUERY_EVENT", "QUERY_COMPRESSED_EVENT")
REPLAY_UNSURE = ("BEGIN_LOAD_QUERY_EVENT", "APPEND_BLOCK_EVENT", "EXECUTE_LOAD_QUERY_EVENT",
                 "START_ENCRYPTION_EVENT")
STATE_REFS = 256
_PAYLOADS = frozenset(c for c, e in EVENTS.items() if any(d.target == "events" for d in e.decode))
DROP = 16 << 20  # bytes of the file walked before their pages are given back
_OFFSET = struct.Struct("<Q")


class Plan:
    """The cuts of a whole file (scan_file's dicts: start, stop, fde_pos, gtids_before, gtid) and
    its GTID events."""

    def __init__(self, cuts, gtid_events):
        self.cuts, self.gtid_events = cuts, gtid_events


def plan_cuts(path, split_bytes):
    """The Plan of a whole binlog v4 file cut every `split_bytes` (None: one cut), or None when
    cut_walk cannot plan it or its walk stops before the file's end (see the module)."""
    walk = cut_walk(path, split_bytes)
    if walk is None:
        return None
    cuts = list(walk)
    return Plan(cuts, walk.gtid_events) if walk.whole else None


def cut_walk(path, split_bytes):
    """A CutWalk of the file, or None when the compiled walk cannot plan it."""
    mod = native.framing()
    if mod is None:
        return None
    try:
        size = os.path.getsize(path)
        fde = first_format_event(path)[0]
    except (OSError, BinlogError):
        return None
    if fde.type is None or fde.type.code != FDE_CODE:
        return None
    state = FormatState()
    update_state(state, fde)
    hl = state.header_len
    if not (hl >= max(mod.LAYOUTS) or hl in mod.LAYOUTS):
        return None
    fmt, fields = mod.RECORD_FORMAT, mod.RECORD_FIELDS
    if fmt[:2] != "<Q" or len(fmt) != len(fields) + 1 or fields[0] != "offset" \
            or fmt[1 + fields.index("type_code")] != "B":
        return None  # a record layout this was not written for

    def at(name):  # where a field of the record is (its format is one letter per field)
        return struct.calcsize("<" + fmt[1:1 + fields.index(name)])

    roles = {code: B.ROLE_OF.get(event_name(code, state)) for code in range(256)}
    return CutWalk(mod, path, size, hl, split_bytes, _Codes(roles, state), state, at("type_code"),
                   struct.Struct("<" + fmt[1 + fields.index("event_length")]), at("event_length"))


class _Codes:
    """The type codes of the cut rule, as scan_file computes them from the specs' roles."""

    def __init__(self, roles, state):
        self.gtid = sorted(c for c, r in roles.items() if r in B.CUT_BEFORE_ROLES)
        self.query = frozenset(c for c, r in roles.items() if r == B.STATEMENT_ROLE)
        self.xid = frozenset(c for c, r in roles.items() if r in B.CUT_AFTER_ROLES)
        # the walk of scan_file stops after these: the rest is ciphertext
        self.stops = [c for c in range(256) if event_name(c, state) == "START_ENCRYPTION_EVENT"]
        self.gtid_set = frozenset(self.gtid)
        wanted = sorted(self.gtid_set | self.query | self.xid)
        self.any = re.compile(b"[" + b"".join(re.escape(bytes([c])) for c in wanted) + b"]") \
            if wanted else None
        self.gtid_bytes = [bytes([c]) for c in self.gtid]
        # what dump's replay form reads before a split (cli/replay_jobs.py): the statements and
        # format events; after one of `unsure`, the split's worker walks the file itself
        names = {c: event_name(c, state) for c in range(256)}
        self.state = frozenset(c for c, n in names.items() if n in REPLAY_STATE)
        self.unsure = frozenset(c for c, n in names.items() if n in REPLAY_UNSURE) | _PAYLOADS
        marked = sorted(self.state | self.unsure)
        self.state_any = re.compile(b"[" + b"".join(re.escape(bytes([c])) for c in marked)
                                    + b"]") if marked else None


class CutWalk:
    """Iterating gives the file's cuts as the walk finds them, each once its end is known (the
    last, stop None, at the file's end). Then `whole` says whether the walk reached the end and
    `gtid_events` counts the file's GTID events; a walk that stopped early (damage, encryption:
    scan_file's walk stops there too) has yielded the cuts before it, and `rest` is where the
    cut it could not end starts."""

    FIRST_BATCH = 2048  # records of the first walk (the first cuts come early), doubled up to BATCH

    def __init__(self, mod, path, size, hl, split_bytes, codes_of, state, code_at, length,
                 length_at):
        self.mod, self.path, self.size, self.hl = mod, path, size, hl
        self.split, self.c, self.state = split_bytes, codes_of, state
        self.code_at, self.length, self.length_at = code_at, length, length_at
        self.whole, self.gtid_events, self.rest = None, 0, None

    def __iter__(self):
        with open(self.path, "rb") as fh:
            try:
                self.mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError:  # empty
                self.whole, self.rest = False, len(MAGIC)
                return
            try:
                yield from self._cuts()
            finally:
                self.mm.close()

    def _cuts(self):
        mod, c, rs = self.mod, self.c, self.mod.RECORD_SIZE
        first = len(MAGIC)
        cut = dict(start=first, stop=None, fde_pos=None, gtids_before=0, gtid=None)
        want = first + self.split if self.split else None  # the next cut: from this offset on
        gtids, fde_pos, last_gtid, prev = 0, first, None, None  # before the batch
        pos, batch, stopped = first, min(self.FIRST_BATCH, BATCH), False
        dropped = 0  # the map's pages before this offset were given back
        refs, sure = [], True  # the replay form's state events before the batch (ReplayState)
        while True:
            if pos - dropped >= DROP:  # the pages walked leave this process's memory (not
                upto = pos - pos % mmap.PAGESIZE  # the page cache): else they all count in
                self.mm.madvise(mmap.MADV_DONTNEED, dropped, upto - dropped)  # its peak
                dropped = upto
            recs, pos, status, _code, _length = mod.walk(self.mm, self.size, pos, self.size,
                                                         self.hl, False, batch)
            batch = min(2 * batch, BATCH)
            codes = recs[self.code_at::rs]
            n = len(codes)
            for s in c.stops:  # the rest is ciphertext: the events up to it only
                if s in codes:
                    n, stopped = min(n, codes.index(s) + 1), True
            i, counted, seen = 0, 0, 0  # GTID events of the batch before index `counted`
            found = self._state_events(recs, codes, n, first) if sure else []
            while n and want is not None:
                j = self._first_at(recs, n, want, i)
                k = None if j is None else self._boundary(recs, codes, j, prev, n)
                if k is None:
                    break  # the boundary is in the next batch (or there is none)
                at = self._offset(recs, k)
                seen += sum(codes.count(g, counted, k) for g in c.gtid_bytes)
                counted = k
                fde = self._last(recs, codes, [bytes([FDE_CODE])], k, first)
                g = None
                if codes[k] not in c.gtid_set:
                    g = self._last(recs, codes, c.gtid_bytes, k, None) or last_gtid
                cut["stop"] = at
                yield self._done(cut)
                cut = dict(start=at, stop=None, fde_pos=fde[0] if fde else fde_pos,
                           gtids_before=gtids + seen, gtid=g, state=None)
                before = [r for r in found if r[0] < k]
                if sure and len(refs) + len(before) <= STATE_REFS and \
                        not any(r[3] in c.unsure for r in before):
                    cut["state"] = (tuple(refs) + tuple(r[1:3] for r in before),
                                    self._last(recs, codes, c.gtid_bytes, k, None) or last_gtid)
                want = at + self.split
                i = k
            refs += [r[1:3] for r in found]
            sure = sure and len(refs) <= STATE_REFS and not any(r[3] in c.unsure for r in found)
            if n:
                gtids += sum(codes.count(g, 0, n) for g in c.gtid_bytes)
                fde = self._last(recs, codes, [bytes([FDE_CODE])], n, first)
                fde_pos = fde[0] if fde is not None else fde_pos
                last_gtid = self._last(recs, codes, c.gtid_bytes, n, None) or last_gtid
                prev = codes[n - 1]
            if status != mod.FULL or stopped:
                break
        self.gtid_events = gtids
        self.whole = not stopped and status == mod.END and pos == self.size
        if self.whole:
            yield self._done(cut)
        else:
            self.rest = cut["start"]

    def _done(self, cut):
        """The cut as scan_file gives it: the GTID in force parsed, no FDE to read at the start."""
        if cut["gtid"] is not None:
            cut["gtid"] = self._gtid_at(cut["gtid"])
        if cut["start"] == len(MAGIC):
            cut["fde_pos"] = None
        return cut

    def _state_events(self, recs, codes, n, first):
        """(index, offset, length, code) of the batch's events before index n that dump's
        replay form reads before a split (REPLAY_STATE, REPLAY_UNSURE), the file's own format
        event left out; at most STATE_REFS + 1 of them."""
        out = []
        for m in (self.c.state_any.finditer(codes, 0, n) if self.c.state_any else ()):
            k = m.start()
            at = self._offset(recs, k)
            if at != first:
                out.append((k, at, self._length(recs, k), codes[k]))
                if len(out) > STATE_REFS:
                    break
        return out

    def _offset(self, recs, i):
        return _OFFSET.unpack_from(recs, i * self.mod.RECORD_SIZE)[0]

    def _first_at(self, recs, n, want, lo):
        """The first record at index >= lo whose offset is >= want (None: none in the batch)."""
        if self._offset(recs, n - 1) < want:
            return None
        hi = n - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if self._offset(recs, mid) < want:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def _boundary(self, recs, codes, j, prev, n):
        """The first index >= j and < n that is a boundary (prev: the code before the batch)."""
        c = self.c
        before = codes[j - 1] if j else prev
        if before is not None and before in c.xid:
            return j
        while c.any is not None:
            m = c.any.search(codes, j, n)
            if m is None:
                return None
            k = m.start()
            code = codes[k]
            if code in c.gtid_set:
                return k
            if code in c.xid:
                return k + 1 if k + 1 < n else None
            before = codes[k - 1] if k else prev
            if (before is None or before not in c.gtid_set) and self._is_begin(recs, k):
                return k
            j = k + 1
        return None

    def _last(self, recs, codes, wanted, k, skip_offset):
        """(offset, length) of the last event before index k with one of the codes (not at
        skip_offset: the file's own FDE), or None."""
        best = max((codes.rfind(w, 0, k) for w in wanted), default=-1)
        if best < 0:
            return None
        at = self._offset(recs, best)
        if at == skip_offset:
            return None
        return at, self._length(recs, best)

    def _length(self, recs, i):
        return self.length.unpack_from(recs, i * self.mod.RECORD_SIZE + self.length_at)[0]

    def _event(self, ref):
        at, length = ref
        if at + length > self.size:
            return None
        try:
            return parse_event(self.mm[at:at + length], self.state, file=self.path, offset=at,
                               verify_checksum=False)
        except BinlogError:
            return None

    def _is_begin(self, recs, k):
        ev = self._event((self._offset(recs, k), self._length(recs, k)))
        return ev is not None and B.boundary(ev) == B.BEGIN

    def _gtid_at(self, ref):
        ev = self._event(ref)
        return gtid_of(ev) if ev is not None else None
