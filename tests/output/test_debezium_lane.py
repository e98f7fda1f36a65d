"""The compiled lane of `dump --format jsonl --envelope debezium` (output/debezium_lane.py: the
JSON-lines lane in its Debezium mode) writes what the Python backend writes, byte for byte, with
the same errors: on a real MariaDB's binlog of every common column type (helpers.oracle's
TYPES_WORKLOAD) whose rows are written again and again (so that the lane, which learns a table's
plan from the first event the Python path writes, writes runs of them), keyed tables whose
updates keep or change the key, under the default options and each value option the compiled
forms implement, and on damaged copies (CRC32 checks off, so that damaged rows reach C)."""
import random

import pytest

from binlog_grammar import native
from binlog_grammar.binlog.stream import Written, open_stream
from binlog_grammar.output.debezium import DebeziumWriter
from binlog_grammar.output.debezium_lane import attach
from helpers.native import VALUE_OPTIONS, cli_dump
from helpers.oracle import TYPES_WORKLOAD
from helpers.services import need_mariadb

ROWS = native._load_rows()[0]
pytestmark = [pytest.mark.server,
              pytest.mark.skipif(ROWS is None or not hasattr(ROWS, "DEBEZIUM"),
                                 reason="the compiled extension _rows is not built")]
TABLES = ("ints", "nums", "temporal", "old_temporal", "bits", "enum_set", "strs")
AGAIN = "".join(f"INSERT INTO {t} SELECT * FROM {t}; DELETE FROM {t} LIMIT 1; " for t in TABLES)
WORKLOAD = f"""
{AGAIN}{AGAIN}
UPDATE ints SET c = 7 WHERE c = -1; UPDATE nums SET c = 5; UPDATE temporal SET y = 1999;
UPDATE enum_set SET e = 'b'; UPDATE strs SET vb = 0x0102;
CREATE TABLE k (id INT PRIMARY KEY, v VARCHAR(10), d DECIMAL(8,3));
INSERT INTO k VALUES (1, 'a', 1.5); INSERT INTO k VALUES (2, 'b', -2.25);
INSERT INTO k VALUES (3, 'c', 0); INSERT INTO k VALUES (4, 'd', 99999.999);
UPDATE k SET v = 'x' WHERE id = 1; UPDATE k SET v = 'y' WHERE id = 2;
UPDATE k SET id = 10 WHERE id = 3; UPDATE k SET d = d + 1; UPDATE k SET id = id + 100;
DELETE FROM k WHERE id = 101; DELETE FROM k;
"""


@pytest.fixture(scope="module")
def binlog(tmp_path_factory):
    need_mariadb()
    from binlog_grammar.testing import mariadb

    out = tmp_path_factory.mktemp("debezium-lane")
    with mariadb.MariaDB(["--default-time-zone=+00:00", "--binlog-row-metadata=FULL"]) as db:
        db.sql("CREATE DATABASE full;")
        db.sql(TYPES_WORKLOAD + WORKLOAD, database="full")
        db.sql("FLUSH BINARY LOGS;")
        paths = []
        for p in db.binlogs():
            paths.append(out / p.name)
            paths[-1].write_bytes(p.read_bytes())
    return paths


def _dump(path, backend, *options):
    opts = [x for k, v in options for x in ("--debezium-option", f"{k}={v}")]
    return cli_dump(path, backend, "--format", "jsonl", "--envelope", "debezium", *opts)


def test_the_lane_writes_runs_of_row_changes(binlog):
    """The comparisons below see the lane at work: it writes runs of row changes."""
    w = DebeziumWriter({})
    stream = open_stream([str(binlog[0])])
    lane = attach(stream, w)
    assert lane is not None
    by_lane = by_python = 0
    for se in stream.events():
        if type(se) is Written:
            by_lane += se.text.count(b"\n")
            continue
        lane.seen(se)
        by_python += sum(line.count("\n") + 1 for line in w.lines(se))
    assert by_lane > 50, (by_lane, by_python)


@pytest.mark.parametrize("option", [None] + VALUE_OPTIONS,
                         ids=lambda o: "defaults" if o is None else "=".join(o))
def test_lane_and_python_alike(binlog, option):
    options = () if option is None else (option,)
    for path in binlog:
        assert _dump(path, "c", *options) == _dump(path, "python", *options), path.name


@pytest.mark.parametrize("seed", range(8))
def test_damaged_copies_alike(binlog, seed, tmp_path):
    rnd = random.Random(seed)
    data = bytearray(binlog[0].read_bytes())
    for _ in range(rnd.randint(1, 4)):
        data[rnd.randrange(256, len(data))] ^= 1 << rnd.randrange(8)
    path = tmp_path / binlog[0].name
    path.write_bytes(bytes(data))
    args = ("--no-checksum", "--format", "jsonl", "--envelope", "debezium")
    assert cli_dump(path, "c", *args) == cli_dump(path, "python", *args)
