"""The `debezium` envelope's snapshot rows (snapshot.mode=initial) against the real connector's
initial snapshot of the same tables: the tables are made and filled in a database of their own
before the connector starts (`DebeziumServer.capture(before=...)`, snapshot.mode=initial), no
statement runs while it streams but the marker row, then `dump --format jsonl --envelope
debezium --debezium-option snapshot.mode=initial_only` reads the same tables from the same
server (the connector's login) and the `op: "r"` records are compared, key and value, field by
field, in order; and the schema-change records the connector writes for its snapshot (SET
character_set_server, DROP TABLE, DROP/CREATE DATABASE, USE, each table's SHOW CREATE TABLE:
output/debezium_snapshot.py), key and value, field for field.

Fields that cannot match: the envelope's and the source's `ts_ms`/`ts_us`/`ts_ns` (the time each
snapshot was taken), `source.pos` and `source.file` (the binlog position of each snapshot: the
connector's is before the marker row, this one's after it).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

from .debezium import MARKER, PASSWORD, TOPIC_PREFIX, USER
from .debezium_diff import bytes_of, case_sql, column_types, diff_paths, exact32, same_float32
from .debezium_diff import connector_wrong as change_mistake

SKIP = ("ts_ms", "ts_us", "ts_ns", "source.pos", "source.file")
BIT_KEY = "a BIT primary-key column's snapshot value written big-endian"
BINARY_0 = "an empty BINARY(0) value written as zero bytes"


def connector_wrong(sql_type: str, in_key: bool, theirs, ours, options) -> str | None:
    """The connector's known mistake in its snapshot that explains `theirs`, or None.
    - A BIT(n>1) column of the primary key: its snapshot (JDBC) value is written big-endian
      (BIT(18) 150001 = 0x0249F1 as 02 49 F1), where the same column outside the key, its
      binlog changes and Debezium's documented io.debezium.data.Bits are least significant
      byte first (F1 49 02).
    - BINARY(0): the server stores an empty value (its SELECT gives ''), the connector's snapshot
      writes zero bytes (ten, with binary.handling.mode=hex "00000000000000000000")."""
    if sql_type == "binary(0)" and ours == "" and isinstance(theirs, str) and theirs:
        data = bytes_of(theirs, options)
        if data is not None and not data.strip(b"\0"):
            return BINARY_0
    if in_key and sql_type.startswith("bit(") and isinstance(theirs, str) \
            and isinstance(ours, str):
        a, b = bytes_of(theirs, {}), bytes_of(ours, {})  # Bits: base64 in every binary mode
        if a is not None and b is not None and a == b[::-1] != b:
            return BIT_KEY
    return None


def snapshot_records(records, dbs) -> list:
    """The `op: "r"` records of the databases `dbs`: [(destination, key, value)]."""
    out = []
    for r in records:
        parts = str(r.get("destination") or r.get("topic") or "").split(".")
        value = r.get("value")
        payload = value.get("payload", value) if isinstance(value, dict) else None
        if len(parts) == 3 and parts[1] in dbs and payload and payload.get("op") == "r":
            out.append((".".join(parts[1:]), r.get("key"), value))
    return out


def dump_snapshot(server, dbs, options: dict, schemas: bool = False, cli=None,
                  prefix: str = TOPIC_PREFIX) -> list:
    cmd = [*(cli or [sys.executable, "-m", "binlog_grammar"]), "dump", "--format", "jsonl",
           "--envelope", "debezium"]
    opts = {"topic.prefix": prefix, "kafka.records": "true",
            "schemas.enable": str(schemas).lower(), "connector": "mysql",
            "snapshot.mode": "initial_only", "database.hostname": "127.0.0.1",
            "database.port": str(server.port), "database.user": USER,
            "database.include.list": ",".join(dbs), **options}
    for k, v in opts.items():
        cmd += ["--debezium-option", f"{k}={v}"]
    r = subprocess.run(cmd + [str(server.binlogs()[-1])], capture_output=True,
                       env={**os.environ, "PYTHONUTF8": "1", "MYSQL_PWD": PASSWORD})
    if r.returncode != 0:
        raise RuntimeError(f"dump failed ({r.returncode}): "
                           f"{r.stderr.decode(errors='replace')[-3000:]}")
    return [json.loads(line) for line in r.stdout.decode("utf-8").split("\n")[:-1]]


def check(judge, cases: list, options=None, schemas: bool = False, cli=None):
    """The drawn or fixed `cases` (testing.schema.Case) snapshotted by the connector and by
    dump: (records compared, values compared, [problems])."""
    return check_many(judge, cases, [(options, schemas)], cli)[0]


def check_many(judge, cases: list, option_sets: list, cli=None) -> list:
    """`check` under every option set [(options, schemas), ...] at once (one engine each, in
    one JVM, snapshotting the same tables): [(records, values, [problems]), ...]."""
    judge.count += 1
    base = f"dbz{judge.count}"
    dbs = [f"{base}_{i}" for i in range(len(cases))]
    before = [s for case, db in zip(cases, dbs) for s in case_sql(case, db)] + [f"USE `{base}`"]
    caps = judge.capture_many([], [({**(o or {}), "snapshot.mode": "initial"}, s)
                                   for o, s in option_sets], db=base, force=True,
                              include=f"{base}(_[0-9]+)?", before=before)
    # the marker row came after the connector's snapshot: dump's snapshot must not see it
    judge.server.sql(f"DELETE FROM `{base}`.`{MARKER}`")
    types, defaults = column_types(judge, dbs)
    return [_compare(judge, cap, dbs, base, dict(options or {}), schemas, cli, types, defaults)
            for cap, (options, schemas) in zip(caps, option_sets)]


def _compare(judge, cap, dbs, base, options, schemas, cli, types, defaults):
    theirs = snapshot_records(cap.records, set(dbs))
    ours_all = dump_snapshot(judge.server, [base] + dbs, options, schemas, cli, cap.prefix)
    ours = snapshot_records(ours_all, set(dbs))
    problems, values, wrong = [], 0, {}
    if len(theirs) != len(ours):
        problems.append(f"{len(theirs)} snapshot records from the connector, {len(ours)} from "
                        "dump")
    for i, (a, b) in enumerate(zip(theirs, ours)):
        diffs = []
        if a[0] != b[0]:
            problems.append(f"record {i}: connector {a[0]}, dump {b[0]}")
            continue
        diff_paths("key", a[1], b[1], diffs)
        diff_paths("", a[2], b[2], diffs)
        pa = a[2].get("payload", a[2])
        values += len(pa.get("after") or {})
        for path, x, y in diffs:
            p = path.replace("payload.", "")
            db, table = a[0].split(".", 1)
            column = p.split(".", 1)[1] if p.startswith(("after.", "key.")) else None
            key = a[1].get("payload", a[1]) if isinstance(a[1], dict) else {}
            sql_type = types.get((db, table, column), "")
            mistake = column and (connector_wrong(sql_type, column in (key or {}), x, y, options)
                                  or change_mistake(sql_type, x, y, options))
            if p.endswith("parameters.allowed") and isinstance(y, str) and \
                    x == y.replace("\\", "\\\\") != y:
                mistake = "ENUM/SET member with a backslash written as the DDL escapes it"
            if column and y is None and x is not None and defaults.get((db, table, column)):
                mistake = "NULL written as the DEFAULT"  # as debezium_diff.compare counts it
            elif column and sql_type.startswith("float") and same_float32(x) is not None \
                    and same_float32(x) == same_float32(y) and not exact32(x):
                mistake = "the same float32, other digits"  # as debezium_diff.compare
            if mistake:
                wrong[mistake] = wrong.get(mistake, 0) + 1
                continue
            if p.split(".")[-1] in SKIP[:3] or p in SKIP or p.startswith("schema.") and \
                    p.endswith(".default") and y == "<absent>":
                continue
            problems.append(f"record {i} ({a[0]}) {path}: connector {json.dumps(x)[:160]}, "
                            f"dump {json.dumps(y)[:160]}")
    if wrong:
        print(f"the connector's known mistakes: {wrong}")
    count, more = compare_schema_changes(cap.records, ours_all, {base, "", *dbs}, cap.prefix)
    return len(theirs) + count, values, problems + more


def schema_change_records(records, dbs, prefix: str = TOPIC_PREFIX) -> list:
    """The snapshot's schema-change records (source.snapshot true or last) of the databases
    `dbs` ("" for the SET character_set_server), as (key, value) in order."""
    out = []
    for rec in records:
        value = rec.get("value")
        if str(rec.get("destination") or rec.get("topic")) != prefix or not isinstance(value, dict):
            continue
        payload = value.get("payload", value)
        if (payload.get("source") or {}).get("snapshot") in ("true", "last") and \
                payload.get("databaseName") in dbs:
            out.append((rec.get("key"), value))
    return out


def compare_schema_changes(theirs: list, ours: list, dbs, prefix: str = TOPIC_PREFIX) -> tuple:
    """(records compared, [problems]) of the snapshot's schema-change records, every field but
    the clock and the snapshot's position (SKIP)."""
    a, b = schema_change_records(theirs, dbs, prefix), schema_change_records(ours, dbs, prefix)
    problems = []
    if len(a) != len(b):
        problems.append(f"{len(a)} snapshot schema-change records from the connector, {len(b)} "
                        f"from dump: connector {[v.get('payload', v)['ddl'][:50] for _, v in a]}, "
                        f"dump {[v.get('payload', v)['ddl'][:50] for _, v in b]}")
    for i, ((ka, va), (kb, vb)) in enumerate(zip(a, b)):
        diffs = []
        diff_paths("key", ka, kb, diffs)
        diff_paths("value", va, vb, diffs)
        for path, x, y in diffs:
            p = path.replace("payload.", "")
            if p.split(".")[-1] in SKIP[:3] or p.replace("value.", "", 1) in SKIP:
                continue
            ddl = va.get("payload", va).get("ddl", "")
            problems.append(f"snapshot schema change {i} ({ddl[:50]!r}) {path}: connector "
                            f"{json.dumps(x)[:160]}, dump {json.dumps(y)[:160]}")
    return min(len(a), len(b)), problems
