"""A live server's binlog as a Spark Structured Streaming source (Spark 4 Python streaming data source).

    from binlog_grammar.spark import register
    register(spark)
    changes = (spark.readStream.format("binlog")
               .option("host", "127.0.0.1").option("port", 3306)
               .option("user", "repl").option("password_env", "MYPW")
               .option("starting_offsets", "earliest")      # default: latest
               .option("tables", "shop.*")
               .load())
    (changes.writeStream.format("parquet").option("path", "/data/changes")
            .option("checkpointLocation", "/data/_checkpoint").trigger(processingTime="10 seconds")
            .start())

The rows are those of the batch source (`spark.read.format("binlog")`, see
binlog_grammar/spark/__init__.py): the same schema (op, before, after, source, ts_ms, db, table),
built by the same code (batch.BinlogReader over a stream.Stream whose events come from a
replication.ReplicationSource instead of files), one row per changed row, in binlog order.
`source.tx_seq` is NULL here: a micro-batch sees only part of the binlog, so there is no
transaction count over the whole input; order rows by (source.file, source.pos, source.row) and
group them into transactions by source.gtid. With the option `table`, `before` and `after` are
typed structs, as in the batch source; the table's columns come from its first TABLE_MAP_EVENT in
the server's binlog (read from the first file of SHOW BINARY LOGS when the query is defined).

The server user needs REPLICATION SLAVE (to read the binlog) and BINLOG MONITOR on MariaDB /
REPLICATION CLIENT on MySQL (for SHOW MASTER STATUS and SHOW BINARY LOGS). The server must log
with binlog_format=ROW; binlog_row_metadata=FULL gives column names (else `@1`, `@2`, ... or the
`schema` option).

## Options

Checked by binlog_grammar.spark.stream_options (`StreamOptions`).

| option | default | what |
|---|---|---|
| host, port | 127.0.0.1, 3306 | the server |
| user | (required) | the replication user |
| password_env | | name of an environment variable holding the password, read where it is needed: in the driver and in every executor (local mode: the variable must be in the environment before the SparkSession starts) |
| password_file | | a file holding the password (one trailing newline is dropped), readable on the driver and every executor; better than password_env on a cluster |
| starting_offsets | latest | where a new query starts: `latest` (the server's current end), `earliest` (the first file SHOW BINARY LOGS lists, position 4), `FILE:POS` or a JSON offset `{"file": ..., "pos": ...}` (a transaction boundary: the end_log_pos of a COMMIT/XID event, or a position SHOW MASTER STATUS gave). A query restarted from its checkpoint goes on from the checkpoint instead. |
| tables, exclude_tables, databases | | as in the batch source: `db.table` shell patterns, database names, comma-separated |
| table | | `db.table`: typed images of this table only |
| schema | | table schemas for binlogs without full metadata (as in the batch source) |
| verify_checksum | true | check every event's CRC32 |
| specs | | extra spec folders (as in the batch source) |
| server_id | random | the replica id the reads register with (each read is a new replica connection) |
| ssl_mode, ssl_ca, ssl_cert, ssl_key | preferred | TLS as the mysql client's --ssl-mode (disabled, preferred, required, verify-ca, verify-identity) |
| server_public_key, get_server_public_key | | caching_sha2_password / sha256_password without TLS: the server's RSA key file, or ask the server for it |
| connect_timeout, read_timeout | 10, 30 | seconds: connecting and authenticating; one query or one silence in the stream (plus 3 heartbeats) |
| heartbeat | 2 | seconds between the server's heartbeats while a read waits for events |
| reconnect_timeout | 60 | seconds: how long a read reconnects after a dropped connection (resuming at the last complete transaction), and how long the driver tolerates an unreachable server before the query fails |

There is no `password` option: Spark shows option values in plans, logs and the UI. The password
is kept in a replication.Secret and is in no message this module makes. The options that only
make sense for files (path, start_position, stop_position, the datetime and GTID filters,
split_bytes, min_partitions, content) are refused.

## Offsets

An offset is a binlog position at a transaction boundary, as JSON:
`{"file": "mariadb-bin.000003", "pos": 1234, "gtid": "0-1-57"}`. `file` and `pos` are what a
micro-batch is cut by and what a restarted query resumes from; `gtid` is added where the server
tells it consistently with the position (MariaDB: @@gtid_binlog_pos read before and after SHOW
MASTER STATUS, kept when both reads agree, and BINLOG_GTID_POS(file, pos) for a starting offset;
MySQL: the Executed_Gtid_Set column of SHOW MASTER STATUS / SHOW BINARY LOG STATUS). It is for
information (which transactions a batch ends after, e.g. to move a consumer to another server);
resumption never uses it.

- `initialOffset()`: the `starting_offsets` option (a FILE:POS start must name a file the server
  still has).
- `latestOffset()`: the server's current end, SHOW MASTER STATUS (MySQL 8.2 and later: SHOW BINARY
  LOG STATUS, falling back to the other), which is always a transaction boundary: the server
  writes whole transactions. When it has not moved the start is returned as it is, so Spark plans
  no batch. `Trigger.AvailableNow` is supported: the end is taken once, when the query starts.
- `partitions(start, end)`: one partition (start, end), none when end is not after start.
- `read(partition)`: a replication connection from `start` with `until=end`: the dump starts at
  start, and the source stops as soon as the end of an event reaches `end` (it checks before
  reading each packet), so no event after `end` is read; the read fails (rather than returning
  short) if the stream ends anywhere but exactly at `end`. A dropped connection is resumed at the
  last complete transaction (no event twice). If the server idles for three heartbeats and at
  least 10 s before `end` (the binlog was reset, or it is another server), the read fails.
- `commit(end)`: only a log line (the server keeps its binlog; purging it is the server's
  business, e.g. binlog_expire_logs_seconds).

## Guarantees

A micro-batch (start, end) is a pure function of the server's binlog between two positions: read
again, it gives the same rows in the same order. Spark writes the offsets of a batch to the
checkpoint before running it, so a query restarted from its checkpoint re-reads an unfinished
batch with exactly the same rows: exactly-once into idempotent or transactional sinks (file sinks,
foreachBatch keyed by batch id), at-least-once into others. Micro-batches with no new data are
not planned; every wait has a bound (connect_timeout, read_timeout, heartbeats, reconnect_timeout).
If the files a batch needs were purged from the server, the read fails with the server's error
naming the file: nothing is skipped silently.

## Errors

A server that cannot be reached, a refused login, a purged start file, a wrong option: the query
fails with one line `[binlog-grammar] HOST:PORT: what went wrong` inside Spark's exception (the
replication.ReplicationError message; `error_line(exc)` extracts it). No password is in it. A new
query fails at its first offset request; a running one treats a server that stops answering as
"no new data" for up to reconnect_timeout seconds (a restart), then fails. A wrong option fails
`load()`.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Optional

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

try:  # Spark 4.2+: Trigger.AvailableNow for Python sources
    from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow
except ImportError:  # pragma: no cover - older Spark 4
    class SupportsTriggerAvailableNow:  # type: ignore[no-redef]
        pass

from .batch import BinlogReader, use_grammar
from .options import ERROR_MARK, bad_input, marked_message
from .schema import MAP, change_schema
from .stream_options import STREAM_OPTIONS, StreamOptions, parse_start

log = logging.getLogger("binlog_grammar.spark.streaming")
STALL_SECONDS = 10.0  # with 3 heartbeats: how long a read waits at a standstill before its end


def is_stream(options) -> bool:
    """Do these data source options describe a stream (no files given)?"""
    o = {str(k).lower(): v for k, v in dict(options).items()}
    return not (o.get("path") or o.get("paths") or o.get("plan"))


def error_line(exc: BaseException) -> Optional[str]:
    """The one-line message of a failed query (a StreamingQueryException, or what
    awaitTermination raised) about the server or the options, if it is one of ours."""
    return marked_message(str(exc))


def offset(file: str, pos: int, gtid: Optional[str] = None) -> dict:
    d = {"file": str(file), "pos": int(pos)}
    if gtid:
        d["gtid"] = gtid
    return d


def _key(off: dict):
    from ..replication import position_key

    return position_key(off["file"], int(off["pos"]))


# ---------------------------------------------------------------------------------------------
# the schema

def stream_schema(options):
    """The stream's schema: the batch source's change rows (map images, or with `table` the
    table's typed struct from its first TABLE_MAP_EVENT in the server's binlog)."""
    try:
        o = StreamOptions(options)
        use_grammar(o.rows.specs)
        if not o.rows.table:
            return change_schema(MAP)
        from .typed import struct_type

        return change_schema(struct_type(_table_on_server(o)))
    except ValueError as e:
        raise bad_input(str(e).replace(ERROR_MARK, "")) from None


def _table_on_server(o: StreamOptions) -> list:
    from ..errors import BinlogError, ReplicationError
    from ..replication import open_replication_stream
    from .typed import column_def, same_table

    try:
        src = o.source(until_now=True)  # from the first binlog file to the current end
        try:
            for se in open_replication_stream(src, None, o.rows.schemas()).events():
                t = se.table
                if t is not None and se.event.name == "TABLE_MAP_EVENT" \
                        and same_table(t, o.rows.table_name):
                    return [column_def(c) for c in t.columns]
        finally:
            src.stop()
    except (ReplicationError, BinlogError) as e:
        raise bad_input(e) from None
    raise ValueError(f"table {o.rows.table}: no TABLE_MAP_EVENT of it in the binlog of {o.server} "
                     f"(yet)")


# ---------------------------------------------------------------------------------------------
# the reader

class OffsetRange(InputPartition):
    """One micro-batch: the binlog from `start` to `end` (offsets as dicts)."""

    def __init__(self, start: dict, end: dict):
        super().__init__({"start": start, "end": end})
        self.start = start
        self.end = end


class BinlogStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """`spark.readStream.format("binlog")`: see the module docstring. Made on the driver (where
    Spark calls the offset methods) and pickled to the executors (read); it holds the options and
    at most a live connection on the driver, never the password."""

    def __init__(self, options, schema):
        self.options = {str(k).lower(): v for k, v in dict(options).items()}
        self.schema = schema
        try:
            self.o = StreamOptions(self.options)
        except ValueError as e:
            raise bad_input(e) from None
        self._conn = None
        self._target: Optional[dict] = None  # Trigger.AvailableNow: the end taken at the start
        self._last_end: Optional[dict] = None
        self._down_since: Optional[float] = None

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_conn"] = None
        return d

    # -- the driver: offsets ---------------------------------------------------------------------
    def _query(self, fn):
        """fn(connection), on the kept connection; one new connection if it was lost."""
        from ..replication import ConnectionLost

        for attempt in range(2):
            if self._conn is None:
                self._conn = self.o.connection()
            try:
                return fn(self._conn)
            except ConnectionLost:
                self._close()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def _close(self):
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def _current_end(self) -> dict:
        """The server's end (SHOW MASTER STATUS) as an offset, with its GTID position."""
        return self._query(_status)

    def initialOffset(self) -> dict:
        try:
            start = self.o.starting
            if start["kind"] == "latest":
                off = self._current_end()
            elif start["kind"] == "earliest":
                off = self._query(lambda c: _at(c, None, 4, self.o.server))
            else:
                off = self._query(lambda c: _at(c, start["file"], start["pos"], self.o.server))
        except Exception as e:  # noqa: BLE001 - one line for the user
            raise _user_error(e, self.o.server) from None
        log.info("%s: starting at %s", self.o.server, off)
        return off

    def latestOffset(self, start: Optional[dict] = None, limit=None) -> dict:
        from ..replication import retryable

        try:
            end = self._current_end()
            self._down_since = None
        except Exception as e:  # noqa: BLE001
            # a server restarting: no new data for a while, up to reconnect_timeout
            from ..errors import ReplicationError

            now = time.monotonic()
            if isinstance(e, ReplicationError) and retryable(e):
                self._down_since = self._down_since or now
                if now - self._down_since <= self.o.reconnect_timeout:
                    log.warning("%s: %s; no new offsets until it answers", self.o.server, e)
                    known = start if start is not None else self._last_end
                    if known is not None:
                        return known
            raise _user_error(e, self.o.server) from None
        if self._target is not None and _key(end) > _key(self._target):
            end = self._target
        if start is not None and _key(end) <= _key(start):
            if _key(end) < _key(start):
                log.warning("%s: the server's binlog ends at %s:%s, before %s:%s where the query "
                            "stands", self.o.server, end["file"], end["pos"], start["file"],
                            start["pos"])
            end = start
        self._last_end = end
        return end

    def prepareForTriggerAvailableNow(self) -> None:
        try:
            self._target = self._current_end()
        except Exception as e:  # noqa: BLE001
            raise _user_error(e, self.o.server) from None

    def reportLatestOffset(self) -> Optional[dict]:
        return self._last_end

    def partitions(self, start: dict, end: dict):
        if _key(end) <= _key(start):
            return []
        return [OffsetRange(start, end)]

    def commit(self, end: dict) -> None:
        log.info("%s: committed up to %s:%s", self.o.server, end.get("file"), end.get("pos"))

    def stop(self) -> None:
        self._close()

    # -- the executors: rows -------------------------------------------------------------------
    def read(self, partition):
        from ..errors import BinlogError, ReplicationError
        from ..replication import open_replication_stream

        start, end = partition.start, partition.end
        o = self.o
        use_grammar(o.rows.specs)
        try:
            src = o.source(file=start["file"], pos=int(start["pos"]),
                           until=(end["file"], int(end["pos"])))
        except ValueError as e:
            raise bad_input(e) from None
        watch = _Stall(src, end, o.heartbeat)
        rows = BinlogReader(o.row_options, self.schema, STREAM_OPTIONS)
        try:
            stream = _WithoutTxSeq(open_replication_stream(src, o.rows.filters(), o.rows.schemas()))
            watch.start()
            yield from rows.change_batches(None, None, stream)
        except (ReplicationError, BinlogError) as e:
            raise bad_input(e) from None
        except (OSError, ValueError) as e:
            raise bad_input(f"{o.server}: {e}") from None
        finally:
            watch.done.set()
            src.stop()
        if watch.reason:
            raise bad_input(f"{o.server}: {watch.reason}")
        at = src.position
        if at[0] is None or _key({"file": at[0], "pos": at[1]}) != _key(end):
            raise bad_input(f"{o.server}: the binlog stream stopped at {at[0]}:{at[1]}, not at the end "
                             f"of this batch {end['file']}:{end['pos']} (is that a transaction "
                             f"boundary of this server's binlog?)")


