"""python-mysql-replication's event classes (`pymysqlreplication.event`), made from this
package's parsed events (reader.Event) instead of from packets: the same class names,
attributes and dump() lines as the library's, for the events a MariaDB or MySQL binlog holds.

Every event has `packet` (with `log_pos`, `timestamp`, `server_id`, `event_type`, `flags`,
`event_size`, `read_bytes`), `event_type` (the type code), `timestamp`, `event_size` (its bytes
after the header, checksum left out), `log_pos`, `server_id`, `flags`; and `file`/`offset`
(where it is), which the library does not have.
"""
from __future__ import annotations

import datetime
import json


class Packet:
    """What a script reads from `event.packet`: the event header's fields."""

    __slots__ = ("timestamp", "event_type", "server_id", "event_size", "log_pos", "flags",
                 "read_bytes")

    def __init__(self, ev, body: int, read: int):
        h = ev.header
        self.timestamp = int(h.timestamp)
        self.event_type = int(h.type_code)
        self.server_id = int(h.server_id)
        self.event_size = int(h.event_length)
        self.log_pos = int(h.log_pos)
        self.flags = int(h.flags)
        self.read_bytes = read


class BinLogEvent:
    """The base of every event class; `from_event(ev, ctx)` makes one from a reader.Event."""

    def __init__(self, ev, ctx):
        body = len(ev.raw) - ctx.header_len - ctx.crc_len(ev)
        self.packet = Packet(ev, body, body)
        self.event_type = self.packet.event_type
        self.timestamp = self.packet.timestamp
        self.event_size = body
        self.log_pos = self.packet.log_pos
        self.server_id = self.packet.server_id
        self.flags = self.packet.flags
        self.file, self.offset = ev.file, ev.offset
        self.mysql_version = ctx.mysql_version
        self.dbms = ctx.dbms
        self.complete = True
        self._fill(ev.data, ev, ctx)
        self.packet.read_bytes = self._read(body)

    def _fill(self, d, ev, ctx):
        pass

    def _read(self, body: int) -> int:
        """The bytes after the header the library's parser reads (dump()'s `Read bytes`)."""
        return body

    @property
    def formatted_timestamp(self) -> str:
        """The event's timestamp as ISO text in UTC, as the library shows it in dump()."""
        return datetime.datetime.fromtimestamp(self.timestamp, datetime.timezone.utc) \
            .replace(tzinfo=None).isoformat()

    def dump(self):
        """Print the event as python-mysql-replication's dump() does."""
        print(f"=== {self.__class__.__name__} ===")
        print(f"Date: {self.formatted_timestamp}")
        print(f"Log position: {self.packet.log_pos}")
        print(f"Event size: {self.event_size}")
        print(f"Read bytes: {self.packet.read_bytes}")
        self._dump()
        print()

    def to_dict(self) -> dict:
        """The header facts dump() prints: timestamp, log_pos, event_size, read_bytes."""
        return {"timestamp": self.formatted_timestamp, "log_pos": self.packet.log_pos,
                "event_size": self.event_size, "read_bytes": self.packet.read_bytes}

    def to_json(self) -> str:
        """to_dict() as JSON text."""
        return json.dumps(self.to_dict())

    def _dump(self):
        pass


def _uuid(raw: bytes) -> str:
    h = bytes(raw).hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class GtidEvent(BinLogEvent):
    """MySQL's GTID: `gtid` ('uuid:gno'), sid, gno, commit_flag, last_committed,
    sequence_number."""

    def _fill(self, d, ev, ctx):
        self.commit_flag = int(d.get("gtid_flags") or 0) & 1 == 1
        self.sid = bytes(d.get("sid") or d.get("uuid") or b"\0" * 16)
        self.gno = int(d.get("gno") or 0)
        self.lt_type = int(d.get("lt_type") or 0)
        if d.get("last_committed") is not None:
            self.last_committed = int(d["last_committed"])
            self.sequence_number = int(d["sequence_number"])

    @property
    def gtid(self):
        """The GTID as MySQL writes it: 'uuid:gno'."""
        return f"{_uuid(self.sid)}:{self.gno}"

    def _dump(self):
        print(f"Commit: {self.commit_flag}")
        print(f"GTID_NEXT: {self.gtid}")
        if hasattr(self, "last_committed"):
            print(f"last_committed: {self.last_committed}")
            print(f"sequence_number: {self.sequence_number}")

    def __repr__(self):
        return f'<GtidEvent "{self.gtid}">'


class PreviousGtidsEvent(BinLogEvent):
    """MySQL's PREVIOUS_GTIDS_LOG_EVENT."""

    def _fill(self, d, ev, ctx):
        self._previous_gtids = str(d.get("gtid_set", ""))

    def _dump(self):
        print(f"previous_gtids: {self._previous_gtids}")


