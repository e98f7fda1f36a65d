"""`stats` at the speed of the header walk: the same figures as output/stats.py reading every
event, from the compiled backend's records (binlog.framing's walk) with only the events that
decide something parsed.

Most of a row-based binlog is counted by the compiled loop (output/stats_loop.py,
native._stats): whole transactions that a MariaDB GTID opens and an XID ends, each event
counted as this module's loop below would count it. It stops at
any event it does not count and gives an open transaction back whole; this module's loop then
reads from there, as described below, until it is between transactions again.

What each event gives, and where it comes from:
- its type, length, timestamp and CRC32 verdict: the compiled walk's record (no parse); the
  timestamps also make the input's time span (output/stats_span.py's), in this same pass;
- what it does to a transaction (binlog/boundaries.py): fixed by its role for most types (XID,
  annotations, ROTATE ...), which are parsed all the same (a damaged one with a valid CRC32 is
  the Python path's to report); GTID and statement events are parsed (their GTID, flags, text);
- the table of a rows event: the TABLE_MAPs are parsed once per distinct body (RowDecoder);
- the row changes of a rows event: counted by the compiled row loop (`_rows.rows(plan, data,
  COUNT)`, the plan of output/vv_native.count_plan), without building a value. The part of a rows
  event before its row images (table id, flags, extra data, column bitmaps) is parsed by the
  generated readers once per distinct prefix: the readers read that part field after field, each
  field's size given by the bytes before it, so an event whose first bytes equal a parsed prefix
  reads the same fields to the same offset, and its row images start there.
Anything else is read by the Python path, event by event or for the whole run:
- a rows event the row loop refuses, a table without a count plan, compressed rows, MySQL's
  partial JSON updates: parsed and decoded by binlog.stream (its errors and notes included);
- a whole run (`read` returns None, nothing printed yet, and the caller reads the input as
  before) when an option needs every event (filters, windows, --schema, --skip-damaged,
  --server-version, --follow-rotate, --no-checksum) or an input is not a plain v4 binlog whose
  CRC32s are verified: a file without CRC32 footers (damage there only shows in the bytes every
  event holds), a CRC32 that does not match, a length that does not fit, a FORMAT_DESCRIPTION or
  START_ENCRYPTION event after the first, or any error the parsed events raise (the Python
  path raises it again, with its message).
MySQL's compressed transactions (TRANSACTION_PAYLOAD_EVENT) are parsed, and the events inside
them (binlog.payload) counted and grouped as the stream yields them: after their payload, at its
offset, with no bytes of their own.
The grouping into transactions is binlog.stream's (`Stream._grouped` with no filter), kept step
for step; tests/output/test_stats_fast.py holds the two paths' output equal.
"""
from __future__ import annotations

import mmap
import struct
from collections import Counter
from operator import itemgetter

from .. import native
from ..binlog import boundaries as B
from ..binlog.framing import BATCH, compiled
from ..binlog.gtid import gtid_of
from ..binlog.payload import inner_events
from ..binlog.reader import CHECKSUM_LEN, FDE_CODE, STATE_CODES, first_format_event, parse_event
from ..binlog.rows import RowDecoder
from ..binlog.stream import ROWS_STMT_END_F, StreamEvent
from ..errors import BinlogGrammarError
from ..runtime.codecs import decompress
from ..generated.catalog import EVENTS
from . import stats_span
from .stats import Stats
from .stats_loop import MAX_TOP, Loop
from .vv_native import count_plan

__all__ = ["read", "usable"]

OPS = {"insert": "c", "update": "u", "delete": "d"}
_PARTIAL = "PARTIAL_UPDATE_ROWS_EVENT"
# what the walk's loop does with an event, by the type code in the file
(BETWEEN, PART, COMMIT, TABLE_MAP, ROWS, PARSE, STATE, ABANDON, PAYLOAD) = range(9)
_FIXED = {B.PART: PART, B.COMMIT: COMMIT, B.BETWEEN: BETWEEN}
_INLINE = frozenset({PART, TABLE_MAP, ROWS})
# the kinds whose role alone says what they do to a transaction: parsed all the same (a damaged
# XID the Python path reports; the compiled loop counts the XIDs and annotations it can check)
_ROLE_ONLY = frozenset({BETWEEN, PART, COMMIT})
# the compiled loop's action (output/stats_loop.py) by kind
_C_ACTION = {PART: "PART", COMMIT: "COMMIT", TABLE_MAP: "TABLE_MAP", ROWS: "ROWS",
             PAYLOAD: "PAYLOAD"}
