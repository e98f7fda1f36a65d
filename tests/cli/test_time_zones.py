"""Times like mysqlbinlog (issue 28 item 4): event times printed in the local zone (TZ), the
datetime options read in it by MariaDB's rules, --utc for UTC.

- the `#YYMMDD HH:MM:SS` header times of every corpus file mariadb-binlog reads equal its own
  under TZ=Asia/Seoul and America/New_York, on both backends (the compiled lane formats them in C);
- on a real MariaDB's binlog whose events straddle New York's two DST changes of 2027 (the hour
  skipped in March, the hour repeated in November), `--start-datetime`/`--stop-datetime` texts in
  many forms select the events mariadb-binlog selects for the same text and zone; --utc equals
  TZ=UTC;
- drawn datetime texts (Hypothesis, bounded, derandomized) are accepted exactly when the server's
  `CAST(text AS DATETIME(6))` gives a value without a warning (but for a zero month or day, which
  the server's CAST refuses and mariadb-binlog takes), and mean that value; the same texts with a
  time are accepted exactly when mariadb-binlog accepts them;
- garbage is refused with one line.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from binlog_grammar.testing import mariadb
from helpers.paths import corpus_files
from helpers.services import need_mariadb, need_mariadb_binlog

pytestmark = pytest.mark.server

ZONES = ("Asia/Seoul", "America/New_York")
_HEAD = re.compile(r"^# at (\d+)\n#(\d{6}) +(\d?\d):(\d\d):(\d\d) server id", re.M)


def tool(*argv, tz=None, backend=None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if tz:
        env["TZ"] = tz
    if backend:
        env["BINLOG_GRAMMAR_BACKEND"] = backend
    return subprocess.run([sys.executable, "-m", "binlog_grammar", *map(str, argv)],
                          capture_output=True, text=True, env=env)


def theirs(*argv, tz) -> subprocess.CompletedProcess:
    return subprocess.run(["mariadb-binlog", *map(str, argv)], capture_output=True, text=True,
                          env={**os.environ, "TZ": tz})


def header_times(text: str) -> dict:
    """offset -> YYMMDD HH:MM:SS of each event's header line (mysqlbinlog pads the hour with a
    space, this project with a zero; mysqlbinlog prints a TABLE_MAP's `# at` line and its rows
    event's together, so only the second carries a header line there)."""
    return {int(m[1]): f"{m[2]} {int(m[3]):02d}:{m[4]}:{m[5]}" for m in _HEAD.finditer(text)}


def readable_corpus():
    return [p for p in corpus_files()
            if subprocess.run(["mariadb-binlog", str(p)], capture_output=True).returncode == 0]


@pytest.mark.corpus
@pytest.mark.parametrize("tz", ZONES)
def test_header_times_are_mariadb_binlogs(tz):
    need_mariadb_binlog()
    files = readable_corpus()
    if not files:
        pytest.skip("no corpus file that mariadb-binlog reads")
    compared = 0
    for path in files:
        want = header_times(theirs(path, tz=tz).stdout)
        for backend in ("python", "c"):
            r = tool("dump", "-vv", "--base64-output=decode-rows", path, tz=tz, backend=backend)
            if backend == "c" and r.returncode == 2 and "backend" in r.stderr:
                continue  # the compiled backend is not built here
            got = header_times(r.stdout)
            common = set(got) & set(want)
            assert len(common) >= len(want) * 0.8, (path.name, backend)
            assert {o: got[o] for o in common} == {o: want[o] for o in common}, (path.name, backend)
            compared += len(common)
    assert compared > 100


# ---------------------------------------------------------------------------------------------
# a real binlog across New York's DST changes

# the instants (UTC seconds) of the events: around 2027-03-14 07:00 UTC (02:00 EST becomes 03:00
# EDT) and 2027-11-07 06:00 UTC (02:00 EDT becomes 01:00 EST), and a quiet day between; after
# the file's first events, which carry the server's own time
SPRING, FALL = 1805007600, 1825567200
STAMPS = sorted({SPRING + d for d in range(-5400, 5401, 900)} | {SPRING - 1, SPRING}
                | {FALL + d for d in range(-7200, 3601, 900)} | {FALL - 1, FALL, 1811808000})
