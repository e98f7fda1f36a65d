"""The `debezium` envelope's schema-change records (include.schema.changes) against the real
connector's: the records of the schema-change topic (`topic.prefix`) that the connector writes
while streaming (`source.snapshot` "false"; its snapshot's own records, of the marker table, are
left out), for the databases of a workload, compared key and value field by field, in order.

Fields that cannot match: the envelope's `ts_ms` (the connector's clock; `source.ts_ms` is the
event's time and is compared) and `source.ts_us`/`ts_ns` of the envelope only.

`DDL_WORKLOAD` is a fixed workload of the statements the connector writes records for (and some
it writes none for): every column type with its attributes and DEFAULTs, table keys, CREATE ...
LIKE, ... SELECT, IF [NOT] EXISTS, ALTER TABLE's clauses, RENAME of several tables, DROP of
several tables (one that does not exist), CREATE/ALTER/DROP DATABASE, TRUNCATE, CREATE INDEX,
views.
"""
from __future__ import annotations

import json

from .debezium import TOPIC_PREFIX
from .debezium_diff import case_sql, dump_records

CLOCK = ("ts_ms", "ts_us", "ts_ns")


def ddl_workload(db: str) -> list:
    """The fixed DDL workload, in a database `db` it creates (and drops at its end)."""
    return [
        f"CREATE DATABASE `{db}` CHARACTER SET utf8mb4",
        f"USE `{db}`",
        "CREATE TABLE a (ti TINYINT, tiu TINYINT(3) UNSIGNED ZEROFILL DEFAULT 5,"
        " si SMALLINT NOT NULL DEFAULT -3, mi MEDIUMINT, i INTEGER(9) DEFAULT NULL,"
        " bi BIGINT UNSIGNED DEFAULT 9, r REAL, dp DOUBLE PRECISION, fl FLOAT(7,3), de DECIMAL,"
        " nu NUMERIC(5), dc DEC(4,1) DEFAULT -2.5, fx FIXED(6,2), bo BOOLEAN DEFAULT TRUE,"
        " b1 BIT, b8 BIT(8) DEFAULT b'101', ch CHAR, nch NATIONAL CHAR(4), nv NVARCHAR(5),"
        " vc VARCHAR(10) CHARACTER SET utf8mb3 COLLATE utf8mb3_bin DEFAULT 'it''s',"
        " bn BINARY(4) DEFAULT X'0102', tt TINYTEXT, mt MEDIUMTEXT, lt LONGTEXT CHARSET ascii,"
        " tb TINYBLOB, mb MEDIUMBLOB, lb LONGBLOB, dt DATETIME DEFAULT '2020-01-02 03:04:05',"
        " dtn DATETIME(3) DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),"
        " ts TIMESTAMP NULL DEFAULT NULL, ts2 TIMESTAMP(6) DEFAULT CURRENT_TIMESTAMP(6),"
        " d DATE DEFAULT '2024-02-29', t TIME(2) DEFAULT '12:00:00', y YEAR(4) DEFAULT 2024,"
        " g GEOMETRY, p POINT, ls LINESTRING, e ENUM('x','yy','zzz') DEFAULT 'yy',"
        " st SET('a','bb','c') CHARACTER SET latin1, j JSON, v INT AS (si + 1) VIRTUAL,"
        " PRIMARY KEY (si, ti)) ENGINE=InnoDB COLLATE=latin1_german1_ci COMMENT='c'",
        # a three-row event: the next record's source.row is 2, as the connector leaves it
        "INSERT INTO a (si, ti) VALUES (1, 1), (2, 2), (3, 3)",
        "CREATE TABLE b LIKE a",
        "CREATE TABLE `c``q` (x INT UNIQUE NOT NULL, `y z` INT, k INT AUTO_INCREMENT,"
        " h CHAR(3) DEFAULT _utf8mb4 X'273333',"
        " UNIQUE KEY uk (k)) CHARSET=utf8mb4",
        "ALTER TABLE `c``q` ADD PRIMARY KEY (yy), MODIFY x BIGINT AFTER k,"
        " CHANGE `y z` yy INT NOT NULL DEFAULT 1 FIRST, ADD COLUMN n VARCHAR(3) NOT NULL,"
        " ADD (m1 INT, m2 CHAR(2) CHARACTER SET ascii), ALTER COLUMN k SET DEFAULT 4",
        "ALTER TABLE `c``q` DROP COLUMN m1, RENAME COLUMN m2 TO m3, ALTER COLUMN k DROP DEFAULT",
        "ALTER TABLE `c``q` RENAME TO cc",
        "RENAME TABLE cc TO c3, b TO b3",
        "DROP TABLE IF EXISTS c3, b3, nothere",
        "CREATE TABLE IF NOT EXISTS a (z INT)",
        "CREATE TABLE sel AS SELECT 1 AS one, 'x' AS two",
        # lengths of 0: 10 to the connector's parser, but a temporal type's fraction digits
        "CREATE TABLE zl (a BINARY(0), b CHAR(0), c VARCHAR(0), d VARBINARY(0), g DECIMAL(0,0),"
        " h FLOAT(0), k BIT(0), i TIME(0), j DATETIME(0), l TIMESTAMP(0) NULL)",
        "ALTER TABLE a DROP PRIMARY KEY, ALTER COLUMN e SET DEFAULT 'x'",
        f"CREATE TABLE `{db}`.q (id INT PRIMARY KEY)",
        "TRUNCATE TABLE q",
        "CREATE INDEX ix ON q (id)",
        "DROP TABLE q",
        "CREATE VIEW w AS SELECT 1 AS one",
        f"ALTER DATABASE `{db}` CHARACTER SET latin1",
        "CREATE TABLE after_alter (s VARCHAR(3), u ENUM('a') NOT NULL)",
        f"DROP DATABASE `{db}`",
    ]