_COMMITTED = B.ENDS[B.COMMIT]
_DROP = 1 << 20  # madvise the pages read away from this many bytes on


class Abandon(Exception):
    """The fast path cannot read this input: the caller reads it the usual way."""


def usable(stream) -> bool:
    """Whether a stream of these options may be read by `read` (see the module docstring)."""
    return (stream.filters.keeps_all and not stream.window.active and not stream.schemas
            and not stream.skip_damaged and stream.server is None and not stream.follow_rotate
            and stream.verify_checksum and native.backend() == "c"
            and compiled() is not None and native.rows() is not None)


def read(stream, top=10):
    """The Stats of every input of `stream`, or None when the fast path gave up (then nothing of
    `stream` was changed but its fallback counts, which the caller's full read sets again)."""
    if not usable(stream):
        return None
    reader = _Reader(stream, top)
    try:
        for i, path in enumerate(stream.paths):
            reader.file(i, path)
        reader.close()
    except (Abandon, BinlogGrammarError):
        stream.undecoded.clear()
        return None
    return reader.st


class _Tx:
    __slots__ = ("gtid", "file", "start", "end_pos", "size", "changes", "lo", "hi", "n",
                 "gtid_first", "end", "new")

    def __init__(self, gtid, file, off, ts, gtid_first):
        self.gtid, self.file, self.start, self.end_pos = gtid, file, off, 0
        self.size = self.changes = self.n = 0
        self.lo = self.hi = ts
        self.gtid_first, self.end = gtid_first, "incomplete"
        self.new = []  # (file index, type code) this transaction counts first, in order


