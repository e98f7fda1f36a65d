"""binlog_grammar.compat.pymysqlreplication judged by the real python-mysql-replication: typical
scripts (connect, filter events, schemas and tables, print every event's dump() and every row's
repr; blocking and not; MariaDB GTIDs with is_mariadb/auto_position; resume_stream with
log_file/log_pos) run against one real MariaDB (binlog_format=ROW, binlog_row_metadata=FULL)
twice, in fresh interpreters: once as written (`from pymysqlreplication import ...`, the real
library) and once with only the import changed (or with no change after compat.install()), and
print the same text. Tables and workloads are drawn with Hypothesis (bounded, derandomized:
BINLOG_GRAMMAR_PMR_EXAMPLES, default 4). The values the library decodes wrongly (the package
docstring's list) are checked once each, as differences, and left out of the drawn workloads.

Skipped without mariadbd or without the real library, unless BINLOG_GRAMMAR_REQUIRE_SERVICES=1.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
import time
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from binlog_grammar.output import quoting
from binlog_grammar.testing import mariadb

from helpers.paths import ROOT
from helpers.services import REQUIRE_SERVICES, need_mariadb

pytestmark = pytest.mark.server

EXAMPLES = int(os.environ.get("BINLOG_GRAMMAR_PMR_EXAMPLES", "4"))
USER, PASSWORD = "pmr", "Pmr-pw_57q"
REAL = "from pymysqlreplication"
SHIM = "from binlog_grammar.compat.pymysqlreplication"

# a python-mysql-replication script as its users write them; KW (JSON) holds the reader's
# arguments, STOP a statement whose QueryEvent ends a blocking run
SCRIPT = '''
import json, os
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent
from pymysqlreplication.event import QueryEvent, RotateEvent, XidEvent, MariadbGtidEvent

MYSQL_SETTINGS = {"host": "127.0.0.1", "port": int(os.environ["PORT"]), "user": os.environ["USER"],
                  "passwd": os.environ["PASSWORD"]}
kw = json.loads(os.environ["KW"])
kw["only_events"] = [globals()[n] for n in kw.get("only_events", [])] or None
stream = BinLogStreamReader(connection_settings=MYSQL_SETTINGS,
                            server_id=int(os.environ["SERVER_ID"]), **kw)
for binlogevent in stream:
    print(type(binlogevent).__name__, binlogevent.event_type, binlogevent.packet.log_pos,
          binlogevent.timestamp)
    binlogevent.dump()
    if isinstance(binlogevent, (WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent)):
        for row in binlogevent.rows:
            print(binlogevent.schema, binlogevent.table, binlogevent.primary_key, repr(row))
    if isinstance(binlogevent, MariadbGtidEvent):
        print("gtid", binlogevent.gtid)
    if isinstance(binlogevent, RotateEvent):
        print("rotate", binlogevent.next_binlog, binlogevent.position)
    if os.environ.get("STOP") and isinstance(binlogevent, QueryEvent) \\
            and os.environ["STOP"] in binlogevent.query:
        break
print("at", stream.log_file, stream.log_pos)
stream.close()
'''


def _need_library():
    try:
        import pymysqlreplication  # noqa: F401
    except ImportError:
        if REQUIRE_SERVICES:
            pytest.fail("mysql-replication is not installed (pip install -e '.[test]') and "
                        "BINLOG_GRAMMAR_REQUIRE_SERVICES=1")
        pytest.skip("mysql-replication is not installed (pip install -e '.[test]')")


@pytest.fixture(scope="module")
def server():
    need_mariadb()
    _need_library()
    db = mariadb.MariaDB(["--binlog-row-metadata=FULL", "--default-time-zone=+00:00"])
    db.start()
    try:
        db.sql(f"SET sql_log_bin=0; CREATE USER {USER}@'%' IDENTIFIED BY '{PASSWORD}'; "
               f"GRANT REPLICATION SLAVE, BINLOG MONITOR, SELECT ON *.* TO {USER}@'%';")
        db.sql("CREATE DATABASE seed")  # a GTID to start after
        yield db
    finally:
        db.stop()
        db.cleanup()


def _env(db, kw, stop=None, server_id=4242):
    env = {**os.environ, "PORT": str(db.port), "USER": USER, "PASSWORD": PASSWORD,
           "KW": json.dumps(kw), "PYTHONHASHSEED": "0", "PYTHONPATH": str(ROOT),
           "SERVER_ID": str(server_id)}
    if stop:
        env["STOP"] = stop
    return env


def start(db, kw, how="real", stop=None, script=SCRIPT, server_id=4242):
    """`script` in a fresh interpreter: with the real library (how="real"), with its imports
    changed to the shim ("shim"), or unchanged after compat.install() ("install")."""
    if how == "shim":
        script = script.replace(REAL, SHIM)
    elif how == "install":
        script = "import binlog_grammar.compat\nbinlog_grammar.compat.install()\n" + script
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=_env(db, kw, stop, server_id),
                         cwd=ROOT)
    p.how = how
    return p


def finish(p) -> str:
    """What the script printed (it must end by itself, with status 0)."""
    try:
        out, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        raise AssertionError(f"{p.how}: the script did not end\n{out[-2000:]}\n{err[-2000:]}")
    assert p.returncode == 0, f"{p.how}: exit {p.returncode}\n{err[-3000:]}"
    return out


def run(db, kw, how="real", **k) -> str:
    return finish(start(db, kw, how, **k))


def both(db, kw, **k):
    real, shim = run(db, kw, how="real", **k), run(db, kw, how="shim", **k)
    return real, shim


def _status(db):
    f, pos = db.sql("SHOW MASTER STATUS").split("\t")[:2]
    return f, int(pos)


def settle(db):
    """Wait until the binlog stops growing. After FLUSH BINARY LOGS, MariaDB writes a second
    BINLOG_CHECKPOINT_EVENT into the new file, naming that file, in the background once the old
    file's transactions are committed; a non-blocking run made a moment earlier than another
    would not see it. So wait for the newest file to name itself, then for the position to hold."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        f = _status(db)[0]
        shown = db.sql("SHOW BINLOG EVENTS IN " + quoting.string(f))
        if any(line.split("\t")[2:3] == ["Binlog_checkpoint"] and line.rstrip().endswith(f)
               for line in shown.splitlines()):
            break
        time.sleep(0.1)
    last, same = None, 0
    while same < 3 and time.monotonic() < deadline:
        now = _status(db)
        same = same + 1 if now == last else 0
        last = now
        time.sleep(0.2)