class _WithoutTxSeq:
    """A stream.Stream whose StreamEvents carry no tx_seq (a batch has no whole-input count)."""

    def __init__(self, stream):
        self._stream = stream

    def events(self):
        for se in self._stream.events():
            se.tx_seq = None
            yield se

    def __getattr__(self, name):
        return getattr(self._stream, name)


class _Stall(threading.Thread):
    """Stops a read whose stream stands still before its end while the server sends heartbeats
    (it has nothing more to send: the end will never come)."""

    def __init__(self, src, end: dict, heartbeat: float):
        super().__init__(daemon=True, name="binlog-stream-stall")
        self.src = src
        self.end = _key(end)
        self.heartbeat = heartbeat
        self.done = threading.Event()
        self.reason: Optional[str] = None

    def run(self):
        src = self.src
        at, beats, since = None, 0, time.monotonic()
        while not self.done.wait(min(0.5, self.heartbeat / 2)):
            now = time.monotonic()
            pos = src.position
            if pos != at:
                at, beats, since = pos, src.heartbeats, now
                continue
            if pos[0] is None or _key({"file": pos[0], "pos": pos[1]}) >= self.end:
                continue
            if src.heartbeats - beats >= 3 and now - since >= max(STALL_SECONDS, 3 * self.heartbeat):
                self.reason = (f"the server's binlog stops at {pos[0]}:{pos[1]} ({now - since:.0f} s of "
                               f"heartbeats and no events), before the end of this batch: was the "
                               f"binlog reset (RESET MASTER) or is this another server?")
                src.stop()
                return