class MariadbGtidEvent(BinLogEvent):
    """MariaDB's GTID: `gtid` ('domain-server-seq'), domain_id, server_id, gtid_seq_no, flags."""

    def _fill(self, d, ev, ctx):
        self.gtid_seq_no = int(d.seq_no)
        self.domain_id = int(d.domain_id)
        self.flags = int(d.flags2)
        self.gtid = f"{self.domain_id}-{self.server_id}-{self.gtid_seq_no}"

    def _read(self, body):
        return 13  # sequence number, domain, flags

    def _dump(self):
        print(f"Flags: {self.flags}")
        print(f"GTID: {self.gtid}")


class MariadbBinLogCheckPointEvent(BinLogEvent):
    """MariaDB's binlog checkpoint: `filename`, the oldest binlog file crash recovery needs."""

    def _fill(self, d, ev, ctx):
        self.filename = str(d.binlog_file_name)

    def _dump(self):
        print(f"Filename: {self.filename}")


class MariadbAnnotateRowsEvent(BinLogEvent):
    """The statement of the rows events that follow, as bytes (`sql_statement`)."""

    def _fill(self, d, ev, ctx):
        q = d.query
        self.sql_statement = bytes(getattr(q, "logged", None) or str(q).encode("utf-8", "surrogateescape"))

    def _dump(self):
        print(f"SQL statement : {self.sql_statement}")


class MariadbGtidObject:
    """One GTID of a MariadbGtidListEvent."""

    def __init__(self, domain_id, server_id, seq_no):
        self.domain_id, self.server_id, self.gtid_seq_no = domain_id, server_id, seq_no
        self.gtid = f"{domain_id}-{server_id}-{seq_no}"


class MariadbGtidListEvent(BinLogEvent):
    """MariaDB's GTID state at the start of a binlog file: `gtid_list` (MariadbGtidObjects:
    domain_id, server_id, gtid_seq_no, gtid) and `gtid_length`."""

    def _fill(self, d, ev, ctx):
        self.gtid_list = [MariadbGtidObject(int(g.domain_id), int(g.server_id), int(g.seq_no))
                          for g in (d.gtids or [])]
        self.gtid_length = len(self.gtid_list)

    def _read(self, body):
        return 4 + 16 * self.gtid_length


class MariadbStartEncryptionEvent(BinLogEvent):
    """MariaDB's start of an encrypted binlog: `schema`, `key_version`, `nonce` (the events after
    it come decrypted from the server)."""

    def _fill(self, d, ev, ctx):
        self.schema = int(d.get("scheme") or 0)
        self.key_version = int(d.get("key_version") or 0)
        self.nonce = bytes(d.get("nonce") or b"")


class RotateEvent(BinLogEvent):
    """`next_binlog` and the `position` in it."""

    def _fill(self, d, ev, ctx):
        self.position = int(d.position) if d.get("position") is not None else 4
        self.next_binlog = str(d.new_log_ident)

    def dump(self):
        """Print the rotation as the library's dump() does (no date or sizes)."""
        print(f"=== {self.__class__.__name__} ===")
        print(f"Position: {self.position}")
        print(f"Next binlog file: {self.next_binlog}")
        print()


class XAPrepareEvent(BinLogEvent):
    """An XA PREPARE (or XA COMMIT ... ONE PHASE): `one_phase`, `xid_format_id`, `xid_gtrid`,
    `xid_bqual` (bytes) and `xid`."""

    def _fill(self, d, ev, ctx):
        self.one_phase = bool(d.get("one_phase"))
        self.xid_format_id = int(d.get("format_id") or 0)
        self.xid_gtrid = bytes(d.get("gtrid") or b"")
        self.xid_bqual = bytes(d.get("bqual") or b"")

    @property
    def xid(self):
        """gtrid and bqual as text, one after the other, as the library gives the XA id."""
        return self.xid_gtrid.decode() + self.xid_bqual.decode()

    def _dump(self):
        print(f"One phase: {self.one_phase}")
        print(f"XID formatID: {self.xid_format_id}")
        print(f"XID: {self.xid}")