def _gtid_pos(db) -> str:
    return db.sql("SELECT @@gtid_binlog_pos").strip()


def assert_same(real: str, shim: str):
    assert real.count("===") > 2, real
    if real != shim:
        import difflib
        diff = "".join(list(difflib.unified_diff(real.splitlines(True), shim.splitlines(True),
                                                 "real library", "shim"))[:80])
        raise AssertionError(f"the shim prints differently:\n{diff}")


# ---------------------------------------------------------------------------------------------
# drawn tables and workloads

def _hex(b: bytes) -> str:
    return f"x'{b.hex()}'" if b else "''"


def _text(s: str, cs="utf8mb4") -> str:
    return f"_{cs} {_hex(s.encode('utf-8' if cs == 'utf8mb4' else 'latin-1'))}"


_WORDS = st.text(st.sampled_from("abcXYZ 019'\"\\%_éßü中文😀"), max_size=12)
_LATIN = st.text(st.sampled_from("abc XYZ'\\éüñ"), max_size=10)
_DT = st.datetimes(dt.datetime(1000, 1, 1), dt.datetime(9999, 12, 31))
_TS = st.datetimes(dt.datetime(1970, 1, 2), dt.datetime(2037, 12, 31))
_TIME = st.one_of(
    st.integers(0, 838 * 3600).map(lambda s: (s, 0)),
    st.integers(0, 838 * 3600).flatmap(lambda s: st.integers(0, 99).map(lambda c: (s, c))),
    st.integers(1, 838 * 3600).map(lambda s: (-s, 0)))  # negative with a fraction: a difference

