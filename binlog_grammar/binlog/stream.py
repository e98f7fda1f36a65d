"""The reading API over one file, several files or a binlog index: events in order, their row
changes, transactions, and the filters every command shares.

    s = open_stream(["mariadb-bin.index"], Filters(tables=["shop.orders"]))
    for tx in s.transactions():
        print(tx.gtid, tx.end, len(tx.changes))

Events are framed and parsed one at a time (memory stays flat); row images are decoded only when
`StreamEvent.changes` is read, so events that filters drop are never decoded. TABLE_MAPs are kept
per file, FORMAT_DESCRIPTION_EVENTs set each file's post-header lengths and checksum algorithm, and
the events inside TRANSACTION_PAYLOAD_EVENTs are yielded after their payload event.
"""
from __future__ import annotations

import datetime as _dt
import fnmatch
import os
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from .. import native
from ..runtime import construct as rt
from ..errors import BinlogError, EventFormatError, UndecodableRowsError
from . import api_filters, boundaries as B
from .api import changes_of
from .batch import Inner
from .boundaries import query_kind
from .gtid import GtidSet, gtid_of
from ..generated.catalog import EVENTS
from .reader import BinlogFile, inner_events_or_damage
from .rewrite import rewrite_event
from .rows import RowDecoder, Table
from .window import Window, epoch

ROWS_STMT_END_F = 0x01  # rows event flags: the last rows event of its statement


# ---------------------------------------------------------------------------------------------
# inputs

def expand_inputs(inputs: Iterable) -> list:
    """Binlog paths in reading order: files as given, a `.index` file replaced by the files it lists
    (relative names resolve against the index's folder)."""
    out = []
    for item in inputs:
        path = os.fspath(item)
        if os.path.isdir(path):
            raise BinlogError("is a directory, not a binlog file", path)
        if path.endswith(".index"):
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    names = [ln.strip() for ln in fh if ln.strip()]
            except OSError as e:
                raise BinlogError(e.strerror or str(e), path) from None
            base = os.path.dirname(path)
            out += [n if os.path.isabs(n) else os.path.join(base, os.path.basename(n)) for n in names]
        else:
            out.append(path)
    return out


# ---------------------------------------------------------------------------------------------
# filters

@dataclass
class Filters:
    """What to keep. Positions apply to the first file (start) and the last file (stop), as in
    mysqlbinlog; positions and datetimes (start inclusive, stop exclusive) keep or drop whole
    transactions by their first event, or cut event by event as mysqlbinlog does
    (binlog.window says which rule applies where); GTID sets apply to whole transactions;
    databases and tables (`db.table`, shell patterns) to row changes, table maps and statements
    (by their default database).

    What it is given is checked when it is made (binlog.api_filters): one name is a list of one,
    a table without its database is that table in any database (`items` is `*.items`),
    datetimes may be ISO text, dates or epoch seconds (UTC unless an offset is given), GTID sets
    their text; a wrong type or value raises TypeError or ValueError naming the field."""

    start_position: Optional[int] = None
    stop_position: Optional[int] = None
    start_datetime: Optional[_dt.datetime] = None
    stop_datetime: Optional[_dt.datetime] = None
    include_gtids: Optional[GtidSet] = None
    exclude_gtids: Optional[GtidSet] = None
    databases: list = field(default_factory=list)
    tables: list = field(default_factory=list)
    exclude_tables: list = field(default_factory=list)

    def __post_init__(self):
        api_filters.check(self)

    @property
    def keeps_all(self) -> bool:
        """No filter is set (positions aside, which the stream applies by file)."""
        return not (self.start_datetime or self.stop_datetime or self.include_gtids is not None
                    or self.exclude_gtids is not None or self.databases or self.tables
                    or self.exclude_tables)

    def table_ok(self, db: Optional[str], table: Optional[str]) -> bool:
        """The databases and table patterns keep this table."""
        if self.databases and db not in self.databases:
            return False
        name = f"{db}.{table}"
        if self.tables and not any(fnmatch.fnmatchcase(name, p) for p in self.tables):
            return False
        return not any(fnmatch.fnmatchcase(name, p) for p in self.exclude_tables)

    def gtid_ok(self, gtid: Optional[str]) -> bool:
        """The GTID sets keep this transaction's GTID."""
        if self.include_gtids is not None and gtid not in self.include_gtids:
            return False
        return not (self.exclude_gtids is not None and gtid in self.exclude_gtids)

    def time_ok(self, ts: int) -> bool:
        """The timestamp of one event is in the datetime window."""
        start, stop = epoch(self.start_datetime), epoch(self.stop_datetime)
        return not ((start is not None and ts < start) or (stop is not None and ts >= stop))