def schema_change_records(records, dbs, prefix: str = TOPIC_PREFIX) -> list:
    """The streamed schema-change records of the databases `dbs`, as (key, value) in order."""
    out = []
    for rec in records:
        if rec.get("destination") != prefix or not isinstance(rec.get("value"), dict):
            continue
        key, value = rec["key"], rec["value"]
        payload = value.get("payload", value)  # {"schema", "payload"} under schemas.enable
        if payload.get("source", {}).get("snapshot") != "false":
            continue
        if payload.get("databaseName") in dbs:
            out.append((key, value))
    return out


def _diff(path, a, b, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            _diff(f"{path}.{k}" if path else str(k), a.get(k, "<absent>"), b.get(k, "<absent>"),
                  out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            _diff(f"{path}[{i}]", x, y, out)
    elif a != b or type(a) is not type(b):
        out.append((path, a, b))


def compare(theirs: list, ours: list, dbs, prefix: str = TOPIC_PREFIX) -> tuple:
    """(records compared, [problems]) of the connector's records against the envelope's."""
    a, b = schema_change_records(theirs, dbs, prefix), schema_change_records(ours, dbs, prefix)
    problems = []
    if len(a) != len(b):
        problems.append(f"{len(a)} schema-change records from the connector, {len(b)} from dump:"
                        f" connector {[v.get('payload', v)['ddl'][:60] for _, v in a]},"
                        f" dump {[v.get('payload', v)['ddl'][:60] for _, v in b]}")
    for i, ((ka, va), (kb, vb)) in enumerate(zip(a, b)):
        diffs = []
        _diff("key", ka, kb, diffs)
        _diff("value", va, vb, diffs)
        for path, x, y in diffs:
            last = path.rsplit(".", 1)[-1]
            if last in CLOCK and not path.startswith(("value.source.ts_ms",
                                                      "value.payload.source.ts_ms")):
                continue
            ddl = va.get("payload", va).get("ddl", "")
            problems.append(f"record {i} ({ddl[:50]!r}) {path}: connector {json.dumps(x)[:160]},"
                            f" dump {json.dumps(y)[:160]}")
    return min(len(a), len(b)), problems


def check(server, statements: list, dbs: list, options=None, schemas: bool = False,
          base: str | None = None, cli=None):
    """Run `statements` under the connector (capturing `base` and the databases `dbs`), dump
    the binlogs with kafka.records, compare their schema-change records: (count, problems)."""
    return check_many(server, statements, dbs, [(options, schemas)], base, cli)[0]


def check_many(server, statements: list, dbs: list, option_sets: list,
               base: str | None = None, cli=None) -> list:
    """`check` of one run of `statements` under every option set [(options, schemas), ...]
    (one engine each, in one JVM): [(count, problems), ...]."""
    server.count += 1
    base = base or f"dbz{server.count}"
    caps = server.capture_many(statements + [f"USE `{base}`"], option_sets, db=base,
                               force=True, include=f"{base}|" + "|".join(dbs))
    out = []
    for cap, (options, schemas) in zip(caps, option_sets):
        ours = dump_records(cap.binlogs, {**(options or {}), "connector": "mysql"}, schemas, cli,
                            cap.prefix)
        out.append(compare(cap.records, ours, set(dbs), cap.prefix))
    return out


def case_statements(server, cases: list) -> tuple:
    """Drawn cases (debezium_diff.connector_cases: a CREATE TABLE and its workload each, in
    databases of their own) as (statements, databases, base database)."""
    server.count += 1
    base = f"dbz{server.count}"
    dbs = [f"{base}_{i}" for i in range(len(cases))]
    return [s for case, db in zip(cases, dbs) for s in case_sql(case, db)], dbs, base


def check_cases(server, cases: list, options=None, schemas: bool = False):
    """Drawn cases through `check`."""
    sql, dbs, base = case_statements(server, cases)
    return check(server, sql, dbs, options, schemas, base=base)
