"""A consistent read of a live server's tables, for the Debezium envelope's snapshot rows
(`snapshot.mode=initial`, binlog_grammar.output.debezium): what the connector's initial snapshot
reads, and the binlog position its streaming then starts from.

`read_snapshot(conn, databases, tables)` opens one transaction WITH CONSISTENT SNAPSHOT. On
MariaDB the position is that transaction's own (the status variables
`binlog_snapshot_file`, `binlog_snapshot_position`: no global lock is taken); elsewhere, as the connector does, FLUSH
TABLES WITH READ LOCK around the transaction's start and SHOW MASTER STATUS (RELOAD needed).
Then each base table of the captured databases (not the system ones), in database and table
name order, is read with a SELECT of its every column (INVISIBLE ones too, as the connector reads
them; its rows in the order the server returns them, the connector's), its values with the session's character set utf8mb4 and time zone UTC, as Python values
of the same kinds as the binlog's rows decode to (int, Decimal, float, date, datetime, timedelta,
str, bytes, frozenset for SET); each table's columns as `binlog.rows.Column`s built from
information_schema.COLUMNS, as a TABLE_MAP with full metadata gives them. A zero or invalid date
stays its text (the writers read it as null). GEOMETRY values are the server's bytes (SRID, then
WKB). With them the snapshot's schema: each table's SHOW CREATE TABLE, its database's default
character set and collation, the server's (the connector's snapshot writes its schema-change
records from them). Nothing is written to the server.
"""
from __future__ import annotations

import datetime as dt
import decimal
import re
from dataclasses import dataclass, field
from typing import Optional

from ..binlog.rows import Column
from .schema import SYSTEM, type_members

__all__ = ["read_snapshot", "Snapshot", "SnapshotTable", "columns_of", "value_of"]

# information_schema DATA_TYPE -> (the binlog's type code, its name)
TYPES = {
    "tinyint": (1, "TINY"), "smallint": (2, "SHORT"), "mediumint": (9, "INT24"),
    "int": (3, "LONG"), "bigint": (8, "LONGLONG"), "decimal": (246, "NEWDECIMAL"),
    "float": (4, "FLOAT"), "double": (5, "DOUBLE"), "bit": (16, "BIT"), "date": (10, "DATE"),
    "datetime": (18, "DATETIME2"), "timestamp": (17, "TIMESTAMP2"), "time": (19, "TIME2"),
    "year": (13, "YEAR"), "char": (254, "STRING"), "binary": (254, "STRING"),
    "varchar": (15, "VARCHAR"), "varbinary": (15, "VARCHAR"), "enum": (247, "ENUM"),
    "set": (248, "SET"),
}
_BLOBS = {"tinytext": 1, "tinyblob": 1, "text": 2, "blob": 2, "mediumtext": 3, "mediumblob": 3,
          "longtext": 4, "longblob": 4, "json": 4}
_GEOMETRIES = {"geometry": 0, "point": 1, "linestring": 2, "polygon": 3, "multipoint": 4,
               "multilinestring": 5, "multipolygon": 6, "geometrycollection": 7}


@dataclass
class SnapshotTable:
    db: str
    name: str
    columns: list  # [binlog.rows.Column]
    primary_key: list  # column names
    rows: list = field(default_factory=list)  # [{column name: value}]
    create: str = ""  # its SHOW CREATE TABLE (the snapshot's schema-change record)


@dataclass
class Snapshot:
    file: str  # the binlog file and position the snapshot is consistent with
    pos: int
    ts_ms: int  # the server's clock when the snapshot was taken
    mariadb: bool = False  # the server says it is MariaDB
    tables: list = field(default_factory=list)  # [SnapshotTable]
    # the server's character_set_server and collation_server, and each captured table's
    # database's default ones ({db: (charset, collation)}): the snapshot's schema changes
    server_charset: tuple = ()
    databases: dict = field(default_factory=dict)


