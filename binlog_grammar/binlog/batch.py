"""Events framed in batches by the compiled walk: what BinlogFile reads when the compiled backend
runs, the same events as its event-by-event path, with less work per event.

The compiled walk (binlog_grammar.native._framing, generated from the specs) frames a batch of
events of the file mapped into memory and checks their CRC32 footers with the GIL released; each
event's data is then read by the generated readers (shared when its bytes repeat, as parse_event
does), and its common header and checksum footer are read by the generated readers only when
someone looks at them (FramedEvent). Whatever is not plain goes back to the event-by-event path,
which gives every error at the same offset with the same message: an event whose CRC32 does not
match, whose length does not fit, whose log_pos disagrees while the file's positions agreed so
far, an event that changes how the rest of the file is read (FORMAT_DESCRIPTION_EVENT,
START_EVENT_V3, START_ENCRYPTION_EVENT), and data the generated readers refuse.
"""
from __future__ import annotations

import dataclasses
import mmap
import struct

from .. import native
from ..generated import fast as F
from .parse import CHECKSUM_LEN, STATE_CODES, Event, read_data

__all__ = ["FramedEvent", "Batches", "Inner"]

BATCH = 4096  # records per call of the walk: the events of one batch are made as they are read
SMALL = 64  # records per batch of the compiled loop, which makes a batch's events before it
#            yields them: small batches stay in the CPU's caches until they are used (on the bench
#            binlog 64 took 0.68 s where 4096 took 0.95 s), and little is made in vain when a
#            consumer reads on from an event itself (skip_to: the text lane)
DROP = 1 << 22  # the mapped pages read are given back every this many bytes
_READ, _SPAN, _HEAD = range(3)  # how an event's data is read: now, or on first use (see _plan)
_NEEDED = ("offset", "type_code", "event_length", "log_pos", "checksum_ok", "timestamp",
           "server_id")
_HEADER, _DATA, _CHECKSUM, _EXTRA = Event.header, Event.data, Event.checksum, Event.extra  # slots
_FIELDS = tuple(f.name for f in dataclasses.fields(Event))
_UP = {"_index": None}  # the (empty) enclosing context of a top-level generated reader


class FramedEvent(Event):
    """An Event framed by the compiled walk: the same fields, values and behaviour; its header
    and checksum are read from `raw` by the generated readers on first use, and so is the data
    of an event whose reader reads any bytes of its length (generated EVENT_DATA_SPANS: `_head`
    is ()) and of a rows event whose head rows_head() read (`_head`); `_head` None: `data` is
    given. `_stamp`: the header's timestamp and server_id as the walk read them."""

    __slots__ = ("_stamp", "_head")

    def __init__(self, file, offset, data, raw, et, ctx, checksum_ok, footer, stamp, head):
        self._stamp = stamp
        self._head = head
        self.file = file
        self.offset = offset
        if head is None:
            self.data = data
        self.raw = raw
        self.type = et
        self.context = ctx
        self.checksum_ok = checksum_ok
        self.inner = False
        self.footer = footer

    def _header(self):
        try:
            return _HEADER.__get__(self)
        except AttributeError:
            h = F.t_common_header(self.raw, 0, self.context["header_len"], _UP, self.context,
                                  None)[0]
            _HEADER.__set__(self, h)
            return h

    def _data(self):
        try:
            return _DATA.__get__(self)
        except AttributeError:  # data its generated reader reads without refusing it
            ctx, raw = self.context, self.raw
            data = raw[ctx["header_len"]:len(raw) - CHECKSUM_LEN * self.footer]
            d = F.EVENT_READERS[ctx["type_code"]](data, 0, len(data), ctx)
            _DATA.__set__(self, d)
            return d

    def _checksum(self):
        try:
            return _CHECKSUM.__get__(self)
        except AttributeError:
            raw = self.raw
            c = F.t_event_checksum(raw, len(raw) - 4, len(raw), _UP, self.context, None)[0] \
                if self.footer else None
            _CHECKSUM.__set__(self, c)
            return c

    def _extra(self):
        try:
            return _EXTRA.__get__(self)
        except AttributeError:
            e = {}
            _EXTRA.__set__(self, e)
            return e

    def __eq__(self, other):  # equal to the Event read event by event with the same fields
        if not isinstance(other, Event):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in _FIELDS)

    __hash__ = None

    def __repr__(self):  # as the Event's
        return f"Event({', '.join(f'{n}={getattr(self, n)!r}' for n in _FIELDS)})"

    header = property(_header, _HEADER.__set__)
    data = property(_data, _DATA.__set__)
    checksum = property(_checksum, _CHECKSUM.__set__)
    extra = property(_extra, _EXTRA.__set__)


