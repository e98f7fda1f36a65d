"""dump's replay form (`--base64-output=AUTO`, output/replay.py) against `mariadb-binlog FILE`:
byte for byte on the samples (plain, -v, -vv, -s), on the corpus files mariadb-binlog reads
alike (helpers.paths.REPLAY_IDENTICAL says which, and why the others are left out) and on a real
server's own binlog, and so are its reading form (`-vv --base64-output=DECODE-ROWS`, the same
without BINLOG statements) and its hex dump (`-H`); and as point-in-time recovery: a snapshot
restored on a fresh server plus `dump --start-position P FILES | mariadb` gives every table of
the source. Nothing is normalised in the byte comparisons."""
from __future__ import annotations

import subprocess
import sys

import pytest

from helpers import pitr
from helpers.paths import REPLAY_IDENTICAL, ROOT
from helpers.services import need_mariadb, need_mariadb_binlog

pytestmark = pytest.mark.server

SAMPLES = [ROOT / "samples" / "mariadb-10.11-sample.000001",
           ROOT / "samples" / "mariadb-10.11-sample.000002"]
CORPUS = ROOT.parent / "shared" / "corpus" / "mysql"
IDENTICAL = REPLAY_IDENTICAL


def dump(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", *map(str, args)],
                          capture_output=True, cwd=ROOT)


def mariadb_binlog(*args) -> bytes:
    return subprocess.run(["mariadb-binlog", "--no-defaults", *map(str, args)],
                          capture_output=True, check=True).stdout


@pytest.mark.parametrize("flags", [[], ["-v"], ["-vv"], ["-s"], ["-D"], ["--skip-print-row-count"],
                                   ["--skip-print-row-event-positions", "-v"],
                                   ["--skip-annotate-row-events", "--print-row-count"],
                                   ["--base64-output=decode-rows"],
                                   ["-v", "--base64-output=decode-rows"],
                                   ["-vv", "--base64-output=DECODE-ROWS"],
                                   ["-vv", "-s", "--base64-output=decode-rows"],
                                   ["-H"], ["-H", "-vv", "--base64-output=decode-rows"],
                                   ["--hexdump", "--skip-annotate-row-events"]],
                         ids=["plain", "v", "vv", "s", "D", "no-row-count", "no-positions",
                              "no-annotate", "decode-rows", "v-decode-rows", "vv-decode-rows",
                              "s-decode-rows", "H", "H-decode-rows", "hexdump-no-annotate"])
def test_samples_are_mariadb_binlogs_bytes(flags):
    need_mariadb_binlog()
    for files in ([SAMPLES[0]], [SAMPLES[1]], SAMPLES):
        form = [] if any(f.lower().startswith("--base64-output") for f in flags) \
            else ["--base64-output=AUTO"]
        r = dump(*form, *flags, *files)
        assert r.returncode == 0, r.stderr.decode()
        assert r.stdout == mariadb_binlog(*flags, *files)


@pytest.mark.parametrize("name", IDENTICAL)
def test_corpus_file_is_mariadb_binlogs_bytes(name):
    need_mariadb_binlog()
    path = CORPUS / name
    if not path.exists():
        pytest.skip(f"the shared corpus has no {name}")
    r = dump("--base64-output=auto", path)
    assert r.stdout == mariadb_binlog(path)
    for flags in (["-vv", "--base64-output=decode-rows"], ["-H"]):
        assert dump(*flags, path).stdout == mariadb_binlog(*flags, path), flags


def test_base64_output_is_read_in_any_case():
    a = dump("--base64-output=Auto", SAMPLES[1]).stdout
    assert a == dump("--base64-output=AUTO", SAMPLES[1]).stdout and b"BINLOG '" in a
    assert dump("--base64-output=maybe", SAMPLES[1]).returncode == 2
    d = dump("-vv", "--base64-output=DECODE-ROWS", SAMPLES[1]).stdout
    assert b"BINLOG '" not in d and b"### DELETE FROM" in d


def test_never_refuses_a_row_event_naming_where():
    r = dump("--base64-output=never", SAMPLES[1])
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "TABLE_MAP_EVENT" in err and "--base64-output=NEVER" in err
    assert "BINLOG '" not in r.stdout.decode()


def test_skip_gtids_leaves_out_the_gtid_lines_only():
    r = dump("--base64-output=auto", "--skip-gtids", SAMPLES[0]).stdout.decode()
    assert "gtid_seq_no" not in r and "gtid_domain_id" not in r
    assert r.count("START TRANSACTION") == dump("--base64-output=auto", SAMPLES[0]).stdout \
        .decode().count("START TRANSACTION") > 0


def test_a_servers_own_binlog_is_mariadb_binlogs_bytes():
    need_mariadb()
    need_mariadb_binlog()
    from binlog_grammar.testing import mariadb

    with mariadb.MariaDB(pitr.OPTIONS) as src:
        src.sql(pitr.SETUP)
        r = subprocess.run(src._client(), input=pitr.WORKLOAD.encode("latin1"),
                           capture_output=True)
        assert r.returncode == 0, r.stderr.decode(errors="replace")
        src.sql("FLUSH BINARY LOGS")
        files = [str(p) for p in src.binlogs()]
        for flags in ([], ["-vv"], ["-vv", "--base64-output=decode-rows"], ["-H", "-v"]):
            got = dump(*flags, *files)
            assert got.returncode == 0, got.stderr.decode()
            assert got.stdout == mariadb_binlog(*flags, *files)


def test_point_in_time_recovery_restores_every_table(request):
    """dump --start-position P FILES | mariadb on the restored snapshot (the client under the
    hostile settings of helpers.pitr): every table equals the source's."""
    src, snapshot, name, pos, files, expected = request.getfixturevalue("pitr_source")
    r = dump("--base64-output=auto", "--start-position", f"{name}:{pos}", *files)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    dst = pitr.restored(snapshot)
    try:
        pitr.apply(dst, r.stdout)
        assert pitr.tables(dst) == expected
    finally:
        dst.cleanup()


def test_point_in_time_recovery_of_one_database_is_mariadb_binlogs(request):
    """dump -d pitr1 --start-position P FILES | mariadb restores what mariadb-binlog -d pitr1
    restores, table for table, on two restored snapshots. Both keep a statement by its default
    database (mysqlbinlog's documented -d rule), so the workload's CREATE TABLE pitr1.tz run
    from pitr2 is left out by both, and its rows fail the same way: the client runs on
    (--force) and the two targets must end equal, errors included."""
    src, snapshot, name, pos, files, expected = request.getfixturevalue("pitr_source")
    window = ["-d", "pitr1", "--start-position", str(pos)]  # of the first file, files[0]
    ours = dump(*window, *files)
    assert ours.returncode == 0, ours.stderr.decode(errors="replace")
    got = {}
    for who, script in (("ours", ours.stdout), ("theirs", mariadb_binlog(*window, *files))):
        dst = pitr.restored(snapshot)
        try:
            r = subprocess.run(dst._client() + pitr.HOSTILE_CLIENT + ["--force"], input=script,
                               capture_output=True)
            errors = [line.split(" at line ")[0] for line in r.stderr.decode().splitlines()
                      if line.startswith("ERROR")]
            got[who] = (pitr.tables(dst), errors)
        finally:
            dst.cleanup()
    assert got["ours"] == got["theirs"]
    assert any(k.startswith("pitr1.") for k in got["ours"][0])
    assert got["ours"][1], "the workload has a cross-database statement -d leaves out"

