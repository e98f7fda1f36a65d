"""The replica's status: SHOW SLAVE STATUS (MariaDB, MySQL before 8.0.22) or SHOW REPLICA STATUS
(MySQL 8.0.22+, MariaDB 10.5+), read through the project's own client (replication.Connection),
with the two vocabularies' column names mapped to one (`ReplicaStatus`); the error the SQL thread
stopped on (`SqlError`, parsed from Last_SQL_Error or, for MySQL's multi-threaded applier, from
performance_schema.replication_applier_status_by_worker); and whether the repair acts on it
(`refusal`).

The repair acts only on a stop with error 1032 (HA_ERR_KEY_NOT_FOUND: an UPDATE or DELETE whose
row is missing) or 1062 (HA_ERR_FOUND_DUPP_KEY: a new row that collides) inside a rows event. The
error text names the primary's binlog file and the event's end_log_pos as the event header
carries it ("the event's master log mariadb-bin.000001, end_log_pos 1178"); that, not an offset
in the relay log, is what finds the event.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from ..errors import BinlogGrammarError, ReplicationError
from ..output.quoting import string

ROW_CONFLICTS = {1032: "row not found", 1062: "duplicate key"}


class RepairError(BinlogGrammarError):
    """The repair could not be done (exit 1); the message is one line."""


class Refused(RepairError):
    """The replica's stop is not one the repair acts on, or acting would be unsafe (exit 2).
    Nothing has been changed."""


# normalized name -> (MariaDB and MySQL < 8.0.22 column, MySQL 8.0.22+ column)
COLUMNS = {
    "connection_name": ("Connection_name", "Channel_Name"),
    "source_host": ("Master_Host", "Source_Host"),
    "source_port": ("Master_Port", "Source_Port"),
    "source_server_id": ("Master_Server_Id", "Source_Server_Id"),
    "source_log_file": ("Master_Log_File", "Source_Log_File"),
    "read_source_log_pos": ("Read_Master_Log_Pos", "Read_Source_Log_Pos"),
    "relay_log_file": ("Relay_Log_File", "Relay_Log_File"),
    "relay_log_pos": ("Relay_Log_Pos", "Relay_Log_Pos"),
    "relay_source_log_file": ("Relay_Master_Log_File", "Relay_Source_Log_File"),
    "exec_source_log_pos": ("Exec_Master_Log_Pos", "Exec_Source_Log_Pos"),
    "io_running": ("Slave_IO_Running", "Replica_IO_Running"),
    "sql_running": ("Slave_SQL_Running", "Replica_SQL_Running"),
    "sql_errno": ("Last_SQL_Errno", "Last_SQL_Errno"),
    "sql_error": ("Last_SQL_Error", "Last_SQL_Error"),
    "using_gtid": ("Using_Gtid", "Auto_Position"),
    "gtid_io_pos": ("Gtid_IO_Pos", "Retrieved_Gtid_Set"),
    "executed_gtid_set": ("Executed_Gtid_Set", "Executed_Gtid_Set"),
}
# replication filters: with any of them the SQL thread skips some rows events
FILTERS = ("Replicate_Do_DB", "Replicate_Ignore_DB", "Replicate_Do_Table", "Replicate_Ignore_Table",
           "Replicate_Wild_Do_Table", "Replicate_Wild_Ignore_Table", "Replicate_Rewrite_DB")
_INTS = {"source_port", "source_server_id", "read_source_log_pos", "relay_log_pos",
         "exec_source_log_pos", "sql_errno"}


@dataclass
class ReplicaStatus:
    """One replication connection's status, with MariaDB's and MySQL's names mapped to one."""

    mariadb: bool
    connection_name: str = ""
    source_host: str = ""
    source_port: int = 0
    source_server_id: int = 0
    source_log_file: str = ""
    read_source_log_pos: int = 0
    relay_log_file: str = ""
    relay_log_pos: int = 0
    relay_source_log_file: str = ""
    exec_source_log_pos: int = 0
    io_running: str = ""
    sql_running: str = ""
    sql_errno: int = 0
    sql_error: str = ""
    using_gtid: str = ""
    gtid_io_pos: str = ""
    executed_gtid_set: str = ""
    raw: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_row(cls, row: dict, mariadb: bool) -> "ReplicaStatus":
        st = cls(mariadb, raw=dict(row))
        for name, columns in COLUMNS.items():
            value = next((row[c] for c in columns if row.get(c) is not None), None)
            if value is None:
                continue
            if name in _INTS:
                try:
                    value = int(value)
                except ValueError:
                    value = 0
            setattr(st, name, value)
        return st

    @property
    def running(self) -> bool:
        return self.sql_running == "Yes"

    @property
    def gtid_mode(self) -> bool:
        """Does this connection replicate by GTID (MariaDB Using_Gtid, MySQL Auto_Position)?"""
        return self.using_gtid not in ("", "No", "0")

    @property
    def caught_up(self) -> bool:
        """The SQL thread runs and has executed everything the IO thread received."""
        return self.running and self.relay_source_log_file == self.source_log_file and \
            self.exec_source_log_pos == self.read_source_log_pos

    @property
    def label(self) -> str:
        return f"connection '{self.connection_name}'" if self.connection_name else "the replica"