# ---------------------------------------------------------------------------------------------
# events and transactions

@dataclass
class UndecodedRows:
    """A rows event whose rows were not decoded (Stream(raw_rows=True)): shown raw instead.
    damaged: the event is bad input (no TABLE_MAP_EVENT maps its table, its bytes do not
    decode), as opposed to a valid event whose TABLE_MAP_EVENT does not say enough to size it."""

    file: str
    offset: int
    event_type: str
    message: str
    damaged: bool


class StreamEvent:
    """One event of the stream with what the stream knows about it: `event` (a reader.Event:
    file, offset, end, name, header, data), `table` (the rows.Table its TABLE_MAP maps: db,
    table, columns; None for events that name no table), `gtid` (its transaction's), `tx_seq`
    and, for a rows event, `changes` (rows.RowChange objects, decoded when first read)."""

    __slots__ = ("event", "table", "gtid", "_decoder", "_changes", "tx_seq", "undecoded",
                 "_on_undecoded")

    def __init__(self, event, table=None, gtid=None, decoder=None, tx_seq=None, on_undecoded=None):
        self.event = event
        self.table: Optional[Table] = table
        self.gtid = gtid
        self.tx_seq = tx_seq  # number of the enclosing transaction in the stream (1-based)
        self._decoder = decoder
        self._changes = None
        self.undecoded: Optional[str] = None  # why the rows were not decoded (raw rows)
        self._on_undecoded = on_undecoded

    @property
    def changes(self) -> list:
        """The row changes of a rows event (decoded on first use), else []. A rows event that
        cannot be decoded raises, unless the stream shows such rows raw: then it has no changes
        and `undecoded` says why."""
        if self._changes is None:
            ev = self.event
            if ev.type is not None and ev.type.row_op and self._decoder is not None:
                try:
                    self._changes = self._decoder.changes(ev, self.table)
                except EventFormatError as e:
                    if self._on_undecoded is None or not self._on_undecoded(ev, e):
                        raise
                    self._changes = []
                    self.undecoded = e.message
            else:
                self._changes = []
        return self._changes

    def __repr__(self):
        return f"StreamEvent({self.event.file}:{self.event.offset} {self.event.name})"


@dataclass
class Transaction:
    """Events from a GTID (or BEGIN) to the XID/COMMIT/ROLLBACK that ends them, or one
    statement logged on its own (DDL)."""

    gtid: Optional[str]
    file: str
    start_pos: int
    end_pos: int = 0
    timestamp: int = 0
    server_id: int = 0
    events: list = field(default_factory=list)
    end: str = "incomplete"  # commit, rollback, ddl, xa_prepare, incomplete
    seq: int = 0
    file_index: int = 0  # which input file the first event was read from

    @property
    def changes(self) -> list:
        """The row changes of its rows events (rows.RowChange), in order."""
        return [c for se in self.events for c in se.changes]

    @property
    def size(self) -> int:
        """Its bytes in the binlog (the events inside a payload event counted once, in it)."""
        return sum(len(se.event.raw) for se in self.events if not se.event.inner)


@dataclass
class Written:
    """A run of events a lane wrote (the stream yields it in their place): its text, where the
    run ends, the last GTID and the number of GTIDs in it, and the tables its TABLE_MAPs map."""

    text: str
    end: int
    gtid: Optional[str] = None
    gtids: int = 0
    tables: dict = field(default_factory=dict)


