"""python-mysql-replication's BinLogStreamReader over this package: a server's binlog read with
the replication client (binlog_grammar.replication.ReplicationSource: no pymysql, reconnection
and resumption included), or binlog files (`files=[...]`, which the library cannot read), with
the library's arguments, filters and stream attributes (`log_file`, `log_pos`).
"""
from __future__ import annotations

import copy
import os
from typing import Optional

from ...binlog.reader import BinlogFile
from ...binlog.rows import RowDecoder
from ...binlog.stream import expand_inputs, with_inner
from ...replication import Connection, ReplicationSource, Secret, binlog_status
from . import event as E
from . import row_event as R

# this package's event names -> the library's classes (the rest: NotImplementedEvent)
CLASSES = {
    "QUERY_EVENT": E.QueryEvent, "QUERY_COMPRESSED_EVENT": E.QueryEvent,
    "ROTATE_EVENT": E.RotateEvent, "FORMAT_DESCRIPTION_EVENT": E.FormatDescriptionEvent,
    "XID_EVENT": E.XidEvent, "INTVAR_EVENT": E.IntvarEvent, "GTID_LOG_EVENT": E.GtidEvent,
    "PREVIOUS_GTIDS_LOG_EVENT": E.PreviousGtidsEvent, "STOP_EVENT": E.StopEvent,
    "BEGIN_LOAD_QUERY_EVENT": E.BeginLoadQueryEvent,
    "EXECUTE_LOAD_QUERY_EVENT": E.ExecuteLoadQueryEvent,
    "HEARTBEAT_LOG_EVENT": E.HeartbeatLogEvent, "XA_PREPARE_LOG_EVENT": E.XAPrepareEvent,
    "ROWS_QUERY_LOG_EVENT": E.RowsQueryLogEvent, "RAND_EVENT": E.RandEvent,
    "USER_VAR_EVENT": E.UserVarEvent, "TABLE_MAP_EVENT": R.TableMapEvent,
    "PARTIAL_UPDATE_ROWS_EVENT": R.PartialUpdateRowsEvent,
    "ANNOTATE_ROWS_EVENT": E.MariadbAnnotateRowsEvent,
    "BINLOG_CHECKPOINT_EVENT": E.MariadbBinLogCheckPointEvent, "GTID_EVENT": E.MariadbGtidEvent,
    "GTID_LIST_EVENT": E.MariadbGtidListEvent,
    "START_ENCRYPTION_EVENT": E.MariadbStartEncryptionEvent,
}
for _op, _cls in (("WRITE", R.WriteRowsEvent), ("UPDATE", R.UpdateRowsEvent),
                  ("DELETE", R.DeleteRowsEvent)):
    for _v in ("_ROWS_EVENT_V1", "_ROWS_EVENT", "_ROWS_EVENT_V2", "_ROWS_COMPRESSED_EVENT_V1",
               "_ROWS_COMPRESSED_EVENT", "_ROWS_EVENT_V0"):
        CLASSES[_op + _v] = _cls

# the events the library yields when only_events is not given
DEFAULT_EVENTS = frozenset((
    E.QueryEvent, E.RotateEvent, E.StopEvent, E.FormatDescriptionEvent, E.XAPrepareEvent,
    E.XidEvent, E.GtidEvent, E.BeginLoadQueryEvent, E.ExecuteLoadQueryEvent, R.UpdateRowsEvent,
    R.WriteRowsEvent, R.DeleteRowsEvent, R.TableMapEvent, E.HeartbeatLogEvent,
    E.NotImplementedEvent, E.MariadbGtidEvent, E.RowsQueryLogEvent, E.MariadbAnnotateRowsEvent,
    E.RandEvent, E.MariadbStartEncryptionEvent, E.MariadbGtidListEvent,
    E.MariadbBinLogCheckPointEvent, E.UserVarEvent, E.PreviousGtidsEvent,
    R.PartialUpdateRowsEvent))


def _fake_rotate(ev):
    """The ROTATE_EVENT a server makes up when it opens the file a real one names."""
    fake = copy.copy(ev)
    fake.header = copy.copy(ev.header)
    fake.header.timestamp, fake.header.log_pos = 0, 0
    fake.extra = {**ev.extra, "artificial": True}
    return fake


class _Context:
    """What an event class reads besides the event: the stream's format and the table."""

    def __init__(self, state, dbms, mysql_version):
        self.state, self.dbms, self.mysql_version = state, dbms, mysql_version
        self.header_len = 19
        self.table = None
        self.pmr_table = None  # row_event.Table of `table`
        self.changes = None

    def crc_len(self, ev) -> int:
        return 4 if ev.offset >= 0 and getattr(self.state, "checksum_alg", 0) == 1 and not ev.inner else 0