@dataclass
class SqlError:
    """What Last_SQL_Error says: the error number, where the failing event ends in the primary's
    binlog (file, end_log_pos from the event header), the event kind and table when named, the
    GTID when named (MySQL's multi-threaded applier), and whether it was a statement."""

    errno: int
    text: str
    source_file: Optional[str] = None
    end_log_pos: Optional[int] = None
    event_kind: Optional[str] = None  # Write_rows, Update_rows, Delete_rows
    table: Optional[str] = None  # db.table
    gtid: Optional[str] = None
    statement: bool = False

    @property
    def position(self) -> str:
        return f"{self.source_file}, end_log_pos {self.end_log_pos}"


_ROWS_ERROR = re.compile(r"Could not execute (\w+?)(?:_v1)? event on table ([^;]+);")
_WHERE = re.compile(r"(?:master|source) log ([^,\s]+), end_log_pos (\d+)")
_WORKER = re.compile(r"failed executing transaction '([^']*)' at (?:master|source) log ([^,\s]+), "
                     r"end_log_pos (\d+)")
_STATEMENT = re.compile(r"^Error '.*' on query\.", re.S)


def parse_sql_error(errno: int, text: str) -> SqlError:
    """The parts of a Last_SQL_Error text (MariaDB, MySQL 5.x to 9.x)."""
    err = SqlError(int(errno or 0), text or "")
    m = _WORKER.search(err.text)
    if m:
        gtid = m[1]
        err.gtid = None if gtid in ("", "ANONYMOUS", "NOT_YET_DETERMINED") else gtid
        err.source_file, err.end_log_pos = m[2], int(m[3])
    m = _ROWS_ERROR.search(err.text)
    if m:
        err.event_kind, err.table = m[1], m[2].strip()
    where = _WHERE.findall(err.text)
    if where:  # the last one names the event (a worker's text names the transaction first)
        err.source_file, err.end_log_pos = where[-1][0], int(where[-1][1])
    err.statement = bool(_STATEMENT.match(err.text.strip()))
    return err


def first_line(text: str, limit: int = 240) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[:limit] + " ..."