def _makers(slot_maker):
    """(make, make_lazy): FramedEvent(file, offset, data, raw, type, context, checksum_ok, footer,
    stamp, None), and the same without data (its _head says how it is read on first use), made
    by the compiled slot_maker (_rows) when it is there, else by FramedEvent.__init__."""
    fields = ("file", "offset", "data", "raw", "type", "context", "checksum_ok", "footer")
    if slot_maker is not None:
        slots = [Event.__dict__[n] for n in fields] + [FramedEvent.__dict__["_stamp"],
                                                      FramedEvent.__dict__["_head"]]
        inner = (Event.__dict__["inner"],)
        return (slot_maker(FramedEvent, tuple(slots) + inner, (False,)),
                slot_maker(FramedEvent, tuple(slots[:2] + slots[3:]) + inner, (False,)))

    def make_lazy(file, offset, raw, et, ctx, checksum_ok, footer, stamp, head):
        return FramedEvent(file, offset, None, raw, et, ctx, checksum_ok, footer, stamp, head)

    return FramedEvent, make_lazy


def _none(pos):
    """No event: the event-by-event path reads at `pos`."""
    return pos
    yield  # noqa: unreachable - a generator


def _record_fields(fmt, names) -> tuple:
    """((offset, width) in a walk's record of its offset, type_code, event_length, log_pos,
    checksum_ok, timestamp and server_id, ..., the record's size), from its struct format."""
    order, chars = fmt[0], fmt[1:]
    at = {n: (struct.calcsize(order + chars[:i]), struct.calcsize(order + chars[i]))
          for i, n in enumerate(names)}
    return tuple(at[n] for n in _NEEDED) + (struct.calcsize(fmt),)


def _c_plan(plan):
    """A plan of Batches._plan as frame_events takes it (see its docstring)."""
    if plan is None:
        return None
    kind, et, ctx, least, check, ok, how, span = plan
    lo, hi = span if span is not None else (0, -1)
    return (how, least, check, et, ctx, ok, kind[4] != 0, lo, -1 if hi is None else hi,
            ctx["post_header_len"] if et is not None else 0, kind[4], kind[0], kind)