class BinLogStreamReader:
    """Events of a server's binlog (or of files), as python-mysql-replication gives them.

    connection_settings: {"host", "port", "user", "passwd" or "password"}; server_id: this
    replica's id; blocking: wait for new events (else stop at the binlog's end);
    resume_stream with log_file/log_pos: start at that position (else at log_file's start; with
    neither, the current binlog file, as SHOW MASTER STATUS names it); auto_position: a GTID
    position to start after (MariaDB `0-1-100` with is_mariadb=True, MySQL `uuid:1-100`);
    is_mariadb without auto_position: from the first binlog file; end_log_pos: stop after the
    event that reaches it; only_events / ignored_events: event classes; only_tables /
    ignored_tables (table names), only_schemas / ignored_schemas: rows and TABLE_MAP events of
    other tables are left out; freeze_schema: a table id's first TABLE_MAP stands (later ones are
    left out); skip_to_timestamp: leave out events before this UNIX time; annotate_rows_event
    (with is_mariadb): MariaDB's ANNOTATE_ROWS events. files: read these binlog files (paths or
    an index) instead of a server. ctl_connection_settings, report_slave, slave_uuid,
    pymysql_wrapper, ignore_decode_errors, enable_logging and use_column_name_cache are
    accepted and have no effect (no second connection is needed: names come from the binlog's
    metadata); slave_heartbeat sets the heartbeat period, and the server's heartbeats on an
    idle stream are HeartbeatLogEvents (as the library yields them; without it there are none).
    """

    def __init__(self, connection_settings=None, server_id=None, ctl_connection_settings=None,
                 resume_stream=False, blocking=False, only_events=None, log_file=None,
                 log_pos=None, end_log_pos=None, filter_non_implemented_events=True,
                 ignored_events=None, auto_position=None, only_tables=None, ignored_tables=None,
                 only_schemas=None, ignored_schemas=None, freeze_schema=False,
                 skip_to_timestamp=None, report_slave=None, slave_uuid=None,
                 pymysql_wrapper=None, slave_heartbeat=None, is_mariadb=False,
                 annotate_rows_event=False, ignore_decode_errors=False, verify_checksum=False,
                 enable_logging=True, use_column_name_cache=False, files=None):
        if files is None and connection_settings is None:
            raise TypeError("BinLogStreamReader needs connection_settings (a server) or files")
        self.connection_settings = dict(connection_settings or {})
        self.server_id = server_id
        self.resume_stream, self.blocking = resume_stream, blocking
        self.log_file, self.log_pos, self.end_log_pos = log_file, log_pos, end_log_pos
        self.auto_position, self.is_mariadb = auto_position, is_mariadb
        self.only_tables, self.ignored_tables = only_tables, ignored_tables
        self.only_schemas, self.ignored_schemas = only_schemas, ignored_schemas
        self.freeze_schema, self.skip_to_timestamp = freeze_schema, skip_to_timestamp
        self.slave_heartbeat = slave_heartbeat
        self.annotate_rows_event = annotate_rows_event
        self.files = files
        events = set(only_events) if only_events is not None else set(DEFAULT_EVENTS)
        for e in ignored_events or ():
            events.discard(e)
        if filter_non_implemented_events:
            events.discard(E.NotImplementedEvent)
        self._allowed = frozenset(events)
        self.table_map = {}
        self.mysql_version = (0, 0, 0)
        self.dbms = None
        self.is_past_end_log_pos = False
        self._source: Optional[ReplicationSource] = None
        self._events = None

    # -- where the events come from ------------------------------------------------------------
    def _settings(self):
        s = self.connection_settings
        password = s.get("passwd", s.get("password"))
        return (s.get("host", "127.0.0.1"), int(s.get("port", 3306)), s.get("user", "root"),
                password)

    def _open_source(self) -> ReplicationSource:
        host, port, user, password = self._settings()
        kwargs = dict(server_id=self.server_id, blocking=self.blocking, verify_checksum=True,
                      require_row_format=False)
        if self.slave_heartbeat:  # the library's heartbeats are events, as the server sends them
            kwargs["heartbeat"] = float(self.slave_heartbeat)
            kwargs["yield_heartbeats"] = E.HeartbeatLogEvent in self._allowed
        if self.auto_position:
            kwargs["gtid"] = str(self.auto_position)
        elif not self.is_mariadb:
            if self.log_file is None or self.log_pos is None:
                conn = Connection(host, port, user, secret=Secret(password))
                try:
                    conn.connect()
                    row = binlog_status(conn)
                finally:
                    conn.close()
                self.log_file, self.log_pos = row["File"], int(row["Position"])
            kwargs["file"] = self.log_file
            kwargs["pos"] = int(self.log_pos) if self.resume_stream else 4
        self._source = ReplicationSource(host, port, user, password, **kwargs)
        return self._source

    def _raw_events(self):
        """(reader.Event, format state) in order, the events inside payload events after them."""
        if self.files is not None:
            for path in expand_inputs([self.files] if isinstance(self.files, (str, os.PathLike))
                                      else self.files):
                f = BinlogFile(path)
                for ev in f:
                    for e in with_inner(ev, f.state, True):
                        yield e, f.state
            return
        src = self._open_source()
        for ev in src:
            if self.dbms is None:
                self.dbms = "mariadb" if src.mariadb else "mysql"
            for e in with_inner(ev, src.state, True):
                yield e, src.state
            if ev.name == "ROTATE_EVENT" and not ev.extra.get("artificial"):
                # the server opens the next file with a made-up ROTATE (log_pos 0, timestamp 0),
                # which the library yields and the source, already there, leaves out
                yield _fake_rotate(ev), src.state

    def _generate(self):
        decoder = RowDecoder()
        tables = {}  # table id -> rows.Table of the TABLE_MAPs the filters keep
        made = {}  # table id -> (rows.Table, row_event.Table made from it)
        for ev, state in self._raw_events():
            name = ev.name
            cls = CLASSES.get(name, E.NotImplementedEvent)
            if name == "ANNOTATE_ROWS_EVENT" and not (self.is_mariadb and self.annotate_rows_event):
                continue  # the library asks for them only then
            ts = int(ev.header.timestamp)
            if name == "ROTATE_EVENT":
                self.log_pos = int(ev.data.position) if ev.data.get("position") is not None else 4
                self.log_file = str(ev.data.new_log_ident)
                if ts != 0:
                    tables, decoder = {}, RowDecoder()
            elif int(ev.header.log_pos):
                self.log_pos = int(ev.header.log_pos)
            if self.end_log_pos and self.log_pos >= self.end_log_pos:
                self.is_past_end_log_pos = True
            if name == "FORMAT_DESCRIPTION_EVENT":
                self.mysql_version = E.version_tuple(str(ev.data.server_version))
                if self.dbms is None:
                    self.dbms = "mariadb" if "mariadb" in str(ev.data.server_version).lower() else "mysql"
            if self.skip_to_timestamp and ts < self.skip_to_timestamp:
                continue
            ctx = _Context(state, self.dbms, self.mysql_version)
            if cls is R.TableMapEvent:
                tid = int(ev.data.table_id)
                if self.freeze_schema and tid in tables:
                    continue
                if not self._table_ok(str(ev.data.db), str(ev.data.table)):
                    continue
                ctx.table = tables[tid] = decoder.table_map(ev)
                ctx.pmr_table = self._made(made, ctx.table)
            elif issubclass(cls, R.RowsEvent):
                t = tables.get(int(ev.data.table_id))
                if t is None or not self._table_ok(t.db, t.table):
                    continue
                ctx.table = t
                ctx.pmr_table = self._made(made, t)
                ctx.changes = (lambda ev=ev, t=t: decoder.changes(ev, t))
            if cls not in self._allowed:
                if self.is_past_end_log_pos:
                    return
                continue
            yield cls(ev, ctx)
            if self.is_past_end_log_pos:
                return

    @staticmethod
    def _made(made, t):
        """The library's Table for rows.Table `t`, made once per TABLE_MAP that changes it."""
        got = made.get(t.table_id)
        if got is None or got[0] is not t:
            got = made[t.table_id] = (t, R.Table(t))
        return got[1]

    def _table_ok(self, schema, table) -> bool:
        if self.only_tables is not None and table not in self.only_tables:
            return False
        if self.ignored_tables is not None and table in self.ignored_tables:
            return False
        if self.only_schemas is not None and schema not in self.only_schemas:
            return False
        return not (self.ignored_schemas is not None and schema in self.ignored_schemas)

    # -- the library's interface --------------------------------------------------------------
    def fetchone(self):
        """The next event, or None at the end (a non-blocking stream at the binlog's end, the
        end of the files, end_log_pos reached)."""
        if self._events is None:
            self._events = self._generate()
        return next(self._events, None)

    def __iter__(self):
        return iter(self.fetchone, None)

    def close(self):
        """Stop reading and close the connection."""
        if self._events is not None:
            self._events.close()
        if self._source is not None:
            self._source.close()