def _text(v: Optional[bytes]) -> Optional[str]:
    return None if v is None else v.decode("utf-8", "replace")


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _lit(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def columns_of(rows: list) -> list:
    """Columns of one table from its information_schema.COLUMNS rows (as dicts of text)."""
    out = []
    for k, r in enumerate(rows):
        data_type = r["DATA_TYPE"].lower()
        column_type = r["COLUMN_TYPE"]
        code, name = TYPES.get(data_type, (252, "BLOB"))
        meta = None
        charset = r.get("CHARACTER_SET_NAME") or None
        geometry = None
        if data_type == "float" and "(" in column_type:  # FLOAT(M,D): a DOUBLE to the connector
            code, name = 5, "DOUBLE"
        if data_type in _BLOBS:
            code, name, meta = 252, "BLOB", _BLOBS[data_type]
        elif data_type in _GEOMETRIES:
            code, name, geometry = 255, "GEOMETRY", _GEOMETRIES[data_type]
        elif data_type == "decimal":
            meta = {"precision": int(r["NUMERIC_PRECISION"] or 10),
                    "scale": int(r["NUMERIC_SCALE"] or 0)}
        elif data_type == "bit":
            n = int(r["NUMERIC_PRECISION"] or 1)
            meta = {"bits": n % 8, "bytes": n // 8}
        if data_type in ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"):
            charset = "binary"
        fsp = int(r.get("DATETIME_PRECISION") or 0) if data_type in (
            "datetime", "timestamp", "time") else 0
        members = type_members(column_type) if data_type in ("enum", "set") else None
        out.append(Column(
            index=k, name=r["COLUMN_NAME"], type=254 if code in (247, 248) else code,
            type_name=name, real_type=code, meta=meta, unsigned="unsigned" in column_type.lower()
            or data_type == "year", charset=charset, collation=None,
            nullable=r["IS_NULLABLE"] == "YES", json_index=None,
            enum_values=members if data_type == "enum" else None,
            set_values=members if data_type == "set" else None,
            in_primary_key=r["COLUMN_KEY"] == "PRI", geometry_type=geometry, fsp=fsp,
            snapshot=True))
    return out


_TIME = re.compile(r"(-?)(\d+):(\d\d):(\d\d)(?:\.(\d{1,6}))?$")
_UTC = dt.timezone.utc


def _datetime(text: str):
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:  # a zero or invalid date: kept as text, as the binlog reader keeps it
        return text


def value_of(col, raw: Optional[bytes]):
    """One value of the text protocol as the binlog's rows decode it."""
    if raw is None:
        return None
    name = col.type_name
    if name in ("TINY", "SHORT", "INT24", "LONG", "LONGLONG", "YEAR"):
        return int(raw)
    if name == "NEWDECIMAL":
        return decimal.Decimal(raw.decode("ascii"))
    if name in ("FLOAT", "DOUBLE"):
        return float(raw)
    if name == "BIT":
        return int.from_bytes(raw, "big")
    if name == "DATE":
        text = raw.decode("ascii")
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            return text
    if name in ("DATETIME2", "TIMESTAMP2"):
        v = _datetime(raw.decode("ascii"))
        return v.replace(tzinfo=_UTC) if name == "TIMESTAMP2" and isinstance(v, dt.datetime) \
            else v
    if name == "TIME2":
        m = _TIME.match(raw.decode("ascii"))
        if m is None:
            return raw.decode("ascii")
        us = int((m.group(5) or "0").ljust(6, "0"))
        v = dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3)),
                         seconds=int(m.group(4)), microseconds=us)
        return -v if m.group(1) else v
    if name == "SET":
        text = raw.decode("utf-8", "surrogateescape")
        return frozenset(text.split(",")) if text else frozenset()
    if name == "GEOMETRY" or col.charset == "binary":
        return bytes(raw)
    return raw.decode("utf-8", "surrogateescape")