class Stream:
    """Iterate events (`events()`) or transactions (`transactions()`) of the inputs.

    cut: how a position or datetime window applies (binlog.window): "transactions" (the default:
    whole transactions by their first event, for output that may be replayed) or "events"
    (mysqlbinlog's rule, for `dump` text). `notes` lists, once the stream is read, the window's
    boundaries that fell inside a transaction."""

    def __init__(self, inputs, filters: Optional[Filters] = None, verify_checksum=True,
                 schemas=None, skip_damaged=False, progress: Optional[Callable] = None,
                 server_version=None, follow_rotate=False, raw_rows=False, cut="transactions"):
        if cut not in ("transactions", "events"):
            raise ValueError("cut is 'transactions' or 'events'")
        self.paths = expand_inputs(inputs)
        self.filters = filters or Filters()
        self.cut = cut
        self.window = Window(self.filters, lambda: len(self.paths) - 1)
        self.verify_checksum = verify_checksum
        self.schemas = schemas
        self.skip_damaged = skip_damaged
        self.progress = progress
        self.damage = []  # what skip_damaged stepped over (reader.Damage records)
        self.fallbacks = {}  # path -> Counter: events the fast readers refused (BinlogFile.fallbacks)
        self.total_bytes = sum(_size(p) for p in self.paths)
        self.follow_rotate = follow_rotate  # go on into the file a closing ROTATE_EVENT names
        # --server-version: read every file as if this server had written it (the layouts that
        # depend on ctx.server follow it instead of the FORMAT_DESCRIPTION_EVENT's version)
        self.server = parse_server_version(server_version) if server_version else None
        self._keeps_all = self.filters.keeps_all
        self._xa_dropped = set()  # xids whose XA PREPARE the filters dropped (their COMMIT goes too)
        # raw_rows: a rows event that cannot be decoded has no changes and says why (its
        # StreamEvent.undecoded) instead of raising, when the file is valid (its TABLE_MAP does not
        # say enough) or, with skip_damaged, when the event is damaged (then it counts as damage)
        self.raw_rows = raw_rows
        self.undecoded = []  # UndecodedRows, in reading order
        # a lane writes runs of events itself (output/text_lane.py, for `dump`'s text): after
        # each event, lane.after(event, file, decoder) gives None or what it wrote (a Written)
        self.lane = None
        # --rewrite-db (binlog/rewrite.py Rules): TABLE_MAPs rebuilt and statements' default
        # database renamed as they are read; the lane, which writes from the file's bytes, stands by
        self.rewrite = None
        self.table_metadata = False  # --print-table-metadata: TABLE_MAPs marked for the text
        self._on_undecoded = self._undecodable if raw_rows else None

    def _undecodable(self, ev, err) -> bool:
        """Show this rows event raw (True) or let its error stop the stream (False)."""
        damaged = not isinstance(err, UndecodableRowsError)
        if damaged and not self.skip_damaged:
            return False
        self.undecoded.append(UndecodedRows(ev.file, ev.offset, ev.name, err.message, damaged))
        return True

    # -- raw events, with tables and GTIDs attached ----------------------------------------
    def _all_events(self):
        new, new_plain = _event_maker(), _event_maker(rows=False)
        done = 0
        seq = 0
        i = -1
        while i + 1 < len(self.paths):
            i += 1
            path = self.paths[i]
            last = None
            decoder = RowDecoder(self.schemas)
            kwargs = {"skip_damaged": True} if self.skip_damaged else {}
            f = BinlogFile(path, self.verify_checksum, **kwargs)
            inner = Inner.of(f)  # payloads' events framed in C (None: binlog/payload.py's)
            self.fallbacks[path] = decoder.fallbacks = f.fallbacks  # one count per file
            gtid = None
            server, progress = self.server, self.progress
            tables = decoder.tables
            for ev in f:
                if server is not None and f.state.server is not server:
                    f.state.server = server  # before the next event is parsed
                if progress is not None:
                    progress(done + ev.end, self.total_bytes)
                et = ev.type
                what = _WHAT.get(et.code, _PLAIN) if et is not None else _PLAIN
                if self.rewrite:
                    ev = rewrite_event(ev, self.rewrite, f.state)
                if self.table_metadata and what is _TABLE_MAP:
                    ev.extra = {**ev.extra, "print_table_metadata": True}
                if what is _PLAIN:
                    yield i, new_plain(ev, None, gtid, decoder, seq, None)
                elif what is _ROWS:
                    head = ev._head  # the table id rows_head() read (binlog/batch.py), or None
                    yield i, new(ev, tables.get(head[0] if head else int(ev.data["table_id"])),
                                 gtid, decoder, seq, self._on_undecoded)
                elif what is _TABLE_MAP:
                    yield i, new_plain(ev, decoder.table_map(ev), gtid, decoder, seq, None)
                elif what is _GTID:
                    gtid = gtid_of(ev)
                    seq += 1
                    yield i, new_plain(ev, None, gtid, decoder, seq, None)
                else:  # _INNER
                    evs = inner.events(ev) if inner is not None and not self.rewrite else None
                    if evs is None:
                        evs = inner_events_or_damage(ev, f.state, self.verify_checksum,
                                                     self.damage if self.skip_damaged else None)
                    for e in evs:
                        yield i, new(e, _table_of(decoder, e), gtid, decoder, seq,
                                     self._on_undecoded)
                last = ev
                ran = self._lane_after(ev, f, decoder) \
                    if self.lane is not None and not (self.rewrite or self.table_metadata) else None
                if ran is not None:  # the events that follow, written by the lane
                    if ran.text:
                        yield i, ran
                    gtid = ran.gtid or gtid
                    seq += ran.gtids
                    tables.update(ran.tables)
                    last = None  # not the file's last event: no ROTATE to follow
                    if progress is not None:
                        progress(done + ran.end, self.total_bytes)
            self.damage += getattr(f, "damage", [])
            done += _size(path)
            nxt = self._rotated_to(path, last) if i == len(self.paths) - 1 else None
            if nxt is not None:
                self.paths.append(nxt)
                self.total_bytes += _size(nxt)

    def _lane_after(self, ev, f, decoder, stop=None):
        """The run of events after `ev` the lane wrote (a Written; the file reads on after it),
        or None."""
        ran = self.lane.after(ev, f, decoder, stop)
        if ran is None or ran.end == ev.end:
            return None
        f.skip_to = ran.end
        return ran

    def _rotated_to(self, path, last):
        """With follow_rotate: the file a closing ROTATE_EVENT names, when it is beside this one."""
        if not self.follow_rotate or last is None or last.type is None \
                or last.type.name != "ROTATE_EVENT":
            return None
        name = os.path.basename(str(last.data.new_log_ident))
        nxt = os.path.join(os.path.dirname(path), name)
        if not name or os.path.abspath(nxt) in {os.path.abspath(p) for p in self.paths} \
                or not os.path.isfile(nxt):
            return None
        return nxt

    @property
    def notes(self) -> list:
        """The window's boundaries that fell inside a transaction, one line each."""
        return self.window.notes()

    def _event_ok(self, se: StreamEvent) -> bool:
        """The event passes the database and table filters (the window is applied elsewhere)."""
        flt = self.filters
        if self._keeps_all:
            return True
        ev = se.event
        if se.table is not None:
            return flt.table_ok(se.table.db, se.table.table)
        if B.is_statement_event(ev) and (flt.databases or flt.tables):
            return query_kind(ev) != B.STATEMENT or not flt.databases or ev.data.db in flt.databases
        return True

    def events(self):
        """Every event the filters keep, in order (GTID filters drop whole transactions; a window
        whole transactions too, or cuts as mysqlbinlog does with cut="events")."""
        window = self.window
        if self._keeps_all and (self.cut == "events" or not window.active):
            # nothing is dropped by transaction: no need to group them
            items = window.cut(self._all_events()) if window.active else self._all_events()
            for _, se in items:
                yield se
            return
        for tx_or_event in self._grouped():
            if isinstance(tx_or_event, Transaction):
                yield from tx_or_event.events
            else:
                yield tx_or_event

    def row_changes(self):
        """Every row change the filters keep, in order, as binlog.api.Change: op, db, table,
        before, after, with its transaction's GTID and its file and position."""
        return changes_of(self.events())

    def transactions(self):
        """Every transaction the filters keep, in order (events outside transactions dropped)."""
        for item in self._grouped():
            if isinstance(item, Transaction) and item.events:
                yield item

    def _grouped(self):
        """Transactions and the events between them, with the filters applied."""
        tx: Optional[Transaction] = None
        in_begin = False
        standalone = False
        implicit = False  # tx holds rows no BEGIN or GTID opened (it ends at their STMT_END_F)
        whole = self.cut == "transactions"
        items = self._all_events()
        if not whole and self.window.active:
            items = self.window.cut(items)
        for i, se in items:
            ev = se.event
            kind = B.boundary(ev)  # what the event does to a transaction (binlog/boundaries.py)
            if implicit and kind not in B.BELONGS:  # the statement's rows ended without STMT_END_F
                yield from self._finish(tx)
                tx, implicit = None, False
            if tx is None and not ev.inner and ev.type is not None and ev.type.role in B.ROWS_ROLES:
                # rows outside any transaction (a server that wrote no BEGIN around them, as the
                # 5.2 development tree of ver_5_1-wl2325_r.001): one statement, committed as written
                tx = self._new_tx(se, i)
                in_begin, standalone, implicit = False, False, True
            if kind in B.OPENS_WITH_GTID:
                if tx is not None:
                    yield from self._finish(tx)
                tx = self._new_tx(se, i)
                standalone = kind == B.GTID_STANDALONE
                # MariaDB's GTID event is the transaction's BEGIN (none follows it): SAVEPOINT,
                # ROLLBACK TO and statements up to the XID or COMMIT belong to it. MySQL's is
                # followed by BEGIN, or by the one statement of its own transaction
                in_begin = kind == B.GTID_BEGIN
                self._add(tx, se)
                continue
            if kind == B.BEGIN:
                if tx is None or (in_begin and not _only_gtid(tx)):
                    if tx is not None:
                        yield from self._finish(tx)
                    tx = self._new_tx(se, i)
                in_begin = True
                self._add(tx, se)
                continue
            if kind in B.ENDS and tx is not None:  # XID, COMMIT, ROLLBACK, XA_PREPARE
                self._add(tx, se)
                tx.end = B.ENDS[kind]
                yield from self._finish(tx)
                tx, in_begin = None, False
                continue
            if kind == B.STATEMENT and not in_begin:
                if tx is None:
                    tx = self._new_tx(se, i)
                self._add(tx, se)
                tx.end = "ddl"
                yield from self._finish(tx)
                tx, in_begin = None, False
                continue
            if tx is not None and (in_begin or standalone or ev.inner or kind in B.BELONGS):
                tx.events.append(se)
                if not ev.inner:
                    tx.end_pos = ev.offset + len(ev.raw)
                if implicit and ev.type.row_op and int(ev.data["flags"]) & ROWS_STMT_END_F:
                    tx.end = "commit"
                    yield from self._finish(tx)
                    tx, implicit = None, False
                continue
            # an event between transactions (ROTATE, FORMAT_DESCRIPTION, ...)
            if self._event_ok(se) and (not whole or self.window.event_ok(i, ev)):
                yield se
        if tx is not None:
            yield from self._finish(tx)

    def _new_tx(self, se: StreamEvent, i: int = 0) -> Transaction:
        ev = se.event
        return Transaction(se.gtid if B.is_gtid(ev) else None,
                           ev.file, ev.offset, timestamp=int(ev.header.timestamp),
                           server_id=int(ev.header.server_id), seq=se.tx_seq or 0, file_index=i)

    def _add(self, tx: Transaction, se: StreamEvent):
        tx.events.append(se)
        if not se.event.inner:
            tx.end_pos = se.event.end

    def _finish(self, tx: Transaction):
        """The transaction, if the filters keep it: the window by its first event (whole, with
        cut="transactions"; cut="events" has cut the events before), then GTIDs, then tables."""
        if self.cut == "transactions" and self.window.active \
                and not self.window.transaction_ok(tx.file_index, tx):
            return
        if self._keeps_all:
            yield tx
            return
        flt = self.filters
        if not flt.gtid_ok(tx.gtid):
            return
        kept = [se for se in tx.events if self._event_ok(se)]
        if (flt.databases or flt.tables or flt.exclude_tables) and not any(
                se.table is not None or _is_statement(se) for se in kept):
            # an XA COMMIT/ROLLBACK goes with its XA PREPARE (kept, or not read: kept)
            prepared, ended = B.xa_ids(tx.events)
            if prepared is not None:
                self._xa_dropped.add(prepared)
            if ended is None or ended in self._xa_dropped:
                return
        tx.events = kept
        yield tx