def refusal(st: ReplicaStatus, err: Optional[SqlError]) -> Optional[str]:
    """Why the repair does not act on this stop (one line), or None when it does."""
    if st.running:
        return None
    if err is None or err.errno == 0:
        return (f"{st.label}'s SQL thread is stopped without an error (STOP SLAVE or a restart): "
                "there is no row conflict to repair; START SLAVE SQL_THREAD runs it again")
    if err.statement:
        return (f"{st.label} stopped with error {err.errno} on a statement (binlog_format STATEMENT "
                f"or MIXED), not on a rows event: the binlog does not hold its rows: "
                f"{first_line(err.text, 160)}")
    if err.errno not in ROW_CONFLICTS:
        return (f"{st.label} stopped with error {err.errno}, which is not a row conflict (1032 row "
                f"not found, 1062 duplicate key): {first_line(err.text, 160)}")
    filters = {k: v for k, v in st.raw.items() if k in FILTERS and v}
    if filters:
        name, value = next(iter(filters.items()))
        return (f"{st.label} replicates with filters ({name}={first_line(value, 80)}"
                f"{', ...' if len(filters) > 1 else ''}): the repair cannot tell which rows the SQL "
                "thread applies, so it changes none")
    if err.source_file is None or err.end_log_pos is None:
        return (f"{st.label} stopped with error {err.errno} but Last_SQL_Error names no event "
                f"position (master log FILE, end_log_pos N): {first_line(err.text, 160)}")
    return None


# ---------------------------------------------------------------------------------------------
# reading it

def _ident_text(name: str) -> str:
    return string(name)


def read_status(conn, connection_name: Optional[str] = None) -> ReplicaStatus:
    """The status of the replica's default connection, or of `connection_name` (MariaDB's
    multi-source connection name, MySQL's channel). Refused when the server is not a replica or
    the connection does not exist."""
    mariadb = bool(conn.mariadb)
    if mariadb:
        rows = _mariadb_rows(conn, connection_name)
    else:
        rows = _mysql_rows(conn, connection_name)
    if not rows:
        raise Refused(f"{conn.server} is not a replica (SHOW SLAVE STATUS is empty)")
    st = ReplicaStatus.from_row(rows[0], mariadb)
    if connection_name:
        st.connection_name = connection_name
    return st


def _mariadb_rows(conn, name):
    if name is not None and name != "":
        try:
            return conn.query_dicts(f"SHOW SLAVE {_ident_text(name)} STATUS")
        except ReplicationError as e:
            if getattr(e, "code", None) == 1617:  # ER_MASTER_INFO: no master connection 'x'
                raise Refused(f"{conn.server} has no replication connection named {name!r}"
                              f"{_names_hint(conn)}") from None
            raise
    rows = conn.query_dicts("SHOW SLAVE STATUS")
    if rows and any(v for v in rows[0].values()):
        return rows
    everything = conn.query_dicts("SHOW ALL SLAVES STATUS")
    named = [r.get("Connection_name") for r in everything if r.get("Connection_name")]
    if named:
        raise Refused(f"{conn.server} replicates through named connections only "
                      f"({', '.join(repr(n) for n in named)}): give --connection-name")
    return []


def _names_hint(conn) -> str:
    try:
        rows = conn.query_dicts("SHOW ALL SLAVES STATUS")
    except ReplicationError:
        return ""
    names = [repr(r.get("Connection_name") or "") for r in rows]
    return f" (it has {', '.join(names)})" if names else " (it has none)"


def _mysql_rows(conn, name):
    channel = f" FOR CHANNEL {_ident_text(name)}" if name else ""
    try:
        rows = conn.query_dicts("SHOW REPLICA STATUS" + channel)
    except ReplicationError as e:
        if getattr(e, "code", None) != 1064:  # before 8.0.22: a syntax error
            raise
        rows = conn.query_dicts("SHOW SLAVE STATUS" + channel)
    if not name and len(rows) > 1:
        names = [r.get("Channel_Name") or r.get("Channel_name") or "" for r in rows]
        raise Refused(f"{conn.server} replicates through several channels "
                      f"({', '.join(repr(n) for n in names)}): give --connection-name")
    return rows


def read_sql_error(conn, st: ReplicaStatus) -> Optional[SqlError]:
    """The error the SQL thread stopped on (None when it has none). For MySQL's multi-threaded
    applier, whose Last_SQL_Error only says that a worker failed, the worker's own message from
    performance_schema.replication_applier_status_by_worker is read as well."""
    if not st.sql_errno:
        return None
    err = parse_sql_error(st.sql_errno, st.sql_error)
    if not st.mariadb and err.event_kind is None and "Worker" in err.text:
        try:
            rows = conn.query_dicts(
                "SELECT LAST_ERROR_NUMBER AS n, LAST_ERROR_MESSAGE AS m FROM performance_schema."
                "replication_applier_status_by_worker WHERE LAST_ERROR_NUMBER <> 0 AND CHANNEL_NAME="
                + _ident_text(st.connection_name))
        except ReplicationError:
            rows = []
        for r in rows:
            worker = parse_sql_error(int(r["n"]), r["m"] or "")
            if worker.event_kind is not None or worker.end_log_pos is not None:
                worker.gtid = worker.gtid or err.gtid
                return worker
    return err