class Batches:
    """The batched reading of one BinlogFile (None from `of` when it cannot run: no compiled
    backend, a walk whose records lack a field it needs)."""

    def __init__(self, bf, mod, mm):
        self.bf, self.mod, self.mm = bf, mod, mm
        self.dropped = 0  # the mapped pages before this offset have been given back
        fields = mod.RECORD_FIELDS
        self.at = [fields.index(n) for n in _NEEDED]
        self.unpack = struct.Struct(mod.RECORD_FORMAT).iter_unpack
        rows = native.rows()  # rows_head(), when the compiled row images are built with it
        self.rows_head = getattr(rows, "rows_head", None)
        self.make, self.make_lazy = _makers(getattr(rows, "slot_maker", None))
        # the loop below, compiled (when the _rows build has it): where each record field is
        self.frame = getattr(rows, "frame_events", None) if self.make is not FramedEvent else None
        self.fields = _record_fields(mod.RECORD_FORMAT, mod.RECORD_FIELDS)

    @classmethod
    def of(cls, bf, fh):
        if not bf.fast:
            return None
        mod = native.framing()
        if mod is None or any(n not in mod.RECORD_FIELDS for n in _NEEDED):
            return None
        try:
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (ValueError, OSError):  # an empty file, or one that cannot be mapped
            return None
        return cls(bf, mod, mm)

    def close(self):
        self.mm.close()

    def _drop(self, pos):
        """Give back the mapped pages before `pos` (they stay in the page cache; the events made
        from them hold copies): the process's memory does not grow with the file."""
        upto = pos - pos % mmap.PAGESIZE
        if upto - self.dropped >= DROP and hasattr(self.mm, "madvise"):
            self.mm.madvise(mmap.MADV_DONTNEED, self.dropped, upto - self.dropped)
            self.dropped = upto

    def _compiled(self, pos):
        """events(), its loop compiled (_rows.frame_events, with the plans _plan makes), in
        batches of SMALL records."""
        bf, mod, mm, state = self.bf, self.mod, self.mm, self.bf.state
        hl = state.header_len
        checks = bf.verify_checksum and state.checksum_alg == 1
        share = bf.share_data
        refused = []  # the kind whose reader refused the data the compiled loop stopped at

        def read(kind, code, data):
            d = read_data(state, kind, code, data, share)
            if d is None and kind[3] is not None:
                refused.append(kind)
            return d

        size, kinds, known, plans = len(mm), None, -1, None
        while True:
            self._drop(pos)
            recs, nxt, status, _code, _length = mod.walk(mm, size, pos, size, hl, checks, SMALL)
            if state._kinds is not kinds or len(kinds) != known:
                kinds, known = state._kinds, len(state._kinds)
                plans = tuple(_c_plan(self._plan(kinds[c], hl, checks)) if c in kinds else None
                              for c in range(256))
            evs, stop = self.frame(recs, self.fields, mm, hl, plans, read, self.make,
                                   self.make_lazy, bf.path, bf._positions_agree)
            for ev in evs:
                yield ev
                if bf.skip_to is not None:  # the consumer read on from the event's end itself
                    pos, bf.skip_to = bf.skip_to, None
                    break
            else:
                if stop >= 0:
                    if refused:
                        self._refused(refused.pop(), stop)
                    return stop
                if status != mod.FULL:
                    return nxt
                pos = nxt

    def _refused(self, kind, off):
        """The generated reader refused the data of the event at `off`: counted as parse_event
        counts it, and the event-by-event path reads it with the construct structs alone."""
        self.bf.state.fallbacks[kind[2]] += 1
        self.bf.refused = off

    def _plan(self, kind, hl, checks):
        """What the batches do with the events of `kind` (FormatState.kind): None, leave them to
        the event-by-event path; else (kind, type, context, least length, check the CRC32 verdict,
        checksum_ok, how the data is read, the data span of its reader)."""
        code, et, crc_len = kind[0], kind[1], kind[4]
        if code in STATE_CODES:
            return None
        span = F.EVENT_DATA_SPANS.get(code) if et is not None else None
        how = _SPAN if span is not None else _HEAD if et is not None and et.row_op and \
            self.rows_head is not None else _READ
        ok = (True if checks else None) if crc_len else None
        return kind, et, kind[5], hl + crc_len, bool(checks and crc_len), ok, how, span

    def events(self, pos):
        """A generator of the events from `pos` on while they are plain, which returns the offset
        where the event-by-event path must read the next one."""
        bf, mod = self.bf, self.mod
        state = bf.state
        layout = mod.LAYOUTS.get(state.header_len)
        if state.encrypted or bf._first or layout is None or "log_pos" not in layout:
            return _none(pos)
        return self._compiled(pos) if self.frame is not None else self._python(pos)

    def _python(self, pos):
        """events(), its loop in Python (for a build of _rows without frame_events)."""
        bf, mod, mm = self.bf, self.mod, self.mm
        state = bf.state
        hl = state.header_len
        checks = bf.verify_checksum and state.checksum_alg == 1
        share, path = bf.share_data, bf.path
        make, make_lazy = self.make, self.make_lazy
        i_off, i_code, i_len, i_lp, i_ok, i_ts, i_sid = self.at
        size = len(mm)
        kinds, plans = None, {}
        while True:
            self._drop(pos)
            recs, nxt, status, _code, _length = mod.walk(mm, size, pos, size, hl, checks, BATCH)
            for rec in self.unpack(recs):
                off, code, length = rec[i_off], rec[i_code], rec[i_len]
                if state._kinds is not kinds:  # the format state changed: its kinds are new
                    kinds, plans = state._kinds, {}
                plan = plans.get(code)
                if plan is None:
                    kind = kinds.get(code)
                    if kind is None:  # the first of its type: parse_event learns the type
                        return off
                    plan = plans[code] = self._plan(kind, hl, checks)
                if plan is None or length < plan[3] or (plan[4] and rec[i_ok] != 1) or \
                        (rec[i_lp] != off + length and bf._positions_agree):
                    return off
                kind, et, ctx, least, _check, ok, how, span = plan
                raw = mm[off:off + length]
                head = None
                if how == _SPAN:  # data its reader reads whatever it holds: read on first use
                    if span[0] <= length - least and (span[1] is None or length - least <= span[1]):
                        head = ()
                elif how == _HEAD:  # the same, vouched by rows_head
                    head = self.rows_head(raw, hl, ctx["post_header_len"], kind[4], kind[0])
                if head is not None:
                    yield make_lazy(path, off, raw, et, ctx, ok, kind[4] != 0,
                                    (rec[i_ts], rec[i_sid]), head)
                else:
                    if et is None:
                        data = raw[hl:length - kind[4]]
                    else:
                        data = read_data(state, kind, code, raw[hl:length - kind[4]], share)
                        if data is None:
                            if kind[3] is not None:
                                self._refused(kind, off)
                            return off
                    yield make(path, off, data, raw, et, ctx, ok, kind[4] != 0,
                               (rec[i_ts], rec[i_sid]), None)
                if bf.skip_to is not None:  # the consumer read on from the event's end itself
                    pos, bf.skip_to = bf.skip_to, None
                    break
            else:
                if status != mod.FULL:
                    return nxt
                pos = nxt