TEXTS = [
    "2027-03-14 01:30:00", "2027-03-14 1:59:59", "2027-03-14 02:00:00", "2027-03-14 02:30:00",
    "2027-03-14 2:45", "2027-03-14 03:00:00", "2027-03-14T03:15:00", "20270314033000",
    "270314040000", "2027/03/14 04.30.00", "2027-3-14 5:0:0", "2027-11-07 00:30:00",
    "2027-11-07 01:00:00", "2027-11-07 01:15:00", "2027-11-07 01:30:00.999999",
    "2027-11-07 01:59:59", "2027-11-07 02:00:00", "2027-11-07 2:30", "20271107T011500",
    "27-11-07 01.45.00", "2027-11-07 03:00:00", "2027-05-31 20:00:00", "2027-06-01 05:00:00",
    "2027-06-01", "2028-01-01 00:00:00", "1990-01-01 00:00:00",
    # the same instants in Seoul
    "2027-03-14 15:30:00", "2027-03-14 16:00", "2027-03-14 16:45:00", "2027-11-07 13:15:00",
    "2027-11-07 14:00:00", "20271107150000",
]
_DATE_ONLY = {"2027-06-01"}  # mariadb-binlog wants a time; this project takes the midnight


@pytest.fixture(scope="module")
def dst_binlog():
    need_mariadb()
    db = mariadb.MariaDB(["--binlog-row-metadata=FULL", "--default-time-zone=+00:00"])
    try:
        db.start()
        db.sql("CREATE DATABASE z; CREATE TABLE z.t (id INT PRIMARY KEY, at INT) ENGINE=InnoDB;"
               " FLUSH BINARY LOGS;")
        db.sql("".join(f"SET TIMESTAMP={t}; INSERT INTO z.t VALUES ({n}, {t});"
                       for n, t in enumerate(STAMPS)) + "SET TIMESTAMP=DEFAULT; FLUSH BINARY LOGS;")
        yield db.binlogs()[-2]
    finally:
        db.cleanup()


def at_lines(text: str) -> list:
    return [ln for ln in text.splitlines() if ln.startswith("# at ")]


@pytest.mark.parametrize("tz", ZONES)
def test_datetime_window_is_mariadb_binlogs(dst_binlog, tz):
    need_mariadb_binlog()
    whole = len(at_lines(tool("dump", "-vv", "--base64-output=decode-rows", dst_binlog, tz=tz).stdout))
    cut = 0
    for text in TEXTS:
        for option in ("--start-datetime", "--stop-datetime"):
            ours = tool("dump", "-vv", "--base64-output=decode-rows", f"{option}={text}", dst_binlog, tz=tz)
            assert ours.returncode == 0, ours.stderr
            if text in _DATE_ONLY:
                want = theirs(f"{option}={text} 00:00:00", dst_binlog, tz=tz)
            else:
                want = theirs(f"{option}={text}", dst_binlog, tz=tz)
            assert want.returncode == 0, want.stderr
            assert at_lines(ours.stdout) == at_lines(want.stdout), (tz, option, text)
            cut += 0 < len(at_lines(want.stdout)) < whole
    assert cut >= 10  # the windows did cut the file
    got = header_times(tool("dump", "-vv", "--base64-output=decode-rows", dst_binlog, tz=tz).stdout)
    want = header_times(theirs(dst_binlog, tz=tz).stdout)
    assert len(want) > len(STAMPS) and set(want) <= set(got)
    assert {o: got[o] for o in want} == want