class FormatDescriptionEvent(BinLogEvent):
    """The first event of a binlog file: `binlog_version` (a 1-tuple), `mysql_version_str`,
    `mysql_version`, `created`, `common_header_len`, `post_header_len`, `checksum_algorithm`,
    `server_version_split`, `number_of_event_types`."""

    def _fill(self, d, ev, ctx):
        self.binlog_version = (int(d.binlog_version),)
        self.mysql_version_str = str(d.server_version)
        self.mysql_version = version_tuple(self.mysql_version_str)
        self.created = int(d.create_timestamp)
        self.common_header_len = int(d.common_header_len)
        self.post_header_len = tuple(int(x) for x in d.post_header_lengths)
        alg = d.get("checksum_alg")
        self.checksum_algorithm = int(alg) if alg is not None else None
        self.server_version_split = self.mysql_version[:3]
        self.number_of_event_types = len(self.post_header_len)

    def _dump(self):
        print(f"Binlog version: {self.binlog_version}")
        print(f"mysql version: {self.mysql_version_str}")
        print(f"Created: {self.created}")
        print(f"Common header length: {self.common_header_len}")
        print(f"Post header length: {self.post_header_len}")
        print(f"Server version split: {self.server_version_split}")
        print(f"Number of event types: {self.number_of_event_types}")


def version_tuple(text: str) -> tuple:
    head = text.split("-")[0]
    try:
        return tuple(int(x) for x in head.split("."))
    except ValueError:
        return (0, 0, 0)


class StopEvent(BinLogEvent):
    """The server stopped; the binlog file ends here."""


class XidEvent(BinLogEvent):
    """A transaction's COMMIT: `xid`."""

    def _fill(self, d, ev, ctx):
        self.xid = int(d.xid)

    def _dump(self):
        print(f"Transaction ID: {self.xid}")


class HeartbeatLogEvent(BinLogEvent):
    """A heartbeat: the server says it is alive while a blocking stream with slave_heartbeat
    waits (`ident`: the binlog file; log_pos: its end, timestamp 0)."""

    def _fill(self, d, ev, ctx):
        self.ident = str(d.get("log_ident") or "")

    def _dump(self):
        print(f"Current binlog: {self.ident}")


class QueryEvent(BinLogEvent):
    """A statement: `query` (str), `schema` (bytes, as the library gives it), slave_proxy_id,
    execution_time, error_code."""

    def _fill(self, d, ev, ctx):
        self.slave_proxy_id = int(d.thread_id)
        self.execution_time = int(d.exec_time)
        self.error_code = int(d.error_code)
        self.status_vars_length = int(d.status_vars_len)
        db = d.db
        self.schema = bytes(getattr(db, "logged", None) or str(db).encode("utf-8", "surrogateescape"))
        self.schema_length = len(self.schema)
        q = d.query
        raw = getattr(q, "logged", None) or str(q).encode("utf-8", "surrogateescape")
        self.query = bytes(raw).decode("utf-8", errors="backslashreplace")

    def _dump(self):
        print(f"Schema: {self.schema}")
        print(f"Execution time: {self.execution_time}")
        print(f"Query: {self.query}")


class BeginLoadQueryEvent(BinLogEvent):
    """A block of a LOAD DATA file: `file_id`, `block_data` (bytes)."""

    def _fill(self, d, ev, ctx):
        self.file_id = int(d.get("file_id") or 0)
        self.block_data = bytes(d.get("block_data") or b"")


class ExecuteLoadQueryEvent(QueryEvent):
    """The LOAD DATA statement that loads the file of the BeginLoadQueryEvents before it, with
    QueryEvent's attributes."""


class IntvarEvent(BinLogEvent):
    """The next statement's LAST_INSERT_ID() (`type` 1) or AUTO_INCREMENT value (`type` 2): `value`."""

    def _fill(self, d, ev, ctx):
        self.type = int(d.get("type") or 0)
        self.value = int(d.get("value") or 0)

    def _dump(self):
        print(f"type: {self.type}")
        print(f"Value: {self.value}")


class RandEvent(BinLogEvent):
    """The RAND() seeds of the next statement: `seed1`, `seed2`."""

    def _fill(self, d, ev, ctx):
        self.seed1 = int(d.get("seed1") or 0)
        self.seed2 = int(d.get("seed2") or 0)

    def _dump(self):
        print(f"seed1: {self.seed1}")
        print(f"seed2: {self.seed2}")


class UserVarEvent(BinLogEvent):
    """A user variable the next statement reads: `name`, `is_null`."""

    def _fill(self, d, ev, ctx):
        self.name = str(d.get("name") or "")
        self.is_null = int(d.get("is_null") or 0)


class RowsQueryLogEvent(BinLogEvent):
    """MySQL's statement of the rows events that follow (binlog_rows_query_log_events): `query`."""

    def _fill(self, d, ev, ctx):
        self.query = str(d.get("query") or "")

    def _dump(self):
        print(f"Query: {self.query}")


class NotImplementedEvent(BinLogEvent):
    """An event this API has no class for (left out unless filter_non_implemented_events=False)."""