# ---------------------------------------------------------------------------------------------
# what the server says

def _status(conn) -> dict:
    """SHOW MASTER STATUS (SHOW BINARY LOG STATUS on MySQL 8.2+) as an offset with the GTID
    position that goes with it."""
    from ..replication import binlog_status

    if not conn.mariadb:
        row = binlog_status(conn)
        gtid = " ".join((row.get("Executed_Gtid_Set") or "").split()) or None
        return offset(row["File"], int(row["Position"]), gtid)
    for _ in range(3):  # the GTID position is kept only when no commit came in between
        before = _gtid_binlog_pos(conn)
        row = binlog_status(conn)
        if _gtid_binlog_pos(conn) == before:
            return offset(row["File"], int(row["Position"]), before)
    return offset(row["File"], int(row["Position"]))


def _gtid_binlog_pos(conn) -> Optional[str]:
    rows = conn.query_dicts("SELECT @@global.gtid_binlog_pos AS g")
    return (rows[0]["g"] or None) if rows else None


def _at(conn, file: Optional[str], pos: int, server: str) -> dict:
    """The offset (file or the first file, pos), checked against SHOW BINARY LOGS."""
    from ..errors import ReplicationError

    names = [r["Log_name"] for r in conn.query_dicts("SHOW BINARY LOGS")]
    if not names:
        raise ReplicationError("the server lists no binlog file (SHOW BINARY LOGS is empty): is "
                               "binary logging on?", server)
    if file is None:
        file = names[0]
    elif file not in names:
        raise ReplicationError(f"starting_offsets: {file} is not one of the server's binlog files "
                               f"({names[0]} to {names[-1]}; purged, or another server?)", server)
    if pos < 4:
        raise ReplicationError(f"starting_offsets: position {pos} is before the first event (4)", server)
    gtid = None
    if conn.mariadb:
        q = file.replace("\\", "\\\\").replace("'", "\\'")
        try:
            rows = conn.query_dicts(f"SELECT BINLOG_GTID_POS('{q}', {int(pos)}) AS g")
            gtid = (rows[0]["g"] or None) if rows else None
        except ReplicationError:
            gtid = None
    return offset(file, pos, gtid)


def _user_error(e: BaseException, server: str) -> RuntimeError:
    from ..errors import BinlogError, ReplicationError

    if isinstance(e, (ReplicationError, BinlogError)):
        return bad_input(e)
    if isinstance(e, ValueError):
        return bad_input(str(e).replace(ERROR_MARK, ""))
    if isinstance(e, OSError):
        return bad_input(f"{server}: {e.strerror or e}")
    if isinstance(e, RuntimeError) and ERROR_MARK in str(e):
        return e
    return bad_input(f"{server}: {type(e).__name__}: {' '.join(str(e).split())[:300]}")


__all__ = ["BinlogStreamReader", "StreamOptions", "stream_schema", "is_stream", "error_line",
           "parse_start", "offset"]