def test_utc_option_is_tz_utc(dst_binlog):
    need_mariadb_binlog()
    for text in ("2027-03-14 07:00:00", "2027-11-07 05:30:00"):
        for option in ("--start-datetime", "--stop-datetime"):
            ours = tool("dump", "-vv", "--base64-output=decode-rows", "--utc", f"{option}={text}", dst_binlog, tz="Asia/Seoul")
            want = tool("dump", "-vv", "--base64-output=decode-rows", f"{option}={text}", dst_binlog, tz="UTC")
            assert ours.returncode == 0 and ours.stdout == want.stdout, (option, text)
            assert at_lines(ours.stdout) == at_lines(
                theirs(f"{option}={text}", dst_binlog, tz="UTC").stdout)


def test_garbage_is_refused_with_one_line():
    for text in ("garbage", "2026-02-30 00:00:00", "2026-11-26 25:00:00", "2026-11-26 6:39:30x",
                 "2026-11-26 06:39:30.1234567", "12345-01-01 00:00:00", "11-26"):
        r = tool("stats", "--start-datetime", text, "/nonexistent")
        assert r.returncode == 2, text
        last = r.stderr.strip().splitlines()[-1]
        assert "--start-datetime" in last and "not a date and time" in last and repr(text) in last


# ---------------------------------------------------------------------------------------------
# drawn texts against the server's CAST and mariadb-binlog

def _texts():
    from hypothesis import strategies as st

    def part(lo, hi):
        return st.integers(lo, hi).flatmap(
            lambda n: st.sampled_from([str(n), f"{n:02d}"] if n < 100 else [str(n)]))

    sep = st.sampled_from(list("-/:.#@_,;+*!") + ["-", ":"])
    between = st.sampled_from(["T", " ", "  ", "-", "@", ".", "\t"])
    year = st.one_of(st.integers(1970, 2037).map(str), st.integers(0, 99).map(lambda y: f"{y:02d}"),
                     st.integers(0, 12000).map(str))
    fraction = st.one_of(st.just(""), st.integers(0, 7).flatmap(
        lambda n: st.text("0123456789", min_size=n, max_size=n).map(lambda d: "." + d)))
    tail = st.sampled_from(["", "", " ", "x", " x", ":", "Z"])
    punct = st.tuples(year, sep, part(0, 13), sep, part(0, 32), st.one_of(st.just(None), st.tuples(
        between, part(0, 25), st.one_of(st.just(None), st.tuples(sep, part(0, 61), st.one_of(
            st.just(None), st.tuples(sep, part(0, 61), fraction))))))).map(_join)
    digits = st.tuples(st.integers(1970, 2037), st.integers(1, 12), st.integers(1, 31),
                       st.integers(0, 23), st.integers(0, 59), st.integers(0, 59),
                       st.sampled_from([14, 12, 10, 8, 6, 15]), st.sampled_from(["", "T"])).map(_digits)
    return st.tuples(st.one_of(punct, digits), tail).map("".join)


def _join(t):
    y, s1, mo, s2, d, rest = t
    out = f"{y}{s1}{mo}{s2}{d}"
    if rest:
        b, h, more = rest
        out += f"{b}{h}"
        if more:
            s3, mi, last = more
            out += f"{s3}{mi}"
            if last:
                s4, sec, frac = last
                out += f"{s4}{sec}{frac}"
    return out


def _digits(t):
    y, mo, d, h, mi, s, n, tee = t
    full = f"{y:04d}{mo:02d}{d:02d}{tee}{h:02d}{mi:02d}{s:02d}"
    return full if n == 14 else f"{y % 100:02d}{mo:02d}{d:02d}{h:02d}{mi:02d}{s:02d}"[:n] if n < 14 \
        else full + "1"


@pytest.fixture(scope="module")
def cast_server():
    need_mariadb()
    db = mariadb.MariaDB()
    try:
        db.start()
        yield db
    finally:
        db.cleanup()