def _inner_makers(slot_maker):
    """(make, make_lazy) of an event inside a payload: as _makers' with inner and extra given."""
    fields = ("file", "offset", "data", "raw", "type", "context", "checksum_ok", "footer")
    slots = [Event.__dict__[n] for n in fields] + [FramedEvent.__dict__["_stamp"],
                                                  FramedEvent.__dict__["_head"],
                                                  Event.__dict__["inner"], Event.__dict__["extra"]]
    return (slot_maker(FramedEvent, tuple(slots), ()),
            slot_maker(FramedEvent, tuple(slots[:2] + slots[3:]), ()))


class Inner:
    """The events inside a file's TRANSACTION_PAYLOAD_EVENTs framed in C (_rows.payload_events:
    inflated and framed by generated/native/payload.h, made as the batches make theirs): the
    events binlog/payload.py gives (FramedEvents: the payload's offset, no checksum, inner,
    extra {"payload_offset": ...}), their data read by the same generated readers, on first use
    where the batches read it so. None from `events` where payload.py must read the payload
    (it reads or reports all that payload.h leaves: other compressions, damaged frames, inner
    events cut short, data the readers refuse, an event type the file has not shown yet, a
    build without zstd), and from `of` when the compiled backend cannot run."""

    def __init__(self, bf, frame, slot_maker, rows_head):
        self.bf, self.frame, self.rows_head = bf, frame, rows_head
        self.make, self.make_lazy = _inner_makers(slot_maker)
        self.kinds, self.known, self.plans = None, -1, None
        state = bf.state

        def read(kind, code, data):  # as parse_event reads an inner event's data (share=True)
            return read_data(state, kind, code, data, True)

        self.read = read

    @classmethod
    def of(cls, bf):
        if not bf.fast:
            return None
        rows = native.rows()
        frame, maker = getattr(rows, "payload_events", None), getattr(rows, "slot_maker", None)
        if frame is None or maker is None:
            return None
        return cls(bf, frame, maker, getattr(rows, "rows_head", None))

    def _plan(self, kind, hl):
        """A plan of frame_events (batch._c_plan's) for the events of `kind` inside a payload:
        no checksum, no CRC32 verdict; None (payload.py reads the payload) where Batches._plan
        leaves the events to the event-by-event path."""
        code, et = kind[0], kind[1]
        if code in STATE_CODES:
            return None
        span = F.EVENT_DATA_SPANS.get(code) if et is not None else None
        how = _SPAN if span is not None else _HEAD if et is not None and et.row_op and \
            self.rows_head is not None else _READ
        lo, hi = span if span is not None else (0, -1)
        return (how, hl, False, et, kind[5], None, False, lo, -1 if hi is None else hi,
                kind[5]["post_header_len"] if et is not None else 0, 0, code, kind)

    def events(self, ev):
        """[ev, the events inside it], or None: binlog/payload.py reads them."""
        state = self.bf.state
        hl = state.header_len
        kinds = state._kinds
        if kinds is not self.kinds or len(kinds) != self.known:
            self.kinds, self.known = kinds, len(kinds)
            self.plans = tuple(self._plan(kinds[c], hl) if c in kinds else None
                               for c in range(256))
        out = self.frame(ev.raw, hl, CHECKSUM_LEN if ev.footer else 0, self.plans, self.read,
                         self.make, self.make_lazy, ev.file, ev.offset)
        if out is None:
            return None
        out.insert(0, ev)
        return out
