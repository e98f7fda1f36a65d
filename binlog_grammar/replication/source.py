"""The replication source: a server's binlog events over the replication protocol, with
reconnection and resumption at the last complete transaction (see the package docstring)."""
from __future__ import annotations

import logging
import random
import socket
import threading
import time
import zlib
from dataclasses import replace
from typing import Optional

from construct import ConstructError

from ..errors import ReplicationError
from ..generated import enums
from ..generated import types as T
from ..generated.catalog import EVENTS
from ..binlog import boundaries as B
from ..binlog.gtid import (  # noqa: F401 - GTID_EVENTS: replication/stream.py takes it from here
    GTID_EVENTS, MARIADB_GTID, MariaDBGtidState, MySQLGtidSet, gtid_of)
from ..binlog.header import V4_HEADER_LEN
from ..binlog.parse import CHECKSUM_LEN, footer_crc
from ..binlog.positions import position_key
from ..binlog.reader import Event, FormatState, event_name, parse_event, update_state
from .auth import Secret
from .connection import Connection, TLSOptions, binlog_status
from .errors import ConnectionLost, ProtocolError, first_line, retryable
from .packets import ERR, OK, is_eof, packet_kind, spec_parse

log = logging.getLogger("binlog_grammar.replication")

ARTIFICIAL = next(bit for bit, name in enums.EVENT_FLAGS.items() if name == "LOG_EVENT_ARTIFICIAL_F")
DUMP_FLAGS = {name: bit for bit, name in enums.BINLOG_DUMP_FLAGS.items()}
DUMP_GTID_FLAGS = {name: bit for bit, name in enums.BINLOG_DUMP_GTID_FLAGS.items()}
MARIA_SLAVE_CAPABILITY_GTID = 4  # MariaDB sql/log_event.h, MARIA_SLAVE_CAPABILITY_MINE
HEARTBEATS = {"HEARTBEAT_LOG_EVENT", "HEARTBEAT_LOG_EVENT_V2"}
# the transaction a GTID event opens, as _track follows it: MySQL's (a BEGIN or one statement
# follows), MariaDB's (it is the BEGIN), MariaDB's standalone group of one statement
_MODES = {B.GTID: "gtid", B.GTID_BEGIN: "mariadb", B.GTID_STANDALONE: "standalone"}
ROTATE_POST_HEADER_LEN = next(et.post_header_len[0] for et in EVENTS.values()
                              if et.name == "ROTATE_EVENT")  # the spec's default for ROTATE
BOUNDED_RECONNECT_TIMEOUT = 60.0  # seconds a source with an end keeps reconnecting by default
RECONNECT_REPORT_EVERY = 60.0  # while the server stays down, one log line this often


