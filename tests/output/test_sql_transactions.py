"""Transactions as the server applied them, replayed and flashed back through the real `mariadb`
client, and windows that never split a transaction (issue 25).

One source MariaDB and one target MariaDB (binlog_format=ROW, binlog_row_metadata=FULL), each with
`w.t` (InnoDB) and `w.m` (MyISAM), keyed by `id`:

- the issue's example, fixed: `BEGIN; INSERT t(3); SAVEPOINT s; INSERT m(1); INSERT t(4);
  ROLLBACK TO s; COMMIT` (the binlog holds t(4) and ROLLBACK TO s) replays without row 4, and its
  flashback leaves what was there before;
- `dump` text with a datetime window prints the events `mariadb-binlog` prints, on a binlog whose
  events' timestamps go back and forth (SET TIMESTAMP);
- Hypothesis: a random workload (transactions with savepoints and rollbacks to them, MyISAM
  statements in and out of transactions, rolled-back transactions, statement timestamps before
  and after their commit's) runs in one session while a second session records, after every
  statement, the committed rows and @@gtid_binlog_pos. Windows and position ranges are drawn over
  the binlog; the transactions the documented rule selects (binlog/window.py: by the offset and
  timestamp of their GTID event, read here from `mariadb-binlog`'s output, not from this project)
  are a run of GTIDs a..b, so `sql` piped into a target holding the source's rows as of a-1 must
  leave the source's rows as of b; `flashback` of the suffix a.. piped into a target holding the
  final rows must leave the rows as of a-1.

BINLOG_GRAMMAR_WINDOW_EXAMPLES sets the number of workloads (default 6, derandomized), each
with 4 windows and a flashback.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from binlog_grammar.testing import mariadb

from helpers.services import need_mariadb

pytestmark = pytest.mark.server

EXAMPLES = int(os.environ.get("BINLOG_GRAMMAR_WINDOW_EXAMPLES", "6"))
SCHEMA = ("CREATE DATABASE IF NOT EXISTS w; USE w; "
          "CREATE TABLE IF NOT EXISTS t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB; "
          "CREATE TABLE IF NOT EXISTS m (id INT PRIMARY KEY, v INT) ENGINE=MyISAM;")
STATE = "SELECT 't', id, v FROM w.t UNION ALL SELECT 'm', id, v FROM w.m ORDER BY 1, 2"
OPTIONS = ["--binlog-row-metadata=FULL", "--default-time-zone=+00:00"]


@pytest.fixture(scope="module")
def servers():
    need_mariadb()
    src, dst = mariadb.MariaDB(OPTIONS), mariadb.MariaDB(OPTIONS)
    try:
        src.start()
        dst.start()
        for db in (src, dst):
            db.sql(SCHEMA)
        yield src, dst
    finally:
        src.cleanup()
        dst.cleanup()


def connect(db):
    from binlog_grammar.replication.connection import Connection

    return Connection("127.0.0.1", db.port, "root", "").connect()


def rows(conn) -> tuple:
    return tuple(tuple(v.decode() for v in r) for r in conn.query(STATE)[1])


def rows_of(db) -> tuple:
    conn = connect(db)
    try:
        return rows(conn)
    finally:
        conn.close()


def seq(conn) -> int:
    pos = conn.query("SELECT @@global.gtid_binlog_pos")[1][0][0].decode()
    return int(pos.rsplit("-", 1)[1]) if pos else 0


def set_rows(db, state):
    values = {name: ", ".join(f"({i}, {v})" for tb, i, v in state if tb == name) for name in "tm"}
    db.sql("SET sql_log_bin=0; DELETE FROM w.t; DELETE FROM w.m; "
           + "".join(f"INSERT INTO w.{n} VALUES {vs}; " for n, vs in values.items() if vs))


def tool(*argv) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "binlog_grammar", *map(str, argv)],
                          capture_output=True, text=True)


def pipe(db, script: str):
    """The script into the target through the real client; it must exit 0."""
    r = subprocess.run(db._client(), input=script, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + script[-3000:]


def new_binlog(db) -> str:
    db.sql("FLUSH BINARY LOGS")
    return str(db.binlogs()[-1])


# ---------------------------------------------------------------------------------------------
# the issue's example

ISSUE = ("BEGIN; INSERT INTO w.t VALUES (3, 0); SAVEPOINT s; INSERT INTO w.m VALUES (1, 0); "
         "INSERT INTO w.t VALUES (4, 0); ROLLBACK TO s; COMMIT;")


def test_rolled_back_to_a_savepoint_stays_rolled_back(servers):
    src, dst = servers
    set_rows(src, ())
    binlog = new_binlog(src)
    src.sql(ISSUE)
    after = rows_of(src)
    assert after == (("m", "1", "0"), ("t", "3", "0"))
    dump = subprocess.run(["mariadb-binlog", "-vv", binlog], capture_output=True, text=True).stdout
    assert "ROLLBACK TO `s`" in dump and "@1=4" in dump  # what the server logs, rolled back
    set_rows(dst, ())
    r = tool("sql", binlog)
    assert r.returncode == 0, r.stderr
    pipe(dst, r.stdout)
    assert rows_of(dst) == after
    r = tool("flashback", binlog)
    assert r.returncode == 0 and "not inverted" not in r.stdout.split("ROLLBACK TO")[0], r.stdout
    pipe(dst, r.stdout)
    assert rows_of(dst) == ()


# ---------------------------------------------------------------------------------------------
# dump text cuts a datetime window where mariadb-binlog does

def at_lines(text: str) -> list:
    return [ln for ln in text.splitlines() if ln.startswith("# at ")]


def test_dump_text_window_is_mysqlbinlogs(servers):
    src, _ = servers
    import time

    binlog = new_binlog(src)
    b = int(time.time()) + 1000  # after the file's first events, which carry the server's time
    src.sql(f"SET TIMESTAMP={b + 100}; BEGIN; INSERT INTO w.t VALUES (50, 1); "
            f"SET TIMESTAMP={b + 300}; INSERT INTO w.t VALUES (51, 1); SET TIMESTAMP={b + 200}; "
            f"COMMIT; SET TIMESTAMP={b + 400}; INSERT INTO w.m VALUES (50, 1); "
            f"SET TIMESTAMP={b + 250}; DELETE FROM w.m WHERE id = 50; DELETE FROM w.t WHERE id >= 50;")
    import datetime as dt

    env = {**os.environ, "TZ": "UTC"}
    cut = 0
    for t in range(b - 150, b + 500, 25):  # the events are at b+100..b+400
        for option in ("--start-datetime", "--stop-datetime"):
            when = f"{option}={dt.datetime.fromtimestamp(t, dt.timezone.utc):%Y-%m-%d %H:%M:%S}"
            theirs = subprocess.run(["mariadb-binlog", when, binlog], capture_output=True,
                                    text=True, env=env).stdout
            ours = tool("dump", "-vv", "--base64-output=decode-rows", when, binlog)
            assert ours.returncode == 0, ours.stderr
            assert at_lines(ours.stdout) == at_lines(theirs), when
            cut += 0 < len(at_lines(theirs)) < len(at_lines(tool("dump", "-vv", "--base64-output=decode-rows", binlog).stdout))
    assert cut >= 4  # the windows did cut the file


# ---------------------------------------------------------------------------------------------
# random workloads, windows and position ranges

_GTID = re.compile(r"^# at (\d+)\n#(\d\d)(\d\d)(\d\d)\s+(\d+):(\d\d):(\d\d) server id \d+\s+"
                   r"end_log_pos \d+ .*?\tGTID \d+-\d+-(\d+)", re.M)


def gtids(binlog) -> list:
    """(seq, offset, timestamp) of every GTID event, from mariadb-binlog (in UTC)."""
    import calendar

    text = subprocess.run(["mariadb-binlog", binlog], capture_output=True, text=True,
                          env={**os.environ, "TZ": "UTC"}).stdout
    return [(int(m[8]), int(m[1]), calendar.timegm((2000 + int(m[2]), int(m[3]), int(m[4]),
                                                    int(m[5]), int(m[6]), int(m[7]))))
            for m in _GTID.finditer(text)]


def offsets(binlog) -> list:
    text = subprocess.run(["mariadb-binlog", binlog], capture_output=True, text=True).stdout
    return sorted({int(x) for x in re.findall(r"^# at (\d+)$", text, re.M)})


def workload_strategy():
    from hypothesis import strategies as st

    op = st.one_of(
        st.tuples(st.just("upsert"), st.sampled_from("ttm"), st.integers(1, 6), st.integers(0, 99)),
        st.tuples(st.just("delete"), st.sampled_from("ttm"), st.integers(1, 6)),
        st.tuples(st.just("bump"), st.sampled_from("tm"), st.integers(1, 6)),
        st.tuples(st.just("savepoint"), st.sampled_from("ab")),
        st.tuples(st.just("rollback_to"), st.sampled_from("ab")))
    tx = st.tuples(st.lists(op, min_size=1, max_size=6),
                   st.sampled_from(["COMMIT", "COMMIT", "COMMIT", "ROLLBACK", "autocommit"]),
                   st.lists(st.integers(-8, 8), min_size=6, max_size=6))
    return st.lists(tx, min_size=3, max_size=8)


def statement(o) -> str:
    if o[0] == "upsert":
        return f"INSERT INTO w.{o[1]} VALUES ({o[2]}, {o[3]}) ON DUPLICATE KEY UPDATE v = {o[3]}"
    if o[0] == "delete":
        return f"DELETE FROM w.{o[1]} WHERE id = {o[2]}"
    if o[0] == "bump":
        return f"UPDATE w.{o[1]} SET v = v + 1 WHERE id <= {o[2]}"
    return f"SAVEPOINT {o[1]}" if o[0] == "savepoint" else f"ROLLBACK TO {o[1]}"


def run_workload(src, txs) -> tuple:
    """Run it; (binlog, {gtid seq: committed rows after it}, the seq before it)."""
    set_rows(src, ())
    binlog = new_binlog(src)
    work, watch = connect(src), connect(src)
    try:
        return _run(work, watch, txs, binlog)
    finally:
        work.close()
        watch.close()


def _run(work, watch, txs, binlog):
    from binlog_grammar.replication.connection import ServerError

    first = seq(watch)
    states = {first: rows(watch)}
    clock = 1700000000
    for ops, end, jitter in txs:
        work.query("SET autocommit=1" if end == "autocommit" else "BEGIN")
        for k, o in enumerate(ops):
            if o[1] == "m" or end == "autocommit":  # commits at once: its GTID's time
                clock += 2
                work.query(f"SET TIMESTAMP={clock}")
            else:  # runs before its commit, with a time before or after the commit's
                work.query(f"SET TIMESTAMP={clock + jitter[k]}")
            try:
                work.query(statement(o))
            except ServerError:  # ROLLBACK TO a savepoint not set: nothing happens
                pass
            states[seq(watch)] = rows(watch)
        clock += 2
        work.query(f"SET TIMESTAMP={clock}")
        work.query("COMMIT" if end == "autocommit" else end)
        states[seq(watch)] = rows(watch)
    return binlog, states, first


@pytest.mark.skipif(EXAMPLES <= 0, reason="BINLOG_GRAMMAR_WINDOW_EXAMPLES=0")
def test_windows_replay_whole_transactions(servers):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    src, dst = servers
    import datetime as dt

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(workload_strategy(), st.data())
    def check(txs, data):
        binlog, states, first = run_workload(src, txs)
        groups = gtids(binlog)
        if not groups:
            return
        last = max(states)
        assert [g[0] for g in groups] == list(range(first + 1, last + 1))
        where = offsets(binlog) + [os.path.getsize(binlog)]
        times = sorted({g[2] for g in groups})
        for _ in range(4):
            argv, lo, hi = [], None, None
            pstart = data.draw(st.one_of(st.none(), st.sampled_from(where)), "start position")
            pstop = data.draw(st.one_of(st.none(), st.sampled_from(where)), "stop position")
            if pstart is not None and pstop is not None and pstop <= pstart:
                pstart, pstop = pstop, pstart
            tstart = data.draw(st.one_of(st.none(), st.sampled_from(times)), "start time")
            tstop = data.draw(st.one_of(st.none(), st.sampled_from(times)), "stop time")
            if tstart is not None and tstop is not None and tstop <= tstart:
                tstart, tstop = None, tstop
            for opt, v in (("--start-position", pstart), ("--stop-position", pstop)):
                if v is not None and not (opt == "--start-position" and v >= where[-1]):
                    argv += [opt, v]
            for opt, v in (("--start-datetime", tstart), ("--stop-datetime", tstop)):
                if v is not None:
                    argv += [opt, dt.datetime.fromtimestamp(v, dt.timezone.utc).isoformat()]
            if pstart == pstop and pstart is not None:
                continue
            chosen = [s for s, off, ts in groups
                      if (pstart is None or off >= pstart) and (pstop is None or off < pstop)
                      and (tstart is None or ts >= tstart) and (tstop is None or ts < tstop)]
            if not chosen:
                continue
            lo, hi = chosen[0], chosen[-1]
            assert chosen == list(range(lo, hi + 1)), "the rule selects a run of GTIDs"
            r = tool("sql", *argv, binlog)
            assert r.returncode == 0, r.stderr
            set_rows(dst, states[lo - 1])
            pipe(dst, r.stdout)
            assert rows_of(dst) == states[hi], (argv, lo, hi, r.stdout)
        # flashback of a suffix: back to the rows before its first transaction
        lo = data.draw(st.integers(first + 1, last), "flashback from")
        start = next(off for s, off, ts in groups if s == lo)
        r = tool("flashback", "--start-position", start, binlog)
        assert r.returncode == 0, r.stderr
        set_rows(dst, states[last])
        pipe(dst, r.stdout)
        assert rows_of(dst) == states[lo - 1], (lo, r.stdout)

    check()
