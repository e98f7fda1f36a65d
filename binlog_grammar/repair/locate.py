"""The failing transaction: found by event headers, read from the relay logs or from the primary.

The SQL thread names the failing event by the primary's coordinates: the primary's binlog file and
the event's end_log_pos, which every event header carries (`log_pos`) and which the relay log
keeps as the primary wrote it. The relay log's own offsets differ (the replica adds its own
FORMAT_DESCRIPTION and ROTATE events, may lack the ANNOTATE_ROWS events, and splits files where
it likes), so the search never computes an offset: it walks the relay log from Relay_Log_File:
Relay_Log_Pos (where the SQL thread stands, a transaction boundary) across the following relay
files, follows the primary's file name through the primary's ROTATE events, groups events into
transactions (GTID or BEGIN to XID or COMMIT), and takes the transaction holding the event whose
header says (file, end_log_pos). With parallel appliers the SQL thread's position may lie several
transactions before the failing one; with GTIDs, a transaction the replica has already applied
(per @@gtid_slave_pos, or MySQL's executed set) is passed over, so a relay log that holds a
transaction twice (the IO thread reconnected) still gives the right one.

When the relay logs are not readable here, the same walk runs over the primary's binlog fetched
with the project's replication client (replication.ReplicationSource) from Relay_Master_Log_File:
Exec_Master_Log_Pos.

Row images are decoded with the replica's table definitions (`tables.TableInfo.schema`), read
only for the tables the failing transaction maps.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Optional

from ..errors import BinlogError, ReplicationError
from ..binlog import boundaries as B
from ..binlog.events import query_text
from ..binlog.framing import scan
from ..binlog.reader import FDE_CODE, BinlogFile, inner_events
from ..replication import position_key
from ..binlog.rows import RowDecoder
from ..binlog.stream import GtidSet, gtid_of
from .status import RepairError, ReplicaStatus, SqlError
from .tables import read_table_info


@dataclass
class EventRef:
    """Where one event is: the primary's coordinates from its header (file, end_log_pos) and
    where it was read (a relay log file and offset, or the primary's binlog)."""

    source_file: str
    source_end: int
    origin: str  # the relay log path, or "primary HOST:PORT"
    offset: int
    name: str
    relay: bool = True

    def text(self) -> str:
        where = f"{self.source_file}:{self.source_end}"
        if self.relay:
            where += f" (relay log {os.path.basename(self.origin)} at {self.offset})"
        return where


@dataclass
class Change:
    """One row change of the failing transaction, in transaction order."""

    op: str  # c (insert), u (update), d (delete)
    db: str
    table: str
    before: Optional[dict]
    after: Optional[dict]
    columns: list  # rows.Column of the binlog's TABLE_MAP
    event: EventRef
    row: int  # 1-based row number within its event

    @property
    def name(self) -> str:
        return f"{self.db}.{self.table}"


@dataclass
class FailingTransaction:
    gtid: Optional[str]
    source: str  # where it was read: relay log files or the primary
    start: EventRef
    end: EventRef
    failing: EventRef
    changes: list = field(default_factory=list)
    statements: list = field(default_factory=list)  # data statements inside (not BEGIN/COMMIT)
    tables: dict = field(default_factory=dict)  # (db, table) -> tables.TableInfo (None: missing)
    complete: bool = True
    relay_position_inside: bool = False  # Relay_Log_Pos lies inside it (see relay_position_agrees)
    source_start: int = 0  # where it begins in the primary's binlog

    def text(self) -> str:
        what = f"GTID {self.gtid}" if self.gtid else "the transaction"
        return f"{what} at {self.start.source_file}:{self.source_start}-{self.end.source_end}"


class ReplicaSchemas(dict):
    """The `schemas` mapping rows.RowDecoder reads: each table's schema is read from the
    replica's information_schema the first time the decoder asks for it. The decoder asks by
    "db.table", which names holding a dot make ambiguous, so the TABLE_MAP_EVENT's own names are
    announced first (`expect`) and the tables are kept by (db, table)."""

    def __init__(self, conn):
        super().__init__()
        self.conn = conn
        self.infos = {}  # (db, table) -> TableInfo or None
        self.expected = {}  # "db.table" -> (db, table)

    def __bool__(self):  # an empty mapping that still answers (RowDecoder tests `schemas or {}`)
        return True

    def expect(self, db: str, table: str):
        key = f"{db}.{table}"
        if self.expected.setdefault(key, (db, table)) != (db, table):
            other = self.expected[key]
            raise RepairError(f"the failing transaction maps two tables whose names read the same "
                              f"as db.table ({other!r} and {(db, table)!r}): not repaired")

    def get(self, key, default=None):
        pair = self.expected.get(key)
        if pair is None:
            db, _, table = key.partition(".")
            pair = (db, table)
        if pair not in self.infos:
            self.infos[pair] = read_table_info(self.conn, *pair)
        info = self.infos[pair]
        return info.schema() if info is not None else default


# ---------------------------------------------------------------------------------------------
# event sources

def relay_log_files(conn, st: ReplicaStatus, relay_dir: Optional[str] = None) -> tuple:
    """(readable relay log paths, index of Relay_Log_File among them, None), or ([], 0, why
    not). The paths are every relay log the index still lists (the SQL thread purges the ones
    it has finished), Relay_Log_File among them."""
    name = st.relay_log_file
    if not name:
        return [], 0, "the status names no relay log file"
    dirs = [relay_dir] if relay_dir else []
    if os.path.isabs(name):
        dirs.append(os.path.dirname(name))
    for var in ("relay_log_basename", "relay_log", "relay_log_index", "datadir"):
        try:
            rows = conn.query_dicts(f"SELECT @@global.{var} AS v")
        except ReplicationError:  # a variable this server does not have
            continue
        v = (rows[0]["v"] or "") if rows else ""
        if v and os.path.isabs(v):
            dirs.append(v if var == "datadir" else os.path.dirname(v))
    base = os.path.basename(name)
    first = next((os.path.join(d, base) for d in dirs if os.path.isfile(os.path.join(d, base))), None)
    if first is None:
        return [], 0, f"relay log {base} is not found here (looked in {', '.join(dict.fromkeys(dirs))})"
    if not os.access(first, os.R_OK):
        return [], 0, f"relay log {first} is not readable here"
    folder = os.path.dirname(first)
    stem = re.sub(r"\.\d+$", "", base)
    names = []
    index = os.path.join(folder, stem + ".index")
    if os.path.isfile(index) and os.access(index, os.R_OK):
        with open(index, encoding="utf-8", errors="replace") as fh:
            names = [os.path.basename(ln.strip()) for ln in fh if ln.strip()]
    if base not in names:
        names = sorted((f for f in os.listdir(folder) if re.fullmatch(re.escape(stem) + r"\.\d+", f)),
                       key=lambda f: int(f.rsplit(".", 1)[1]))
    paths = [os.path.join(folder, n) for n in names]
    paths = [p for p in paths if os.path.isfile(p) and os.access(p, os.R_OK)]
    return paths, paths.index(first), None


def _format_event_before(path: str, pos: int) -> Optional[int]:
    """The offset of the last FORMAT_DESCRIPTION_EVENT before `pos` (the primary's, in a relay
    log), None when `pos` is the end of the file; RepairError when `pos` is not where an event
    begins."""
    fde = None
    end = 4
    for at, code, length in scan(path):
        if at >= pos:
            if at != pos:
                raise RepairError(f"{path}: Relay_Log_Pos {pos} is not where an event begins")
            return fde if fde is not None else 4
        if code == FDE_CODE:
            fde = at
        end = at + length
    if pos == end:
        return None  # the end of the file
    raise RepairError(f"{path}: Relay_Log_Pos {pos} lies past the end of the file ({end} bytes)")


def relay_events(paths: list, start: int, source_file: str, replica_server_id: int,
                 first: int = 0, progress=None):
    """(event, primary's file, origin, format state) of the relay logs from offset `start` of
    paths[first] on. The primary's file name follows the ROTATE events the primary wrote (server
    id other than the replica's); the replica's own ROTATE to its next relay file is not one.
    progress(done, total): bytes of the relay logs read so far (the command's progress bar)."""
    sizes = [os.path.getsize(p) if os.path.isfile(p) else 0 for p in paths[first:]] \
        if progress is not None else []
    for i, path in enumerate(paths[first:]):
        if i == 0 and start > 4:
            fde = _format_event_before(path, start)
            if fde is None:
                continue  # Relay_Log_Pos is the end of this file: the next file follows
            f = BinlogFile(path, start=start, format_at=fde)
        else:
            f = BinlogFile(path)
        for ev in f:
            if progress is not None:
                progress(sum(sizes[:i]) + ev.end, sum(sizes))
            if ev.name == "ROTATE_EVENT" and int(ev.header.server_id) != replica_server_id:
                source_file = str(ev.data.new_log_ident)
                continue
            yield ev, source_file, path, f.state


def relay_position_agrees(path: str, pos: int, st: ReplicaStatus, replica_server_id: int) -> bool:
    """Does the relay log at `pos` continue where the SQL thread has executed to (the first
    event of the primary's there starts at Exec_Master_Log_Pos)? MariaDB's parallel applier
    can leave Relay_Log_Pos inside the failing transaction when that transaction spans relay
    files; the SQL thread would then start again in the middle of it."""
    for ev, source_file, _, _ in relay_events([path], pos, st.relay_source_log_file,
                                              replica_server_id):
        if int(ev.header.server_id) == replica_server_id or not int(ev.header.log_pos):
            continue  # the replica's own events, the primary's format event as relayed
        if source_file != st.relay_source_log_file:
            return True  # the primary rotated: positions start again
        return int(ev.header.log_pos) - len(ev.raw) == st.exec_source_log_pos
    return True  # nothing follows in this file


def primary_events(source):
    """(event, primary's file, origin, format state) of a replication.ReplicationSource."""
    origin = f"primary {source.server}"
    try:
        for ev in source:
            if ev.extra.get("artificial"):
                continue
            yield ev, ev.file, origin, source.state
    finally:
        source.stop()


# ---------------------------------------------------------------------------------------------
# the search

def _applied(gtid: Optional[str], applied) -> bool:
    if not gtid or applied is None:
        return False
    if isinstance(applied, dict):  # MariaDB: domain -> last seq_no
        bits = gtid.split("-")
        return len(bits) == 3 and int(bits[2]) <= applied.get(int(bits[0]), -1)
    try:
        return bool(applied) and gtid in GtidSet(applied)
    except ValueError:
        return False


def find_transaction(events, err: SqlError, applied=None, executed=None) -> Optional[tuple]:
    """The events of the transaction holding the failing event: (list of (event, primary file,
    origin, state), the failing item, complete?) or None when the input ends without it.

    A transaction runs from a GTID event (MariaDB's stands for BEGIN unless it is standalone) or
    a BEGIN to the XID, COMMIT or ROLLBACK (or, alone, one statement; MySQL's compressed
    TRANSACTION_PAYLOAD_EVENT holds a whole one). It is the failing one when one of its events
    ends at the error's (file, end_log_pos), or, when the error names a GTID, when it has that
    GTID; with GTIDs, one the replica has already applied is passed over, and so is one that
    starts before `executed` (the primary's (file, position) the SQL thread has executed to)."""
    tx = None
    hit = gtid = None
    in_begin = False

    def wanted():
        if err.gtid is not None:
            return gtid == err.gtid
        if hit is None or _applied(gtid, applied):
            return False
        if executed is None:
            return True
        first, file = tx[0][0], tx[0][1]
        start = int(first.header.log_pos) - len(first.raw)
        return position_key(file, start) >= position_key(*executed)

    def found(complete):
        return tx, hit or tx[0], complete

    for item in events:
        ev, source_file = item[0], item[1]
        kind = B.boundary(ev)  # what the event does to a transaction (binlog/boundaries.py)
        opened = False
        if kind in B.OPENS_WITH_GTID:
            if tx is not None and wanted():
                return found(False)
            tx, hit, gtid = [item], None, gtid_of(ev)
            in_begin = kind == B.GTID_BEGIN
            opened = True
        elif tx is None:
            if kind not in (B.BEGIN, B.STATEMENT):
                continue  # between transactions: format, rotate, checkpoint events
            tx, hit, gtid, in_begin = [item], None, None, kind == B.BEGIN
            opened = kind == B.BEGIN
        else:
            tx.append(item)
        if source_file == err.source_file and int(ev.header.log_pos) == err.end_log_pos:
            hit = item
        if opened:
            continue
        if kind == B.BEGIN:
            in_begin = True
            continue
        # a PAYLOAD holds a whole transaction when no BEGIN came before it
        ended = kind in B.ENDS or (kind in (B.STATEMENT, B.PAYLOAD) and not in_begin)
        if ended:
            if wanted():
                return found(True)
            tx, hit, gtid, in_begin = None, None, None, False
    if tx is not None and wanted():
        return found(False)
    return None


def decode_transaction(found: tuple, schemas: ReplicaSchemas) -> FailingTransaction:
    """The row changes (decoded with the replica's table definitions) and data statements of the
    transaction `find_transaction` gave."""
    items, hit, complete = found
    decoder = RowDecoder(schemas)

    def ref(item):
        ev, source_file, origin = item[0], item[1], item[2]
        return EventRef(source_file, int(ev.header.log_pos), origin, ev.offset, ev.name,
                        not origin.startswith("primary "))

    gtid = next((gtid_of(i[0]) for i in items if B.is_gtid(i[0])), None)
    first = items[0][0]
    tx = FailingTransaction(gtid, items[0][2], ref(items[0]), ref(items[-1]), ref(hit),
                            complete=complete,
                            source_start=int(first.header.log_pos) - len(first.raw))
    for item in items:
        ev, state = item[0], item[3]
        evs = [ev]
        if ev.type is not None and any(d.target == "events" for d in ev.type.decode):
            evs += list(inner_events(ev, state))
        for e in evs:
            if e.type is None:
                continue
            if e.name == "TABLE_MAP_EVENT":
                schemas.expect(str(e.data.db), str(e.data.table))
                decoder.table_map(e)
            elif e.type.row_op:
                r = ref(item)
                r.name = e.name
                try:
                    rows = decoder.changes(e)
                except BinlogError as exc:
                    raise RepairError(f"the failing transaction's rows cannot be decoded: {exc}") \
                        from None
                for k, ch in enumerate(rows, 1):
                    tx.changes.append(Change(ch.op, ch.db, ch.table, ch.before, ch.after,
                                             ch.columns, r, k))
            elif B.boundary(e) == B.STATEMENT:
                tx.statements.append(query_text(e) or "(compressed statement that does not inflate)")
    tx.tables = dict(schemas.infos)
    return tx


__all__ = ["EventRef", "Change", "FailingTransaction", "ReplicaSchemas", "relay_log_files",
           "relay_events", "relay_position_agrees", "primary_events", "find_transaction", "decode_transaction"]