def _event_maker(rows=True):
    """StreamEvent(event, table, gtid, decoder, tx_seq, on_undecoded): made by the compiled
    slot_maker (native._rows) when the compiled backend runs, else by its __init__. rows=False:
    for events that are not rows events, with their changes made ([], a new list each)."""
    slot_maker = getattr(native.rows(), "slot_maker", None)
    if slot_maker is None:
        return StreamEvent
    d = StreamEvent.__dict__
    make = slot_maker(StreamEvent, tuple(d[n] for n in (
        "event", "table", "gtid", "_decoder", "tx_seq", "_on_undecoded", "_changes", "undecoded")),
        (None if rows else list, None))
    if not rows and make(*(None,) * 6)._changes != []:  # a build whose maker takes list as is
        return StreamEvent
    return make


def _only_gtid(tx: Transaction) -> bool:
    """The transaction holds its GTID event alone (a BEGIN after it is still its BEGIN)."""
    return len(tx.events) == 1 and B.is_gtid(tx.events[0].event)


def _is_statement(se: StreamEvent) -> bool:
    ev = se.event
    return B.is_statement_event(ev) and query_kind(ev) == B.STATEMENT


def _table_of(decoder, e):
    if e.type is not None and e.type.name == "TABLE_MAP_EVENT":
        return decoder.table_map(e)
    if e.type is not None and e.type.row_op:
        head = e._head  # the table id rows_head() read (binlog/batch.py), or None
        return decoder.tables.get(head[0] if head else int(e.data.table_id))
    return None