def test_drawn_texts_mean_what_the_server_reads(cast_server):
    from hypothesis import HealthCheck, given, settings

    from binlog_grammar.cli.datetimes import LocalText, parse
    from binlog_grammar.replication.connection import Connection

    need_mariadb_binlog()
    cast_server.sql("CREATE DATABASE one; CREATE TABLE one.one (x INT); INSERT INTO one.one VALUES (1);")
    conn = Connection("127.0.0.1", cast_server.port, "root", "").connect()
    sample = [p for p in corpus_files() if p.name == "bug16266.000001"] or []
    seen = {"accepted": 0, "refused": 0}

    @settings(max_examples=300, derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(_texts())
    def check(text):
        # FROM a table: a statement without one leaves the last statement's warnings in place
        _, rows = conn.query(f"SELECT CAST(CONVERT(X'{text.encode().hex()}' USING latin1) "
                             f"AS DATETIME(6)) FROM one.one")
        value = rows[0][0]
        warnings = len(conn.query("SHOW WARNINGS")[1])
        server_ok = value is not None and warnings == 0
        try:
            ours = parse(text)
        except ValueError:
            ours = None
        if isinstance(ours, LocalText):
            got = (f"{ours.year:04d}-{ours.month:02d}-{ours.day:02d} {ours.hour:02d}:"
                   f"{ours.minute:02d}:{ours.second:02d}.{ours.microsecond:06d}")
            if ours.month and ours.day:  # the server's CAST refuses a zero in a date,
                assert server_ok and value.decode() == got, (text, value, warnings)
            elif server_ok:  # which mariadb-binlog (flags 0) takes
                assert value.decode() == got, (text, value)
        elif ours is None:
            assert not server_ok, (text, value)
        seen["accepted" if ours is not None else "refused"] += 1
        if sample and ours is not None and not isinstance(ours, LocalText):
            return  # an ISO offset: this project's extension
        if sample and (ours is None or ours.fields > 3):
            r = subprocess.run(["mariadb-binlog", f"--start-datetime={text}", str(sample[0])],
                               capture_output=True, text=True)
            assert (r.returncode == 0) == (ours is not None), (text, r.stderr)

    try:
        check()
    finally:
        conn.close()
    assert seen["accepted"] >= 30 and seen["refused"] >= 20, seen



def test_stream_prints_local_times_and_takes_utc():
    """`stream` prints dump's text: its times in the local zone too, and --utc as TZ=UTC."""
    need_mariadb()
    with mariadb.MariaDB() as db:
        db.sql("CREATE DATABASE s; CREATE TABLE s.t (id INT); INSERT INTO s.t VALUES (1);")
        base = ["stream", "--host", "127.0.0.1", "--port", db.port, "--user", "root", "--until-now"]
        utc = tool(*base, "--utc", tz="Asia/Seoul")
        assert utc.returncode == 0, utc.stderr
        assert utc.stdout == tool(*base, tz="UTC").stdout
        seoul = tool(*base, tz="Asia/Seoul").stdout
        assert header_times(seoul) and header_times(seoul) != header_times(utc.stdout)
        assert header_times(seoul) == header_times(theirs(*db.binlogs(), tz="Asia/Seoul").stdout) \
            or set(header_times(seoul).values()) <= set(
                header_times(theirs(*db.binlogs(), tz="Asia/Seoul").stdout).values())


@pytest.mark.corpus
def test_json_lines_sql_and_stats_json_do_not_follow_the_zone():
    """JSON lines (both envelopes), sql and stats --json carry UTC whatever TZ says."""
    files = [p for p in corpus_files() if p.name in ("json.binlog.000001", "bug16266.000001")]
    if not files:
        pytest.skip("the corpus is not here")
    for path in files:
        for argv in (("dump", "--format", "jsonl"),
                     ("dump", "--format", "jsonl", "--envelope", "debezium"), ("sql",),
                     ("stats", "--json")):
            outs = {tz: tool(*argv, path, tz=tz) for tz in ("UTC", *ZONES)}
            assert all(r.returncode == outs["UTC"].returncode for r in outs.values())
            assert len({r.stdout for r in outs.values()}) == 1, (path.name, argv)