# column type -> (SQL type, strategy of a SQL literal)
COLUMNS = {
    "i": ("INT", st.integers(-2**31, 2**31 - 1).map(str)),
    "ub": ("BIGINT UNSIGNED", st.integers(0, 2**64 - 1).map(str)),
    "ti": ("TINYINT", st.integers(-128, 127).map(str)),
    "um": ("MEDIUMINT UNSIGNED", st.integers(0, 2**24 - 1).map(str)),
    "dec": ("DECIMAL(12,3)", st.decimals(Decimal("-999999999.999"), Decimal("999999999.999"),
                                         places=3, allow_nan=False).map(str)),
    "fl": ("FLOAT", st.floats(-2.0**99, 2.0**99, width=32, allow_subnormal=False)
           .map(lambda f: repr(float(f)))),
    "db": ("DOUBLE", st.floats(allow_nan=False, allow_infinity=False).map(repr)),
    "vc": ("VARCHAR(30) CHARACTER SET utf8mb4", _WORDS.map(_text)),
    "l1": ("VARCHAR(20) CHARACTER SET latin1", _LATIN.map(lambda s: _text(s, "latin1"))),
    "ch": ("CHAR(6) CHARACTER SET utf8mb4", _WORDS.map(lambda s: _text(s.rstrip()[:6]))),
    "vb": ("VARBINARY(16)", st.binary(min_size=1, max_size=16).map(_hex)),  # b"": a difference
    # BINARY(4) of 4 bytes, the last not 0 (trailing zero bytes: a difference)
    "bn": ("BINARY(4)", st.binary(min_size=3, max_size=3).flatmap(
        lambda b: st.integers(1, 255).map(lambda z: _hex(b + bytes([z]))))),
    "tx": ("TEXT CHARACTER SET utf8mb4", _WORDS.map(_text)),
    "bl": ("BLOB", st.binary(min_size=1, max_size=40).map(_hex)),
    "js": ("JSON", st.dictionaries(st.sampled_from("abc"), st.integers(-5, 5), max_size=3)
           .map(lambda d: _text(json.dumps(d)))),
    "d": ("DATE", st.dates(dt.date(1000, 1, 1), dt.date(9999, 12, 31)).map(lambda d: f"'{d}'")),
    "dt": ("DATETIME(3)", _DT.map(lambda d: f"'{d.isoformat(' ', 'milliseconds')}'")),
    "ts": ("TIMESTAMP(6) NULL", _TS.map(lambda d: f"'{d.isoformat(' ', 'microseconds')}'")),
    "tm": ("TIME(2)", _TIME.map(lambda t: "'{}{}:{:02d}:{:02d}.{:02d}'".format(
        "-" if t[0] < 0 else "", abs(t[0]) // 3600, abs(t[0]) // 60 % 60, abs(t[0]) % 60, t[1]))),
    "yr": ("YEAR", st.integers(1901, 2155).map(str)),
    "bt": ("BIT(10)", st.integers(0, 1023).map(lambda n: f"b'{n:b}'")),
    "se": ("SET('x','y','z')", st.sets(st.sampled_from("xyz")).map(lambda s: f"'{','.join(sorted(s))}'")),
    "en": ("ENUM('p','q','r')", st.sampled_from("pqr").map(lambda s: f"'{s}'")),
    "si": ("SMALLINT UNSIGNED", st.integers(0, 2**16 - 1).map(str)),
    "bd": ("DECIMAL(30,10)", st.decimals(Decimal("-1e19") + 1, Decimal("1e19") - 1, places=10,
                                        allow_nan=False).map(str)),
    "d0": ("DATETIME", _DT.map(lambda d: f"'{d.isoformat(' ', 'seconds')}'")),
    "t0": ("TIMESTAMP NULL", _TS.map(lambda d: f"'{d.isoformat(' ', 'seconds')}'")),
    "geo": ("POINT", st.tuples(st.integers(-180, 180), st.integers(-90, 90))
            .map(lambda p: f"ST_GeomFromText('POINT({p[0]} {p[1]})')")),
    "b1": ("BIT(1)", st.integers(0, 1).map(str)),
}


@st.composite
def workloads(draw):
    """(columns [(name, kind)], nullable {name: bool}, steps, values {id: [SQL literal]})."""
    kinds = draw(st.lists(st.sampled_from(sorted(COLUMNS)), min_size=1, max_size=6, unique=True))
    cols = [(f"c{i}_{k}", k) for i, k in enumerate(kinds)]
    nullable = {name: draw(st.booleans()) for name, _ in cols}

    def row():
        return [("NULL" if nullable[n] and draw(st.integers(0, 4)) == 0 else draw(COLUMNS[k][1]))
                for n, k in cols]

    values = {i: row() for i in range(1, draw(st.integers(1, 5)) + 1)}
    live = set(values)
    steps = [("insert", sorted(values))]
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["update", "delete", "insert", "flush"]))
        if op == "update" and live:
            steps.append(("update", draw(st.sampled_from(sorted(live))), row()))
        elif op == "delete" and live:
            k = draw(st.sampled_from(sorted(live)))
            live.discard(k)
            steps.append(("delete", k))
        elif op == "insert":
            k = max(values) + 1
            values[k] = row()
            live.add(k)
            steps.append(("insert", [k]))
        else:
            steps.append(("flush",))
    return cols, nullable, steps, values


def workload_sql(db_name, cols, nullable, steps, values):
    defs = ", ".join(f"`{n}` {COLUMNS[k][0]}{'' if nullable[n] else ' NOT NULL'}" for n, k in cols)
    out = [f"CREATE DATABASE {db_name}", f"USE {db_name}",
           f"CREATE TABLE t (id INT PRIMARY KEY, {defs})", "CREATE TABLE other (id INT PRIMARY KEY)",
           "INSERT INTO other VALUES (1)"]
    for step in steps:
        if step[0] == "insert":
            vals = ", ".join(f"({k}, {', '.join(values[k])})" for k in step[1])
            out.append(f"BEGIN; INSERT INTO t VALUES {vals}; UPDATE other SET id = id + 1; COMMIT")
        elif step[0] == "update":
            sets = ", ".join(f"`{n}` = {v}" for (n, _), v in zip(cols, step[2]))
            out.append(f"UPDATE t SET {sets} WHERE id = {step[1]}")
        elif step[0] == "delete":
            out.append(f"DELETE FROM t WHERE id = {step[1]}")
        else:
            out.append("FLUSH BINARY LOGS")
    return ";\n".join(out) + ";"


_seq = iter(range(1, 10**6))


@settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(w=workloads(), mode=st.sampled_from(["gtid", "position", "tables", "events"]))
def _drawn(server, w, mode):
    cols, nullable, steps, values = w
    name = f"w{next(_seq)}"
    before_file, before_pos = _status(server)
    gtid = _gtid_pos(server)
    server.sql(workload_sql(name, cols, nullable, steps, values))
    settle(server)
    if mode == "gtid":  # MariaDB GTIDs: from the position before the workload
        kw = {"is_mariadb": True, "auto_position": gtid, "only_schemas": [name]}
    elif mode == "position":
        kw = {"resume_stream": True, "log_file": before_file, "log_pos": before_pos}
    elif mode == "tables":
        kw = {"resume_stream": True, "log_file": before_file, "log_pos": before_pos,
              "only_tables": ["t"], "only_schemas": [name], "freeze_schema": True}
    else:
        kw = {"is_mariadb": True, "auto_position": gtid, "annotate_rows_event": True,
              "only_events": ["WriteRowsEvent", "UpdateRowsEvent", "DeleteRowsEvent", "XidEvent",
                              "MariadbGtidEvent"]}
    real, shim = both(server, kw)
    assert f"{name} t" in real or mode == "events"
    assert_same(real, shim)


def test_drawn_tables_and_workloads_print_the_same_through_both(server):
    _drawn(server)


# ---------------------------------------------------------------------------------------------
# fixed scripts

FIXED = """CREATE DATABASE fx; USE fx;
CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(8,2), tags SET('a','b'));
CREATE TABLE skip (id INT PRIMARY KEY);
INSERT INTO items VALUES (1, 'pen', 1.50, 'a'), (2, 'ink', 3.25, '');
INSERT INTO skip VALUES (1);
UPDATE items SET price = price * 2; DELETE FROM items WHERE id = 2;
FLUSH BINARY LOGS;"""
FIXED_LATER = """USE fx; INSERT INTO items VALUES (3, 'pad', 0.99, 'a,b');"""


@pytest.fixture(scope="module")
def fixed(server):
    start = _status(server)
    gtid = _gtid_pos(server)
    server.sql(FIXED)
    time.sleep(1.1)
    later = int(server.sql("SELECT UNIX_TIMESTAMP()").strip())  # for skip_to_timestamp
    server.sql(FIXED_LATER)
    settle(server)
    return start, gtid, later


@pytest.mark.parametrize("kw", [
    {"is_mariadb": True},  # the whole binlog from its first file, non-blocking
    {},  # the current binlog file (SHOW MASTER STATUS) from its start
    {"is_mariadb": True, "only_tables": ["items"], "only_schemas": ["fx"]},
    {"is_mariadb": True, "ignored_tables": ["skip"], "annotate_rows_event": True},
    {"is_mariadb": True, "only_events": ["QueryEvent", "RotateEvent"]},
])
def test_typical_scripts_print_the_same_through_both(server, fixed, kw):
    assert_same(*both(server, kw))


def test_resume_stream_log_file_log_pos_and_mariadb_gtids(server, fixed):
    (file, pos), gtid, later = fixed
    for kw in ({"resume_stream": True, "log_file": file, "log_pos": pos},
               {"is_mariadb": True, "auto_position": gtid},
               {"is_mariadb": True, "auto_position": gtid, "end_log_pos": 10**9}):
        real, shim = both(server, kw)
        assert "fx items" in real and "pad" in real and "pen" in real
        assert_same(real, shim)
    real, shim = both(server, {"is_mariadb": True, "auto_position": gtid, "skip_to_timestamp": later})
    assert "pad" in real and "pen" not in real
    assert_same(real, shim)


def test_with_install_the_script_runs_unchanged(server, fixed):
    kw = {"is_mariadb": True, "only_schemas": ["fx"]}
    real, shim = run(server, kw), run(server, kw, how="install")
    assert_same(real, shim)
    probe = "import binlog_grammar.compat as c; c.install(force=True)\nimport pymysqlreplication\n" \
            "print(pymysqlreplication.__name__)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "binlog_grammar.compat.pymysqlreplication", out.stderr


def test_a_blocking_script_reads_events_as_they_are_written(server, fixed):
    """Both scripts wait at the binlog's end (blocking=True) while the workload runs, read it
    as it is written, across a rotation, and stop at a statement."""
    file, pos = _status(server)
    kw = {"blocking": True, "resume_stream": True, "log_file": file, "log_pos": pos,
          "only_schemas": ["live"]}
    procs = [start(server, kw, how, stop="stop_here", server_id=5000 + i)
             for i, how in enumerate(("real", "shim"))]
    try:
        time.sleep(2)  # both connected, waiting
        assert all(p.poll() is None for p in procs)
        server.sql("CREATE DATABASE live; USE live; CREATE TABLE t (id INT PRIMARY KEY, v TEXT);"
                   "INSERT INTO t VALUES (1, 'a'), (2, 'b'); UPDATE t SET v = 'c';"
                   "FLUSH BINARY LOGS; DELETE FROM t WHERE id = 1; CREATE TABLE stop_here (id INT);")
        real, shim = [finish(p) for p in procs]
    finally:
        for p in procs:  # a script that failed leaves the other one waiting
            if p.poll() is None:
                p.kill()
                p.communicate()
    assert "DeleteRowsEvent" in real and "stop_here" in real and "rotate" in real
    assert_same(real, shim)


def test_the_documented_differences_are_the_only_ones(server):
    """YEAR 0, a negative TIME with a fraction, a zero TIMESTAMP, an empty binary string and a
    BINARY(n) value ending in zero bytes: what
    the server stored through the shim, the library's known misreadings through the library."""
    file, pos = _status(server)
    server.sql("CREATE DATABASE diff; USE diff; SET sql_mode='';"
               "CREATE TABLE t (id INT PRIMARY KEY, y YEAR, tm TIME(2), ts TIMESTAMP NULL, "
               "vb VARBINARY(4), bn BINARY(4));"
               "INSERT INTO t VALUES (1, 0, '-12:34:56.78', '0000-00-00 00:00:00', '', x'0100');")
    settle(server)
    kw = {"resume_stream": True, "log_file": file, "log_pos": pos, "only_schemas": ["diff"]}
    real, shim = both(server, kw)
    assert "* y : 1900" in real and "* y : 0" in shim
    assert "* tm : -1 day, 11:25:03.780000" in real and "* tm : -1 day, 11:25:03.220000" in shim
    assert "* ts : 1970-01-01 00:00:00" in real and "* ts : None (out of datetime2 range)" in shim
    assert "'vb': ''," in real and "'vb': b''," in shim
    assert "'bn': b'\\x01'}" in real and "'bn': b'\\x01\\x00\\x00\\x00'}" in shim
    assert str(-dt.timedelta(hours=12, minutes=34, seconds=56, microseconds=780000)) == \
        "-1 day, 11:25:03.220000"  # -12:34:56.78, as stored
    differing = [(a, b) for a, b in zip(real.splitlines(), shim.splitlines()) if a != b]
    assert len(real.splitlines()) == len(shim.splitlines())
    assert all(re.search(r"\* (y|tm|ts|vb|bn) :|'y': 1900", a) for a, _ in differing), differing


def test_the_readme_server_example_runs_verbatim(server, fixed):
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    block = next(b for b in re.findall(r"```python\n(.*?)```", section, re.S) if "BINLOG_SERVER" in b)
    env = {**os.environ, "BINLOG_SERVER": f"mysql://{USER}:{PASSWORD}@127.0.0.1:{server.port}"}
    out = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, cwd=ROOT,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "c fx items" in out.stdout and "'pad'" in out.stdout


HEARTBEAT_SCRIPT = '''
import os
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.event import HeartbeatLogEvent

MYSQL_SETTINGS = {"host": "127.0.0.1", "port": int(os.environ["PORT"]), "user": os.environ["USER"],
                  "passwd": os.environ["PASSWORD"]}
stream = BinLogStreamReader(connection_settings=MYSQL_SETTINGS, server_id=int(os.environ["SERVER_ID"]),
                            blocking=True, resume_stream=True, log_file=os.environ["LOG_FILE"],
                            log_pos=int(os.environ["LOG_POS"]), slave_heartbeat=1)
beats = 0
for binlogevent in stream:
    print(type(binlogevent).__name__, binlogevent.event_type, binlogevent.packet.log_pos,
          binlogevent.timestamp)
    binlogevent.dump()
    if isinstance(binlogevent, HeartbeatLogEvent):
        print("heartbeat", binlogevent.ident, stream.log_file, stream.log_pos)
        beats += 1
        if beats == 2:
            break
print("at", stream.log_file, stream.log_pos)
stream.close()
'''


def test_an_idle_blocking_stream_yields_heartbeats(server, fixed):
    """python-mysql-replication yields a HeartbeatLogEvent (the binlog's name in `ident`, its end
    in log_pos) when a blocking stream with slave_heartbeat waits on an idle server; the shim
    yields the same events, printed the same."""
    file, pos = _status(server)
    os.environ["LOG_FILE"], os.environ["LOG_POS"] = file, str(pos)
    try:
        real, shim = [run(server, {}, how=how, script=HEARTBEAT_SCRIPT, server_id=6000 + i)
                      for i, how in enumerate(("real", "shim"))]
    finally:
        del os.environ["LOG_FILE"], os.environ["LOG_POS"]
    assert real.count("=== HeartbeatLogEvent ===") == 2, real
    assert f"heartbeat {file} {file} {pos}" in real, real
    assert_same(real, shim)
