"""MariaDB's compressed events (log_bin_compress: QUERY_COMPRESSED_EVENT and the compressed rows
events) in the compiled lanes: a binlog a real server wrote with --log-bin-compress
--log-bin-compress-min-len=10 (once per module) prints the same on both backends and job counts,
the text lane writes its compressed rows events itself (it inflates them, lanes.h's
bg_lanes_inflate) instead of stopping at each, and copies whose compressed bytes are damaged
(their CRC32 made right, so the damage reaches the inflating) print the same as the Python path
prints them."""
import random
import shutil
import zlib

import pytest

from binlog_grammar import native
from binlog_grammar.binlog.stream import Written, open_stream
from binlog_grammar.output.text_lane import TextLane
from helpers.native import cli_dump
from helpers.services import need_mariadb

LANE = native._load_lane()[0]
pytestmark = [pytest.mark.server,
              pytest.mark.skipif(LANE is None or native.unavailable() is not None,
                                 reason="the compiled extensions are not built")]

WORKLOAD = """
CREATE DATABASE c; USE c;
CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(200), b BLOB, d DECIMAL(10,2), f DOUBLE,
                dt DATETIME(3), e ENUM('x','y','z'), n INT UNSIGNED);
{inserts}
BEGIN; {updates} COMMIT;
DELETE FROM t WHERE id % 5 = 0;
CREATE TABLE u (a INT, v VARCHAR(40)) ENGINE=InnoDB;
INSERT INTO u VALUES (1, 'a'), (2, REPEAT('b', 20)), (3, NULL);
UPDATE u SET v = CONCAT(IFNULL(v, ''), 'zz');
FLUSH LOGS;
"""


@pytest.fixture(scope="module")
def compressed(tmp_path_factory):
    need_mariadb()
    from binlog_grammar.testing.mariadb import MariaDB

    inserts = "\n".join(
        f"INSERT INTO t VALUES ({i}, REPEAT('ab{i}', {i % 40 + 1}), "
        f"{'NULL' if i % 7 == 0 else repr('x' * (i * 13 % 300))}, {i}.25, {i * 1.5}, "
        f"'2024-01-{i % 28 + 1:02d} 10:11:12.345', '{'xyz'[i % 3]}', {i * 1000003});"
        for i in range(1, 41))
    updates = " ".join(f"UPDATE t SET s = CONCAT(s, 'q{i}'), n = n + {i} WHERE id = {i};"
                       for i in range(1, 21))
    out = tmp_path_factory.mktemp("compressed") / "compressed-bin.000001"
    with MariaDB(options=["--log-bin-compress", "--log-bin-compress-min-len=10"]) as m:
        m.sql(WORKLOAD.format(inserts=inserts, updates=updates))
        shutil.copy(m.binlogs()[0], out)
    return out


def _names(path):
    from binlog_grammar.binlog.reader import read_events

    return [ev.name for ev in read_events(path)]


def test_the_server_wrote_compressed_events(compressed):
    names = _names(compressed)
    for name in ("QUERY_COMPRESSED_EVENT", "WRITE_ROWS_COMPRESSED_EVENT_V1",
                 "UPDATE_ROWS_COMPRESSED_EVENT_V1", "DELETE_ROWS_COMPRESSED_EVENT_V1"):
        assert name in names, name


def test_the_text_lane_writes_compressed_rows(compressed):
    """Only the first compressed rows event of each table and shape is the Python path's (it
    teaches the lane the plan); the lane writes the other 40 or so itself."""
    s = open_stream([compressed])
    s.lane = TextLane(LANE)
    python = written = 0
    for se in s.events():
        if type(se) is Written:
            written += se.text.count("# at ")
        elif "ROWS_COMPRESSED" in se.event.name:
            python += 1
    total = sum("ROWS_COMPRESSED" in n for n in _names(compressed))
    assert total >= 40 and python <= 6 and written > total - python, (total, python, written)


def test_the_jsonl_lane_writes_compressed_rows(compressed):
    from binlog_grammar.output.dump import JsonlWriter
    from binlog_grammar.output.jsonl_lane import attach

    native.select("c")
    try:
        s = open_stream([compressed])
        writer = JsonlWriter()
        lane = attach(s, writer)
        assert lane is not None
        python = 0
        for se in s.events():
            if type(se) is not Written:
                list(writer.lines(se))  # as dump does: the compiled rows make the plan
                lane.seen(se)
                python += "ROWS_COMPRESSED" in se.event.name
    finally:
        native.select(None)
    assert python <= 6, python


@pytest.mark.parametrize("opts", [(), ("--jobs", "2")], ids=["jobs1", "jobs2"])
def test_compressed_text_is_the_same_on_both_backends(compressed, opts):
    py = cli_dump(compressed, "python")
    assert py[0] == 0 and "Write_rows" in py[1]
    assert cli_dump(compressed, "c", *opts) == py


def cli_run(backend, *args):
    """`binlog-grammar --backend BACKEND ARGS` in this process: (exit status, output, errors)."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from binlog_grammar.cli import main

    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(["--backend", backend, *args])
            except SystemExit as e:
                code = e.code
    finally:
        native.select(None)
    # stats names the backend that ran in its first line
    text = "".join(line for line in out.getvalue().splitlines(True)
                   if not line.startswith("backend: "))
    return code, text, err.getvalue()


def test_compressed_jsonl_and_stats_are_the_same(compressed):
    for args in (["dump", "--no-progress", "--format", "jsonl"], ["stats"]):
        py = cli_run("python", *args, str(compressed))
        assert py[0] == 0
        for jobs in ("1", "2"):
            assert cli_run("c", *args, "--jobs", jobs, str(compressed)) == py, (args, jobs)


def _damaged_payloads(path, rnd, copies: int):
    """Copies of data, each with one byte of one compressed rows event's payload (its last 60%)
    changed and that event's CRC32 made right."""
    from binlog_grammar.binlog.framing import scan

    data = path.read_bytes()
    events = [(pos, length) for pos, code, length in scan(path) if 166 <= code <= 171]
    for _ in range(copies):
        pos, length = rnd.choice(events)
        bad = bytearray(data)
        at = pos + length - 4 - rnd.randrange(1, max(2, (length - 23) * 6 // 10))
        bad[at] ^= 1 << rnd.randrange(8)
        end = pos + length
        bad[end - 4:end] = zlib.crc32(bytes(bad[pos:end - 4])).to_bytes(4, "little")
        yield bytes(bad)


def test_damaged_compressed_rows_print_the_same(compressed, tmp_path):
    rnd = random.Random(26)
    for k, bad in enumerate(_damaged_payloads(compressed, rnd, 12)):
        path = tmp_path / f"damaged-{k}.000001"
        path.write_bytes(bad)
        assert cli_dump(path, "c") == cli_dump(path, "python"), k