in_transaction = B.belongs  # events of this name belong to the transaction around them

_GTID_CODES = frozenset(c for c, e in EVENTS.items() if e.role in B.GTID_ROLES)
_ROWS_CODES = frozenset(c for c, e in EVENTS.items() if e.row_op)
_TABLE_MAP_CODE = next(c for c, e in EVENTS.items() if e.name == "TABLE_MAP_EVENT")
_HAS_INNER = frozenset(c for c, e in EVENTS.items() if any(d.target == "events" for d in e.decode))
# what _all_events does with an event, by type code (_PLAIN: nothing but yield it)
_PLAIN, _ROWS, _TABLE_MAP, _GTID, _INNER = "plain", "rows", "table map", "gtid", "inner"
_WHAT = {**{c: _INNER for c in _HAS_INNER}, **{c: _GTID for c in _GTID_CODES},
         _TABLE_MAP_CODE: _TABLE_MAP, **{c: _ROWS for c in _ROWS_CODES}}


with_inner = inner_events_or_damage  # the event, then the events inside it (no damage list: errors)


def _size(path) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


parse_server_version = rt.server_version


def open_stream(inputs, filters: Optional[Filters] = None, verify_checksum=True, schemas=None,
                skip_damaged=False, progress=None, server_version=None, follow_rotate=False,
                raw_rows=False, cut="transactions") -> Stream:
    """A Stream over `inputs`: binlog file paths and `.index` files (a list, in reading order).
    `filters` keeps what a stream.Filters says; `schemas` gives table layouts for binlogs without
    full metadata (rows.load_schemas); `skip_damaged` steps over damaged events; `follow_rotate`
    goes on into the file a closing ROTATE_EVENT names; `raw_rows` shows rows events that cannot
    be decoded without changes instead of raising; `cut` is how a window applies (Stream).
    binlog_grammar.open_stream takes more (one path, a glob, a server) and calls this."""
    return Stream(inputs, filters, verify_checksum, schemas, skip_damaged, progress, server_version,
                  follow_rotate, raw_rows, cut)


__all__ = ["open_stream", "Stream", "StreamEvent", "Transaction", "Filters", "GtidSet", "gtid_of",
           "expand_inputs", "UndecodedRows"]