class _Reader:
    def __init__(self, stream, top):
        self.stream, self.st = stream, Stats(top=top)
        self.mod, self.rows_mod = compiled(), native.rows()
        self.tx = None
        self.in_begin = self.standalone = self.implicit = False
        self.ranked = {}  # (file index, type code) counted: first-seen order of the names
        self.counts = []  # per file: {type code: [count, bytes]}
        self.names = []  # per file: {type code: the event's name}
        # the compiled loop (native._stats, codegen/c_stats.py): whole transactions and the events
        # between them in C; it stops at an event it does not count, which the loop below reads
        mod = native.stats_loop()
        self.loop = Loop(mod, self.st) if mod is not None and top <= MAX_TOP else None
        self.t_lo, self.t_hi, self.done = 1 << 32, 0, 0  # times read (but 0s), bytes of files before

    # -- one file ------------------------------------------------------------------------------
    def file(self, i, path):
        stream = self.stream
        first, state = first_format_event(path)
        stream.fallbacks[path] = state.fallbacks
        if state.binlog_version != 4 or first.type is None or first.type.code != FDE_CODE \
                or state.checksum_alg != 1 or state.header_len not in self.mod.LAYOUTS:
            raise Abandon()
        self.path, self.state, self.i = path, state, i
        self.decoder = RowDecoder(None)
        self.decoder.fallbacks = state.fallbacks
        self.gtid = None
        self.kinds, self.tables, self.prefixes, self.prefix_lens = {}, {}, {}, {}
        self.plans = {}  # (table, prefix shape) -> the table's count plan (or None)
        self.ranked_here = set()  # type codes of this file already ranked
        if self.loop is not None:
            self.loop.file(state, path, self.decoder)
        counts = {}
        self.counts.append(counts)
        self.names.append({FDE_CODE: first.name})
        hl = state.header_len
        fields = self.mod.RECORD_FIELDS
        pick = itemgetter(*(fields.index(f) for f in ("offset", "timestamp", "type_code",
                                                      "event_length", "checksum_ok")))
        unpack = struct.Struct(self.mod.RECORD_FORMAT).iter_unpack
        total, done = stream.total_bytes, self.done
        kinds, ranked, loop = self.kinds, self.ranked_here, self.loop
        ts = int(first.header.timestamp)  # the span's times start with the FORMAT_DESCRIPTION's
        t_lo, t_hi = min(self.t_lo, ts or self.t_lo), max(self.t_hi, ts)
        with open(path, "rb") as fh:
            try:
                mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError:
                raise Abandon() from None
            with mm:
                self.mm, self.view = mm, memoryview(mm)
                try:
                    pos, size = first.end, len(mm)
                    self._event(first.offset, first.header.timestamp, FDE_CODE, len(first.raw),
                                counts, BETWEEN, True)
                    batch = BATCH
                    while True:
                        if loop is not None and self.tx is None and not self.implicit and \
                                loop.wanted():
                            pos, reason, gtid = loop.run(mm, pos, size)
                            if gtid is not None:
                                self.standalone, self.gtid = False, gtid
                            self._progress(mm, done, pos, total)
                            if reason == loop.mod.WINDOW:
                                continue
                            if reason == loop.mod.END:
                                status = self.mod.END
                                break
                            batch = 64  # the loop stopped at an event: read a few, then back
                        recs, npos, status, _code, _len = self.mod.walk(mm, size, pos, size, hl,
                                                                        True, batch)
                        batch = min(batch * 2, BATCH)
                        handed = False
                        for off, ts, code, length, ok in map(pick, unpack(recs)):
                            if ok != 1:
                                raise Abandon()
                            if ts and ts < t_lo:  # (0: no time)
                                t_lo = ts
                            if ts > t_hi:
                                t_hi = ts
                            kind = kinds.get(code)
                            if kind is None:
                                kind = kinds[code] = self._kind(code)
                                counts.setdefault(code, [0, 0])
                            tx = self.tx
                            # the common case inline: a part of a transaction that BEGIN (or
                            # MariaDB's GTID) opened, or its XID; the rest as _group decides
                            if tx is not None and not self.implicit and (
                                    kind == COMMIT or kind in _INLINE and self.in_begin):
                                c = counts[code]
                                c[0] += 1
                                c[1] += length
                                if kind == ROWS:
                                    tx.changes += self._rows(off, code, length)[0]
                                elif kind == TABLE_MAP:
                                    self._table_map(off, code, length)
                                else:  # an XID or an annotation: read, for what damage it holds
                                    self._parse(off, length)
                                tx.n += 1
                                tx.size += length
                                tx.end_pos = off + length
                                if ts < tx.lo:
                                    tx.lo = ts
                                elif ts > tx.hi:
                                    tx.hi = ts
                                if code not in ranked and (i, code) not in tx.new:
                                    tx.new.append((i, code))
                                if kind == COMMIT:
                                    tx.end = _COMMITTED
                                    self._finish(tx)
                                    self.tx, self.in_begin = None, False
                            else:
                                self._event(off, ts, code, length, counts, kind)
                            if loop is not None and self.tx is None and not self.implicit and \
                                    loop.wanted(passing=True):
                                pos, handed = off + length, True  # back to the compiled loop
                                break
                        if handed:
                            continue
                        pos = npos
                        self._progress(mm, done, pos, total)
                        if status != self.mod.FULL:
                            break
                    if status != self.mod.END:
                        raise Abandon()
                finally:
                    self.view.release()
                    self.view = self.mm = None
        self.t_lo, self.t_hi, self.done = t_lo, t_hi, done + size
        if loop is not None:
            loop.fold(counts)
        self.st.files.add(path)

    def _progress(self, mm, done, pos, total):
        if self.stream.progress is not None:
            self.stream.progress(done + pos, total)
        # the pages read so far leave this process's memory (they stay in the page cache): peak
        # RSS does not grow with the file
        if pos >= _DROP:
            mm.madvise(mmap.MADV_DONTNEED, 0, pos - pos % mmap.PAGESIZE)

    def _kind(self, code):
        """What the loop does with events of this type code in the current file (and what the
        compiled loop does with them, once the code is ranked)."""
        et = EVENTS.get(self.state.event_code(code))
        kind = self._kind_of(code, et)
        if self.loop is not None:
            action = _C_ACTION.get(kind)
            if kind == ROWS and (not _zipped_or_plain(et) or et.name == _PARTIAL):
                action = None
            elif kind == PARSE and et.role in B.GTID_ROLES:  # opens one (MariaDB's: unless
                action = "GTID"                               # FL_STANDALONE)
            elif kind == PARSE and et.role == B.STATEMENT_ROLE:  # MySQL's BEGIN (the loop asks)
                action = "STATEMENT"
            self.loop.set_action(code, action, et, code in self.ranked_here)
        return kind

    def _kind_of(self, code, et):
        self.names[self.i][code] = et.name if et is not None else f"UNKNOWN_TYPE_{code}"
        if code in STATE_CODES or (et is not None and et.code in STATE_CODES):
            return STATE
        if et is None:
            return BETWEEN
        if any(d.target == "events" for d in et.decode) or et.role == B.PAYLOAD:
            return PAYLOAD  # read here, the events inside it too (_payload)
        if et.name == "TABLE_MAP_EVENT":
            return TABLE_MAP
        if et.row_op:
            return ROWS
        if et.role in (B.STATEMENT_ROLE, *B.GTID_ROLES):
            return PARSE
        fixed = B.boundary(_Typed(et))
        return _FIXED.get(fixed, ABANDON)

    def _parse(self, off, length):
        return parse_event(bytes(self.mm[off:off + length]), self.state, file=self.path,
                           offset=off, verify_checksum=True)

    # -- one event -----------------------------------------------------------------------------
    def _event(self, off, ts, code, length, counts, kind, parsed=False):
        c = counts.setdefault(code, [0, 0])
        c[0] += 1
        c[1] += length
        changes, row_end = 0, False
        if kind in _ROLE_ONLY and not parsed:
            self._parse(off, length)  # its role decides, but the Python path reads it (damage)
        if kind == BETWEEN or kind == PART:
            bound = B.BETWEEN if kind == BETWEEN else B.PART
        elif kind == COMMIT:
            bound = B.COMMIT
        elif kind == TABLE_MAP:
            self._table_map(off, code, length)
            bound = B.PART
        elif kind == ROWS:
            bound = B.PART
            changes, flags = self._rows(off, code, length)
            row_end = flags & ROWS_STMT_END_F
        elif kind == PARSE:
            ev = self._parse(off, length)
            bound = B.boundary(ev)
            if bound in B.OPENS_WITH_GTID:
                self.gtid = gtid_of(ev)
            elif self.loop is not None and bound == B.BEGIN:
                self.loop.statement(ev, bound)
        elif kind == STATE and off == 4:  # the file's own FORMAT_DESCRIPTION_EVENT
            bound = B.BETWEEN
        elif kind == PAYLOAD:
            return self._payload(off, ts, code, length)
        else:
            raise Abandon()
        self._group(off, ts, code, length, bound, kind == ROWS or kind == TABLE_MAP,
                    kind == ROWS, row_end, changes)

    def _payload(self, off, ts, code, length):
        """A TRANSACTION_PAYLOAD_EVENT, then the events inside it (binlog.payload, as the stream
        yields them: at the payload's offset, of no bytes of their own)."""
        ev = self._parse(off, length)
        self._group(off, ts, code, length, B.boundary(ev), False, False, False, 0)
        counts, hl = self.counts[-1], self.state.header_len
        for e in inner_events(ev, self.state):
            c = e.header.type_code
            kind = self.kinds.get(c)
            if kind is None:
                kind = self.kinds[c] = self._kind(c)
            counts.setdefault(c, [0, 0])[0] += 1
            changes, row_end = 0, False
            if kind == TABLE_MAP:
                self._table_map(off, c, 0, bytes(e.raw[hl:]), e)
                bound = B.PART
            elif kind == ROWS:
                bound = B.PART
                changes, row_end = self._rows(0, c, len(e.raw), e)
                row_end &= ROWS_STMT_END_F
            elif kind in _ROLE_ONLY or kind == PARSE:
                bound = B.boundary(e)
                if bound in B.OPENS_WITH_GTID:
                    self.gtid = gtid_of(e)
                elif self.loop is not None and bound == B.BEGIN:
                    self.loop.statement(e, bound)
            else:  # a format or a payload inside a payload
                raise Abandon()
            self._group(off, int(e.header.timestamp), c, 0, bound, kind in (ROWS, TABLE_MAP),
                        kind == ROWS, row_end, changes, True)

    def _group(self, off, ts, code, length, kind, rows_role, row_op, row_end, changes, inner=False):
        """binlog.stream.Stream._grouped, step for step, without filters or windows (an event
        inside a payload: `inner`)."""
        tx = self.tx
        if self.implicit and kind not in B.BELONGS:
            self._finish(tx)
            tx, self.implicit = None, False
        if tx is None and rows_role and not inner:
            tx = self.tx = self._new(off, ts, False)
            self.in_begin, self.standalone, self.implicit = False, False, True
        if kind in B.OPENS_WITH_GTID:
            if tx is not None:
                self._finish(tx)
            tx = self.tx = self._new(off, ts, True)
            self.standalone = kind == B.GTID_STANDALONE
            self.in_begin = kind == B.GTID_BEGIN
            self._add(tx, off, ts, code, length, changes, inner)
            return
        if kind == B.BEGIN:
            if tx is None or (self.in_begin and not (tx.n == 1 and tx.gtid_first)):
                if tx is not None:
                    self._finish(tx)
                tx = self.tx = self._new(off, ts, False)
            self.in_begin = True
            self._add(tx, off, ts, code, length, changes, inner)
            return
        if kind in B.ENDS and tx is not None:
            self._add(tx, off, ts, code, length, changes, inner)
            tx.end = B.ENDS[kind]
            self._finish(tx)
            self.tx, self.in_begin = None, False
            return
        if kind == B.STATEMENT and not self.in_begin:
            if tx is None:
                tx = self.tx = self._new(off, ts, False)
            self._add(tx, off, ts, code, length, changes, inner)
            tx.end = "ddl"
            self._finish(tx)
            self.tx, self.in_begin = None, False
            return
        if tx is not None and (self.in_begin or self.standalone or inner or kind in B.BELONGS):
            self._add(tx, off, ts, code, length, changes, inner)
            if self.implicit and row_op and row_end:
                tx.end = "commit"
                self._finish(tx)
                self.tx, self.implicit = None, False
            return
        self._rank(code)  # an event between transactions is counted as it comes

    def _new(self, off, ts, opened_by_gtid):
        return _Tx(self.gtid if opened_by_gtid else None, self.path, off, ts, opened_by_gtid)

    def _add(self, tx, off, ts, code, length, changes, inner=False):
        tx.n += 1
        tx.size += length
        if not inner:  # the events inside a payload end where it ends
            tx.end_pos = off + length
        tx.changes += changes
        if ts < tx.lo:
            tx.lo = ts
        elif ts > tx.hi:
            tx.hi = ts
        if code not in self.ranked_here and (self.i, code) not in tx.new:
            tx.new.append((self.i, code))

    def _rank(self, code):
        key = (self.i, code)
        if key not in self.ranked:
            self.ranked[key] = len(self.ranked)
            self._ranked(code)

    def _ranked(self, code):
        self.ranked_here.add(code)
        if self.loop is not None:
            self.loop.ranked(code)

    def _finish(self, tx):
        for key in tx.new:
            if key not in self.ranked:
                self.ranked[key] = len(self.ranked)
                if key[0] == self.i:
                    self._ranked(key[1])
        summary = {"gtid": tx.gtid, "file": tx.file, "pos": tx.start, "end_pos": tx.end_pos,
                   "bytes": tx.size, "changes": tx.changes, "seconds": tx.hi - tx.lo,
                   "end": tx.end}
        self.st.add_summary(summary)
        if self.loop is not None:
            self.loop.finished(summary)

    def close(self):
        """The open transaction, then the counts by type, in the order output/stats.py meets
        them (ties in the output keep that order)."""
        if self.tx is not None:
            self._finish(self.tx)
            self.tx = None
        st = self.st
        if self.loop is not None:
            self.loop.close()
        lo, hi = self.t_lo, self.t_hi  # and the compiled loop's: the span, in this one pass
        st.span = stats_span.of(*(self.loop.times_with(lo, hi) if self.loop is not None else (lo, hi)))
        for (i, code), _rank in sorted(self.ranked.items(), key=lambda kv: kv[1]):
            n, size = self.counts[i][code]
            name = self.names[i][code]
            st.events[name] += n
            st.event_bytes[name] += size

    # -- tables and rows -----------------------------------------------------------------------
    def _table_map(self, off, code, length, body=None, ev=None):
        """A TABLE_MAP at `off` (or inside a payload: its data `body`, the event `ev`)."""
        hl = self.state.header_len
        if body is None:
            body = bytes(self.mm[off + hl:off + length - CHECKSUM_LEN])
        got = self.tables.get(body)
        if got is None:
            t = self.decoder.table_map(ev or self._parse(off, length))
            if len(self.tables) > 1024:
                self.tables.clear()
            reg = self.loop.table(body, code, t) if self.loop is not None else None
            self.tables[body] = t, reg
        else:
            t, reg = got
            self.decoder.tables[t.table_id] = t
        if self.loop is not None:
            self.loop.mapped(t.table_id, reg)

    def _rows(self, off, code, length, inner=None):
        """(row changes, flags) of the rows event at `off` (or `inner`, inside a payload: its
        bytes, no CRC32)."""
        hl = self.state.header_len
        if inner is None:
            mm, view, end = self.mm, self.view, off + length - CHECKSUM_LEN
        else:
            mm = view = memoryview(inner.raw)
            end = length
        shape, known, at = None, self.prefixes.get(code), off + hl
        if known is not None:
            for n in self.prefix_lens[code]:
                if at + n <= end:
                    shape = known.get(mm[at:at + n])
                    if shape is not None:
                        break
        if shape is None:
            ev = inner or self._parse(off, length)
            shape = self._shape(ev, mm, at, end, code)
            if shape is None:
                return self._python_rows(ev), int(ev.data["flags"])
        n, table_id, flags, op = shape[:4]
        t = self.decoder.tables.get(table_id)
        got = self.plans.get((id(t), id(shape)))
        if got is None or got[0] is not t or got[1] is not shape:
            plan = count_plan(t, op, *shape[4:7]) if t is not None else None
            counter = self.st.table_ops[f"{t.db}.{t.table}"] if plan is not None else None
            # t and shape are kept with their plan, so their ids are not reused meanwhile
            got = self.plans[(id(t), id(shape))] = (t, shape, plan, counter, OPS[op])
        plan = got[2]
        if plan is not None and self.loop is not None:
            self.loop.plan(view[at:end], code, t, n, table_id, plan)
        if plan is not None:
            mod = self.rows_mod
            if shape[7]:  # MariaDB's compressed rows, inflated as the Python path does
                try:
                    count, _status = mod.rows(plan, decompress("mariadb_zlib", bytes(
                        view[at + n:end])), mod.COUNT)
                except Exception:  # noqa: BLE001 - the Python path reports it
                    return self._python_rows(inner or self._parse(off, length)), flags
            else:
                count, _status = mod.rows(plan, view[at + n:end], mod.COUNT)
            if count is not None:
                counter = got[3]
                counter["bytes"] += length
                if count:
                    counter[got[4]] += count
                return count, flags
        return self._python_rows(inner or self._parse(off, length)), flags

    def _shape(self, ev, mm, at, end, code):
        """What the rows event's prefix (mm[at:end] its data: the bytes before its row images)
        says, kept for the events that start with the same bytes; None for an event the count
        does not read."""
        et, d = ev.type, ev.data
        rows = d["rows"]
        if not _zipped_or_plain(et) or et.name == _PARTIAL or not isinstance(rows, (bytes, bytearray)):
            return None
        n = end - at - len(rows)
        if n < 0 or mm[at + n:end] != rows:
            return None
        op = et.row_op
        cols = d["columns"]
        after = cols.get("columns_present_after") if op == "update" else None
        shape = (n, int(d["table_id"]), int(d["flags"]), op, tuple(cols["columns_present"]),
                 None if after is None else tuple(after), ev.context.get("type_code"), et.code in _ZIPPED)
        known = self.prefixes.setdefault(code, {})
        if len(known) > 4096:
            known.clear()
            self.plans.clear()
        known[bytes(mm[at:at + n])] = shape
        lens = self.prefix_lens.setdefault(code, [])
        if n not in lens:
            lens.append(n)
        return shape

    def _python_rows(self, ev):
        """The row changes of a rows event decoded by binlog.stream, as `stats` reads them."""
        t = self.decoder.tables.get(int(ev.data["table_id"]))
        se = StreamEvent(ev, t, self.gtid, self.decoder, 0, self.stream._on_undecoded)
        changes = se.changes
        ops = Counter(ch.op for ch in changes)
        key = f"{t.db}.{t.table}" if t is not None else \
            f"(unmapped table id {int(ev.data['table_id'])})"
        self._table_rows(key, len(ev.raw), ops, se.undecoded is not None)
        return len(changes)

    def _table_rows(self, key, length, ops, undecoded):
        t = self.st.table_ops[key]
        t["bytes"] += length
        t.update(ops)
        if undecoded:
            t["undecoded"] += 1


# MariaDB's compressed rows events (their rows field inflated by the mariadb_zlib codec): counted
# with their twin's plans once inflated; any other decode is the Python path's
_ZIPPED = frozenset(c for c, e in EVENTS.items() if e.row_op and [(d.field, d.codec) for d in e.decode]
                    == [("rows", "mariadb_zlib")])


def _zipped_or_plain(et) -> bool:
    return not et.decode or et.code in _ZIPPED


class _Typed:
    """An event of a type whose boundary its role alone decides (binlog.boundaries.boundary)."""

    def __init__(self, et):
        self.type, self.data = et, None