class ReplicationSource:
    """Events of a server's binlog, read over the replication protocol; iterate it for
    reader.Event objects (see the package docstring).

    Where to start: `file` and `pos` (default: the first binlog file, position 4), or `gtid`: a
    MariaDB GTID position ('0-1-100,1-2-7', the last transaction already had per domain) or a
    MySQL GTID set ('uuid:1-100', transactions already had). Where to stop: `until_now` (the end
    of the binlog when the source first connects: SHOW MASTER STATUS / SHOW BINARY LOG STATUS),
    `until=(file, pos)`, `stop()` from another thread, or never (new events are followed;
    `blocking=False` ends at the current end instead, the server deciding).

    Bounded waits: `connect_timeout` for connecting and authenticating, `read_timeout` for each
    query, three heartbeat periods (plus `read_timeout`) of silence in the stream; after a drop,
    reconnection with backoff from `backoff[0]` s doubling up to `backoff[1]` s between attempts
    (0.1 s to 5 s by default), for at most `reconnect_timeout` s (`reconnect=False`: no
    reconnection). The default `reconnect_timeout=None` never gives up while the source follows
    the binlog (no end: nothing but stop(), or an error a retry cannot mend, ends it); with an end
    (`until_now`, `until`, `blocking=False`) it gives up after BOUNDED_RECONNECT_TIMEOUT s.
    The loss of a connection, each reconnection (with where it resumes) and, while the server stays
    down, a line a minute are logged as warnings on the "binlog_grammar.replication" logger.
    """

    def __init__(self, host="127.0.0.1", port=3306, user="root", password=None, *,
                 server_id: Optional[int] = None, file: Optional[str] = None, pos: int = 4,
                 gtid: Optional[str] = None, until_now=False, until=None, blocking=True,
                 heartbeat=5.0, connect_timeout=10.0, read_timeout=30.0, reconnect=True,
                 reconnect_timeout=None, backoff=(0.1, 5.0), tls: Optional[TLSOptions] = None,
                 server_public_key: Optional[str] = None, get_server_public_key=False,
                 verify_checksum=True, require_row_format=True, yield_heartbeats=False,
                 unix_socket: Optional[str] = None):
        self.host = host
        self.port = int(port)
        self.user = user
        self._secret = Secret(password)
        self.unix_socket = unix_socket  # a local server's socket file instead of host:port
        self.server = unix_socket or f"{host}:{self.port}"
        self.server_id = int(server_id) if server_id else random.randint(1 << 16, (1 << 31) - 1)
        if gtid is not None and file is not None:
            raise ValueError("give either a file and position or a GTID position, not both")
        self.start_file = file or ""
        self.start_pos = int(pos)
        self.until_now = until_now
        self.until = tuple(until) if until else None
        self.blocking = blocking
        self.heartbeat = float(heartbeat)
        if self.heartbeat <= 0:
            raise ValueError("heartbeat must be a positive number of seconds")
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.reconnect = reconnect
        self.reconnect_timeout = reconnect_timeout
        self.backoff = backoff
        self.tls = tls or TLSOptions()
        self.server_public_key = server_public_key
        self.get_server_public_key = get_server_public_key
        self.verify_checksum = verify_checksum
        self.require_row_format = require_row_format
        self.yield_heartbeats = yield_heartbeats  # the pymysqlreplication shim: they are events there
        # what is known of the server and the stream
        self.server_version = ""
        self.mariadb: Optional[bool] = None
        self.state = FormatState()
        self.file: Optional[str] = None  # binlog file being read
        self.pos = self.start_pos
        self.delivered: Optional[tuple] = None  # (file, end) of the last event yielded
        self.resume: Optional[tuple] = None  # (file, pos) after the last complete transaction
        self.gtid_state = None  # MariaDBGtidState / MySQLGtidSet in GTID mode
        self.target: Optional[tuple] = self.until
        self.reconnects = 0  # successful reconnections
        self.reconnect_attempts = 0
        self.heartbeats = 0
        self.connections = 0
        self._conn: Optional[Connection] = None
        self._stop = threading.Event()
        self._finished = False
        self._iterating = False
        self._tx_mode = None  # None, gtid, begin, mariadb, standalone: how the open transaction began
        self._tx_gtid = None
        self._reconnected = False
        self._fde_files = set()
        if gtid is not None:
            self._gtid_mode_from_text(gtid)

    def __repr__(self):
        return (f"ReplicationSource({self.server}, user={self.user!r}, server_id={self.server_id}, "
                f"at={self.file}:{self.pos})")

    def _gtid_mode_from_text(self, text):
        if MARIADB_GTID.match(text.split(",")[0] or ""):
            self.gtid_state = MariaDBGtidState(text)
        else:
            self.gtid_state = MySQLGtidSet(text)

    @property
    def password(self):
        """The password, as a Secret that never prints."""
        return self._secret

    @property
    def position(self):
        """(file, pos): where the stream stands (the end of the last event read)."""
        return (self.file, self.pos)

    def stop(self):
        """End the iteration from another thread (the current wait is cut short)."""
        self._stop.set()
        conn = self._conn
        if conn is not None and conn.sock is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        """Stop the stream and close its connection (as stop())."""
        self.stop()

    def stop_at(self, file: str, pos: int):
        """Stop once the stream reaches (file, pos) (settable from another thread)."""
        self.target = (file, int(pos))

    # -- iteration ---------------------------------------------------------------------------
    def __iter__(self):
        if self._iterating:
            raise RuntimeError("this ReplicationSource is already being iterated")
        self._iterating = True
        try:
            yield from self._run()
        finally:
            self._iterating = False

    def follows(self) -> bool:
        """Does this source follow the binlog with no end (blocking, no until, no until_now)?"""
        return self.blocking and not self.until_now and self.target is None

    def _give_up_after(self) -> Optional[float]:
        if self.reconnect_timeout is not None:
            return self.reconnect_timeout
        return None if self.follows() else BOUNDED_RECONNECT_TIMEOUT

    def _run(self):
        started = False
        lost_since = None
        last_report = 0.0
        delay = self.backoff[0]
        while not self._stop.is_set() and not self._finished:
            conn = None
            try:
                conn = self._open(first=not started)
                if started:
                    self.reconnects += 1
                    log.warning("%s: reconnected%s; resuming at %s", self.server,
                                f" after {time.monotonic() - lost_since:.1f} s" if lost_since else "",
                                self._resume_text())
                started = True
                lost_since = None
                for ev in self._read(conn):
                    delay = self.backoff[0]
                    yield ev
                    if self._stop.is_set() or self._finished:
                        return
                return  # the server ended the stream (non-blocking dump) or the target was reached
            except ReplicationError as e:
                if self._stop.is_set():
                    return
                if not started or not self.reconnect or not retryable(e):
                    raise
                now = time.monotonic()
                limit = self._give_up_after()
                if lost_since is None:  # the connection was just lost: one line
                    lost_since = last_report = now
                    log.warning("%s: %s; reconnecting (resuming at %s)", self.server, e.message,
                                self._resume_text())
                elif now - last_report >= RECONNECT_REPORT_EVERY:  # down for long: a line a minute
                    last_report = now
                    log.warning("%s: still reconnecting after %.0f s (retrying every %.1f s); last "
                                "error: %s", self.server, now - lost_since, delay, e.message)
                if limit is not None and now - lost_since > limit:
                    raise ReplicationError(f"gave up reconnecting after {now - lost_since:.0f} s; "
                                           f"last error: {e.message}", self.server) from None
                if self._stop.wait(delay):
                    return
                delay = min(delay * 2, self.backoff[1])
                self.reconnect_attempts += 1
            finally:
                self._conn = None
                if conn is not None:
                    conn.close()

    def _resume_text(self):
        if self.gtid_state is not None:
            return f"GTID {self.gtid_state}"
        if self.resume:
            return f"{self.resume[0]}:{self.resume[1]}"
        return f"{self.start_file or '(first file)'}:{self.start_pos}"

    # -- one connection ----------------------------------------------------------------------
    def _open(self, first: bool) -> Connection:
        conn = Connection(self.host, self.port, self.user, tls=self.tls,
                          connect_timeout=self.connect_timeout, read_timeout=self.read_timeout,
                          server_public_key=self.server_public_key,
                          get_server_public_key=self.get_server_public_key, secret=self._secret,
                          unix_socket=self.unix_socket)
        self._conn = conn
        conn.connect()
        self.connections += 1
        try:
            self._setup(conn, first)
        except BaseException:
            conn.close()
            raise
        return conn

    def _setup(self, conn: Connection, first: bool):
        self.server_version = conn.server_version
        self.mariadb = conn.mariadb
        row = conn.query_dicts("SELECT @@global.log_bin AS log_bin, @@global.binlog_format AS fmt")
        if not row or row[0]["log_bin"] not in ("1", "ON"):
            raise ReplicationError("binary logging is off on the server (log_bin=OFF): there is no "
                                   "binlog to read", self.server)
        fmt = (row[0]["fmt"] or "").upper()
        if self.require_row_format and fmt != "ROW":
            raise ReplicationError(f"the server logs with binlog_format={fmt}, not ROW: row changes "
                                   f"would be missing (set binlog_format=ROW on the server, or "
                                   f"accept any format)", self.server)
        if first and self.until_now and self.target is None:
            self.target = self._master_status(conn)
        conn.query("SET @master_binlog_checksum='CRC32', @source_binlog_checksum='CRC32'")
        period = int(self.heartbeat * 1e9)
        conn.query(f"SET @master_heartbeat_period={period}, @source_heartbeat_period={period}")
        gtid_mode = self.gtid_state is not None
        if conn.mariadb:
            conn.query(f"SET @mariadb_slave_capability={MARIA_SLAVE_CAPABILITY_GTID}")
            if gtid_mode:
                if not isinstance(self.gtid_state, MariaDBGtidState):
                    raise ReplicationError("a MySQL GTID set was given but the server is MariaDB "
                                           "(give domain-server-sequence)", self.server)
                conn.query(f"SET @slave_connect_state='{self.gtid_state}'")
                conn.query("SET @slave_gtid_strict_mode=0, @slave_gtid_ignore_duplicates=0")
        elif gtid_mode and not isinstance(self.gtid_state, MySQLGtidSet):
            raise ReplicationError("a MariaDB GTID position was given but the server is MySQL "
                                   "(give uuid:1-100)", self.server)
        conn.simple_command(T.com_register_slave.build(dict(
            server_id=self.server_id, hostname="", user="", password="", port=0,
            replication_rank=0, master_id=0)))
        # where this connection starts
        self._tx_mode = None
        self._tx_gtid = None
        self._reconnected = self.delivered is not None
        if self.resume is not None and not gtid_mode:
            file, pos = self.resume
        else:
            file, pos = self.start_file, self.start_pos
        if self._reconnected:
            self.file = file or self.file
        self.pos = pos
        flags = 0 if self.blocking else DUMP_FLAGS["BINLOG_DUMP_NON_BLOCK"]
        conn.io.deadline = None
        conn.io.timeout = self.heartbeat * 3 + self.read_timeout
        if gtid_mode and not conn.mariadb:
            gflags = DUMP_GTID_FLAGS["BINLOG_THROUGH_GTID"] | (0 if self.blocking else
                                                               DUMP_GTID_FLAGS["BINLOG_DUMP_NON_BLOCK"])
            conn.io.command(T.com_binlog_dump_gtid.build(dict(
                flags=gflags, server_id=self.server_id, binlog_name="", binlog_pos=4,
                gtid_data=dict(gtid_set=self.gtid_state.encoded()))))
        else:
            if conn.mariadb:
                flags |= DUMP_FLAGS["BINLOG_SEND_ANNOTATE_ROWS_EVENT"]
            conn.io.command(T.com_binlog_dump.build(dict(
                binlog_pos=pos if not gtid_mode else 4, flags=flags, server_id=self.server_id,
                binlog_filename=(file or "") if not gtid_mode else "")))

    def _master_status(self, conn: Connection):
        row = binlog_status(conn)
        return (row["File"], int(row["Position"]))

    # -- the stream ----------------------------------------------------------------------------
    def _read(self, conn: Connection):
        io = conn.io
        while True:
            if self._reached():
                self._finished = True
                return
            if self._stop.is_set():
                return
            p = io.read()
            k = packet_kind(p)
            if k == ERR:
                raise conn.server_error(p)
            if is_eof(p):
                spec_parse(T.eof_packet, p, "EOF", self.server, self._secret)
                if not self.blocking:
                    self._finished = True  # a non-blocking dump reached the end
                    return
                # a blocking dump never ends by itself: the server ended the dump thread (a
                # shutdown or restart, or KILL): reconnect, do not take it for the end
                raise ConnectionLost("the server ended the binlog dump (shutting down or "
                                     "restarting?)", self.server)
            if k != OK:
                raise ProtocolError(f"unexpected packet in the binlog stream (first byte "
                                    f"{'none' if k < 0 else hex(k)}, {len(p)} bytes)", self.server)
            raw = bytes(spec_parse(T.binlog_stream_packet, p, "binlog stream", self.server,
                                    self._secret).event)
            ev = self._event(raw)
            if ev is not None:
                yield ev

    def _reached(self) -> bool:
        t = self.target
        return t is not None and self.file is not None and \
            position_key(self.file, self.pos) >= position_key(t[0], t[1])

    def _event(self, raw: bytes) -> Optional[Event]:
        """Parse one streamed event, follow the stream's position, and say whether to yield it."""
        state = self.state
        if len(raw) < state.header_len:
            raise ProtocolError(f"a {len(raw)}-byte event is shorter than an event header", self.server)
        try:
            head = T.common_header.parse(raw[:state.header_len], **state.context(0))
        except ConstructError as e:
            raise ProtocolError(f"malformed event header: {first_line(e, 160)}", self.server) from None
        name = event_name(head.type_code, state)
        log_pos = int(head.log_pos)
        artificial = bool(int(head.flags) & ARTIFICIAL) or log_pos == 0
        where = self.file or "(stream)"
        if name == "ROTATE_EVENT" and artificial:
            st = replace(state, checksum_alg=1 if _has_crc(raw) else 0)
            ev = parse_event(raw, st, file=where, offset=self.pos, verify_checksum=self.verify_checksum)
            new = ev.data.new_log_ident
            pos = int(ev.data.position) if ev.data.get("position") is not None else 4
            changed = new != self.file
            self.file, self.pos = new, pos
            ev.file = new
            ev.offset = pos
            ev.extra["artificial"] = True
            return ev if changed and not self._already_past(new, pos) else None
        if log_pos:
            offset = log_pos - len(raw)
        else:  # made up by the server; an FDE it repeats is the one at the start of the file
            offset = 4 if name == "FORMAT_DESCRIPTION_EVENT" else self.pos
        ev = parse_event(raw, state, file=where, offset=offset, verify_checksum=self.verify_checksum)
        if name in HEARTBEATS:
            self.heartbeats += 1
            ident = ev.data.get("log_ident") if hasattr(ev.data, "get") else None
            if ident and log_pos:
                self.file, self.pos = ident, log_pos
            if self.yield_heartbeats:
                ev.extra["heartbeat"] = True
                return ev
            return None
        update_state(state, ev)
        state.encrypted = False  # the server sends decrypted events (START_ENCRYPTION as ignorable)
        if artificial:
            ev.extra["artificial"] = True
            if name == "FORMAT_DESCRIPTION_EVENT":
                fresh = self.file not in self._fde_files
                self._fde_files.add(self.file)
                return ev if fresh else None
            return None if self._reconnected else ev
        end = log_pos
        dup = self.delivered is not None and \
            position_key(self.file, end) <= position_key(*self.delivered)
        self.pos = end
        self._track(ev, end)
        if name == "ROTATE_EVENT":
            self.file = ev.data.new_log_ident
            self.pos = int(ev.data.position) if ev.data.get("position") is not None else 4
            if self._tx_mode is None:
                self.resume = (self.file, self.pos)
        if name == "FORMAT_DESCRIPTION_EVENT":
            self._fde_files.add(ev.file)
        if dup:
            return None
        self.delivered = (ev.file, end)
        return ev

    def _already_past(self, file, pos) -> bool:
        return self.delivered is not None and position_key(file, pos) < position_key(*self.delivered)

    def _track(self, ev: Event, end: int):
        """Follow transaction boundaries: the resume point is the end of the last complete
        transaction (or of the last event outside transactions)."""
        kind = B.boundary(ev)  # what the event does to a transaction (binlog/boundaries.py)
        mode = self._tx_mode
        complete = False
        if kind in B.OPENS_WITH_GTID:
            self._tx_gtid = gtid_of(ev)
            # MariaDB's GTID stands for BEGIN, unless the group is standalone
            self._tx_mode = _MODES[kind]
        elif kind == B.BEGIN:
            self._tx_mode = "begin"
        elif kind in B.ENDS:  # XID, COMMIT, ROLLBACK, XA_PREPARE
            complete = True
        elif kind == B.STATEMENT:
            complete = mode in (None, "gtid", "standalone")
        elif kind == B.PAYLOAD:
            complete = mode == "gtid"
        elif kind == B.INSIDE:
            pass  # SAVEPOINT, ROLLBACK TO, XA END: the open transaction goes on
        elif mode is None and kind not in B.BELONGS:  # an event outside transactions
            complete = True
        if complete:
            if self._tx_gtid and self.gtid_state is not None:
                self.gtid_state.add(self._tx_gtid)
            self._tx_mode = None
            self._tx_gtid = None
            self.resume = (ev.file, end)


def _has_crc(raw: bytes) -> bool:
    """Does the fake ROTATE end with a CRC32 of its other bytes, the spec's event_checksum (its
    footer depends on what the replica announced, not on the file)? Only an event with room for
    the common header, ROTATE's post-header and the checksum can."""
    return len(raw) >= V4_HEADER_LEN + ROTATE_POST_HEADER_LEN + CHECKSUM_LEN and \
        zlib.crc32(raw[:-CHECKSUM_LEN]) == footer_crc(raw)