def _position(conn) -> tuple:
    """(file, pos) of the open consistent snapshot."""
    found = {r.get("Variable_name", "").lower(): r.get("Value")
             for r in conn.query_dicts("SHOW STATUS LIKE 'binlog\\_snapshot\\_%'")}
    if found.get("binlog_snapshot_file"):
        return found["binlog_snapshot_file"], int(found["binlog_snapshot_position"])
    return None


def read_snapshot(conn, databases=None, tables=None) -> Snapshot:
    """The captured tables' rows at one binlog position. databases / tables: regular
    expressions (Debezium's database.include.list / table.include.list: lists, `db.table` for
    tables); None takes every database but the system ones."""
    dbs = [re.compile(p.strip()) for p in (databases or []) if p.strip()]
    tbs = [re.compile(p.strip()) for p in (tables or []) if p.strip()]
    for sql in ("SET NAMES utf8mb4", "SET SESSION time_zone = '+00:00'",
                "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ"):
        conn.query(sql)
    try:
        conn.query("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        at = _position(conn)
        if at is None:  # not MariaDB: the connector's global read lock
            conn.query("ROLLBACK")
            conn.query("FLUSH TABLES WITH READ LOCK")
            try:
                conn.query("START TRANSACTION WITH CONSISTENT SNAPSHOT")
                status = conn.query_dicts("SHOW MASTER STATUS")
            finally:
                conn.query("UNLOCK TABLES")
            if not status:
                raise ValueError("the server writes no binlog (SHOW MASTER STATUS is empty)")
            at = (status[0]["File"], int(status[0]["Position"]))
        now, version = conn.query("SELECT UNIX_TIMESTAMP(), VERSION()")[1][0]
        snap = Snapshot(at[0], at[1], int(decimal.Decimal(now.decode()) * 1000),
                        b"mariadb" in (version or b"").lower())
        snap.server_charset = tuple(v.decode() for v in conn.query(
            "SELECT @@character_set_server, @@collation_server")[1][0])
        found = conn.query_dicts(
            "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE "
            "TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA NOT IN ("
            + ", ".join(_lit(s) for s in SYSTEM) + ") ORDER BY TABLE_SCHEMA, TABLE_NAME")
        for t in found:
            db, name = t["TABLE_SCHEMA"], t["TABLE_NAME"]
            if dbs and not any(p.fullmatch(db) for p in dbs):
                continue
            if tbs and not any(p.fullmatch(f"{db}.{name}") for p in tbs):
                continue
            info = conn.query_dicts(
                "SELECT * FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = " + _lit(db)
                + " AND TABLE_NAME = " + _lit(name) + " ORDER BY ORDINAL_POSITION")
            cols = columns_of(info)
            keys = conn.query_dicts(
                "SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = "
                + _lit(db) + " AND TABLE_NAME = " + _lit(name)
                + " AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX")
            pk = [k["COLUMN_NAME"] for k in keys]
            # every column named: SELECT * leaves INVISIBLE columns out, the connector does not
            listed = ", ".join(_q(c.name) for c in cols) or "*"
            _, rows = conn.query(f"SELECT {listed} FROM {_q(db)}.{_q(name)}")
            values = [{c.name: value_of(c, v) for c, v in zip(cols, row)} for row in rows]
            create = conn.query(f"SHOW CREATE TABLE {_q(db)}.{_q(name)}")[1][0][1]
            snap.tables.append(SnapshotTable(db, name, cols, pk, values,
                                             create.decode("utf-8", "surrogateescape")))
            if db not in snap.databases:
                found_db = conn.query_dicts(
                    "SELECT DEFAULT_CHARACTER_SET_NAME AS c, DEFAULT_COLLATION_NAME AS o FROM "
                    "information_schema.SCHEMATA WHERE SCHEMA_NAME = " + _lit(db))
                snap.databases[db] = (found_db[0]["c"], found_db[0]["o"])
        return snap
    finally:
        conn.query("COMMIT")