# ---------------------------------------------------------------------------------------------
# acting on it

def restart_statements(st: ReplicaStatus, from_executed: bool = False, mysql_old: bool = False) -> list:
    """The statements that start replication again after a repair: START SLAVE [name]
    SQL_THREAD (MySQL: START REPLICA SQL_THREAD [FOR CHANNEL name]); or, `from_executed`, on
    MariaDB, a restart from what the SQL thread has executed rather than from its relay log
    position: STOP SLAVE, then with GTIDs START SLAVE (the relay logs are fetched again from
    @@gtid_slave_pos), else CHANGE MASTER TO the executed file and position (which discards
    the relay logs) and START SLAVE. The latter is for a Relay_Log_Pos that lies inside the
    failing transaction, where the SQL thread alone would start in the middle of it."""
    name = st.connection_name
    if st.mariadb:
        q = f" {_ident_text(name)}" if name else ""
        if not from_executed:
            return [f"START SLAVE{q} SQL_THREAD"]
        out = [f"STOP SLAVE{q}"]
        if not st.gtid_mode:
            out.append(f"CHANGE MASTER{q} TO master_log_file={_ident_text(st.relay_source_log_file)}, "
                       f"master_log_pos={int(st.exec_source_log_pos)}")
        return out + [f"START SLAVE{q}"]
    channel = f" FOR CHANNEL {_ident_text(name)}" if name else ""
    return [f"START {'SLAVE' if mysql_old else 'REPLICA'} SQL_THREAD{channel}"]


def restart(conn, st: ReplicaStatus, from_executed: bool = False):
    """Run restart_statements (MySQL before 8.0.22: START SLAVE)."""
    try:
        for sql in restart_statements(st, from_executed):
            conn.query(sql)
    except ReplicationError as e:
        if st.mariadb or getattr(e, "code", None) != 1064:
            raise
        for sql in restart_statements(st, from_executed, mysql_old=True):
            conn.query(sql)


def parallel_appliers(conn, st: ReplicaStatus) -> int:
    """How many parallel applier threads the replica runs (0: the serial applier)."""
    var = "slave_parallel_threads" if st.mariadb else "replica_parallel_workers"
    try:
        rows = conn.query_dicts(f"SELECT @@global.{var} AS n")
    except ReplicationError:
        try:
            rows = conn.query_dicts("SELECT @@global.slave_parallel_workers AS n")
        except ReplicationError:
            return 0
    return int(rows[0]["n"] or 0) if rows else 0


def applied_gtids(conn, st: ReplicaStatus):
    """What the replica has applied, to tell whether a transaction found in the relay log is
    already done: MariaDB {domain: last seq_no} of @@gtid_slave_pos; MySQL the executed set's
    text (stream.GtidSet reads it)."""
    if st.mariadb:
        rows = conn.query_dicts("SELECT @@global.gtid_slave_pos AS p")
        out = {}
        for part in (rows[0]["p"] or "").split(","):
            bits = part.strip().split("-")
            if len(bits) == 3 and all(b.isdigit() for b in bits):
                out[int(bits[0])] = max(out.get(int(bits[0]), 0), int(bits[2]))
        return out
    return st.executed_gtid_set or ""


__all__ = ["ReplicaStatus", "SqlError", "RepairError", "Refused", "read_status", "read_sql_error",
           "parse_sql_error", "refusal", "restart_statements", "restart", "parallel_appliers",
           "applied_gtids", "first_line",
           "ROW_CONFLICTS", "COLUMNS", "FILTERS"]
