"""The schema-change records of the Debezium envelope's snapshot (`snapshot.mode=initial` with
`include.schema.changes`): what the connector's initial snapshot writes to its schema-change
topic before the snapshot's rows, all at the snapshot's binlog position, as seen with 3.6.3:

1. `SET character_set_server=CS, collation_server=COLL` (the server's; `databaseName` "");
2. `DROP TABLE IF EXISTS `db`.`t`` for each captured table, in database and table order;
3. for each database of a captured table, in order: `DROP DATABASE IF EXISTS `db``,
   `CREATE DATABASE `db` CHARSET CS COLLATE COLL` (its defaults), `USE `db``, then each of its
   captured tables' SHOW CREATE TABLE text, with the table as the connector's DDL parser reads it
   (`debezium_schema_change.SchemaModel`, which follows these statements as the connector's
   schema does).

`source.snapshot` is "true", or "last" on the last of them when the snapshot has no row (else
the last row is "last"); `source.table` is the table of a DROP TABLE or CREATE TABLE, else null;
`server_id` 0, `row` 0, no GTID. The tables are those the snapshot read (database.include.list,
table.include.list), as the connector's with `schema.history.internal.store.only.captured.
tables.ddl=true`.

And what the snapshot's rows read otherwise than the binlog's (`jdbc_read`, `geometries`,
`SnapshotChange`: what the schemas of a snapshot row ask of a row change).
"""
from __future__ import annotations

from typing import Iterator

from ..runtime.values import Geometry
from .debezium_values import zoned_text
from .quoting import ident as _q  # the one quoting rule: backquotes, a backquote doubled


def statements(snap) -> list:
    """[(databaseName, source table or None, ddl, default db for the parser)] in order."""
    cs, coll = (tuple(snap.server_charset) + ("", ""))[:2]
    out = [("", None, f"SET character_set_server={cs}, collation_server={coll}", None)]
    out += [(t.db, t.name, f"DROP TABLE IF EXISTS {_q(t.db)}.{_q(t.name)}", t.db)
            for t in snap.tables]
    for db in dict.fromkeys(t.db for t in snap.tables):
        dcs, dcoll = (tuple(snap.databases.get(db) or ()) + (cs, coll))[:2]
        out += [(db, None, f"DROP DATABASE IF EXISTS {_q(db)}", db),
                (db, None, f"CREATE DATABASE {_q(db)} CHARSET {dcs} COLLATE {dcoll}", db),
                (db, None, f"USE {_q(db)}", db)]
        out += [(db, t.name, t.create, db) for t in snap.tables if t.db == db and t.create]
    return out


def schema_change_records(writer, snap, connector: str) -> Iterator[dict]:
    """The snapshot's schema-change records, as `writer` (a DebeziumWriter) writes records."""
    ts = snap.ts_ms
    todo = statements(snap)
    no_rows = not any(t.rows for t in snap.tables)
    server_cs = (tuple(snap.server_charset) or (None,))[0]
    for n, (db, table, ddl, default_db) in enumerate(todo):
        found = writer.model.see(ddl, default_db, server_cs) if default_db is not None else []
        changes = found[0][3] if found else []
        source = {"version": writer.VERSION, "connector": connector, "name": writer.prefix,
                  "ts_ms": ts, "snapshot": "last" if no_rows and n == len(todo) - 1 else "true",
                  "db": db, "sequence": None, "ts_us": ts * 1000, "ts_ns": ts * 1_000_000,
                  "table": table, "server_id": 0, "gtid": None, "file": snap.file,
                  "pos": snap.pos, "row": 0, "thread": None, "query": None}
        value = {"source": source, "ts_ms": ts, "databaseName": db, "schemaName": None,
                 "ddl": ddl, "tableChanges": changes}
        wrapped = writer._wrap(value, ("schema_change_value", connector))
        if not writer.kafka:
            yield wrapped
        else:
            yield {"topic": writer.prefix,
                   "key": writer._wrap({"databaseName": db}, ("schema_change_key", None)),
                   "value": wrapped}


class SnapshotChange:
    """What the schemas of a snapshot row ask of a row change: its table and columns."""

    def __init__(self, t, file):
        self.db, self.table, self.columns, self.file = t.db, t.name, t.columns, file
        self.primary_key = t.primary_key


_ZERO_READ = {"DATE": 0, "DATETIME2": 0, "TIMESTAMP2": "1970-01-01T00:00:00Z"}


def _year_zero(col, text: str, writers: dict):
    """A DATE/DATETIME of year 0000 with a valid month and day as the snapshot reads it: JDBC's
    year 1 (DATETIME) or 0 (DATE), which the two-digit rule makes 2001 / 2000."""
    import datetime as dt

    try:
        if col.get("type_name") == "DATE":
            v = dt.date.fromisoformat("2000" + text[4:])
        else:
            v = dt.datetime.fromisoformat("2001" + text[4:])
    except ValueError:
        return None
    return writers.get(col.name, lambda x: None)(v)


def jdbc_read(col, v, after: dict, adjust: bool = True, writers=None):
    """What the connector's snapshot reads (through JDBC) differently from its binlog reader:
    a TIMESTAMP's fraction without its trailing zeros (none when it is zero), a zero or invalid date of a
    NOT NULL column as the epoch (null in a nullable one), YEAR 0000 as 2000 (enable.time.adjuster;
    the binlog reader's 1900)."""
    kind = col.get("type_name")
    if kind == "TIMESTAMP2" and hasattr(v, "microsecond") and \
            isinstance(after.get(col.name), str):  # the fraction's trailing zeros left out
        text = zoned_text(v, 6)[:-1].rstrip("0").rstrip(".")
        after[col.name] = text + "Z"
    elif isinstance(v, str) and kind in ("DATE", "DATETIME2") and v.startswith("0000-") and \
            adjust and _year_zero(col, v, writers or {}) is not None:
        after[col.name] = _year_zero(col, v, writers or {})
    elif isinstance(v, str) and kind in _ZERO_READ and not col.get("nullable"):
        after[col.name] = _ZERO_READ[kind]
    elif kind == "YEAR" and v == 0 and adjust:  # JDBC's year 0, then the two-digit rule
        after[col.name] = 2000


def geometries(row: dict, columns) -> dict:
    """A snapshot row's GEOMETRY values (the server's bytes: SRID, WKB) as the binlog's."""
    for c in columns:
        v = row.get(c.name)
        if c.get("type_name") == "GEOMETRY" and isinstance(v, bytes) and len(v) >= 4:
            row = dict(row)
            row[c.name] = Geometry(int.from_bytes(v[:4], "little"), v[4:])
    return row
