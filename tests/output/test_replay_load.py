"""LOAD DATA in dump's replay script (output/replay_load.py), judged by mariadb-binlog and a server.

A statement-based LOAD DATA is logged as the file's blocks (BEGIN_LOAD_QUERY, APPEND_BLOCK) and
the statement (EXECUTE_LOAD_QUERY). The script once printed the blocks' headers and nothing
else, so a point-in-time recovery lost every row a LOAD DATA had loaded. Now:
- on the corpus's MySQL 5.6 file, the script and the file it writes are mariadb-binlog's, byte
  for byte, each run given its own empty -l folder (plain, -s, -vv, -D);
- on a server's own binlog (LOCAL and REPLACE loads of bytes that are tabs, quotes, backslashes,
  NUL and not UTF-8), the script piped back after the database is dropped gives the same tables.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from binlog_grammar.output import quoting
from binlog_grammar.testing import mariadb

from helpers.paths import ROOT
from helpers.services import need_mariadb, need_mariadb_binlog

pytestmark = pytest.mark.server

CORPUS_FILE = ROOT.parent / "shared" / "corpus" / "mysql" / "ver_trunk_row_v2.001"

DATA = b"1\tplain\n2\tit's \\\\ a \"quote\"\n3\tcaf\xe9\x00\xff\n4\t\\N\n"
AGAIN = b"2\treplaced\n5\tnew\n"


def dump(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", *map(str, args)],
                          capture_output=True, cwd=ROOT, timeout=120)


@pytest.mark.parametrize("flags", [[], ["-s"], ["-vv"], ["-D"]], ids=["plain", "s", "vv", "D"])
def test_load_data_is_mariadb_binlogs_bytes_and_file(tmp_path, flags):
    need_mariadb_binlog()
    if not CORPUS_FILE.exists():
        pytest.skip("the shared corpus is not beside the checkout")
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    got = dump(*flags, "-l", f"{ours}/", CORPUS_FILE)
    assert got.returncode == 0, got.stderr.decode()
    want = subprocess.run(["mariadb-binlog", "--no-defaults", *flags, "-l", f"{theirs}/",
                           CORPUS_FILE], capture_output=True, check=True).stdout
    assert b"LOAD DATA LOCAL INFILE '" + str(ours).encode() in got.stdout
    assert got.stdout == want.replace(str(theirs).encode(), str(ours).encode())
    names = sorted(p.name for p in ours.iterdir())
    assert names == sorted(p.name for p in theirs.iterdir()) == ["SQL_LOAD_MB-2-0"]
    assert (ours / names[0]).read_bytes() == (theirs / names[0]).read_bytes()


def test_a_replayed_load_data_gives_the_table_back(tmp_path):
    need_mariadb()
    (tmp_path / "a.tsv").write_bytes(DATA)
    (tmp_path / "b.tsv").write_bytes(AGAIN)
    with mariadb.MariaDB(["--binlog-format=STATEMENT", "--local-infile=1"]) as db:
        client = db._client() + ["--local-infile=1"]
        load = ("CREATE DATABASE ld; USE ld; CREATE TABLE t (id INT PRIMARY KEY, v VARBINARY(40));"
                "LOAD DATA LOCAL INFILE " + quoting.string(str(tmp_path / "a.tsv"))
                + " INTO TABLE t; LOAD DATA LOCAL INFILE " + quoting.string(str(tmp_path / "b.tsv"))
                + " REPLACE INTO TABLE t;")
        r = subprocess.run(client, input=load.encode(), capture_output=True)
        assert r.returncode == 0, r.stderr.decode()
        db.sql("FLUSH BINARY LOGS")
        before = db.sql("SELECT id, HEX(v) FROM ld.t ORDER BY id")
        assert before.count("\n") == 5, before
        folder = tmp_path / "load"
        folder.mkdir()
        script = dump("-l", folder, *db.binlogs()[:-1])
        assert script.returncode == 0, script.stderr.decode()
        assert script.stdout.count(b"LOAD DATA LOCAL INFILE '" + str(folder).encode()) == 2
        assert b" REPLACE INTO TABLE" in script.stdout
        db.sql("DROP DATABASE ld")
        r = subprocess.run(client, input=script.stdout, capture_output=True)
        assert r.returncode == 0, r.stderr.decode()
        assert db.sql("SELECT id, HEX(v) FROM ld.t ORDER BY id") == before


def test_a_forged_local_infile_statement_sends_no_file_of_the_client(tmp_path):
    """A replay script runs with --local-infile for the loads it writes: a binlog statement of its
    own holding LOCAL INFILE (which no server logs: it logs the file's blocks) must not make the
    client send one of its files. Forged here in a real binlog, over an INSERT of the same length;
    the script runs it from its hex, which the server refuses, and the client stops there."""
    need_mariadb()
    secret = tmp_path / "secret.tsv"
    secret.write_bytes(b"7\tthe client's secret\n")
    forged = f"LOAD DATA LOCAL INFILE {quoting.string(str(secret))} INTO TABLE ld.t".encode()
    insert = b"INSERT INTO ld.t VALUES (1, '" + b"x" * len(forged) + b"')"
    with mariadb.MariaDB(["--binlog-format=STATEMENT", "--local-infile=1",
                          "--binlog-checksum=NONE"]) as db:
        client = db._client() + ["--local-infile=1"]
        db.sql("CREATE DATABASE ld; CREATE TABLE ld.t (id INT PRIMARY KEY, v VARBINARY(400));"
               + insert.decode() + "; FLUSH BINARY LOGS")
        path = db.binlogs()[0]
        data = path.read_bytes()
        assert data.count(insert) == 1
        copy = tmp_path / path.name
        copy.write_bytes(data.replace(insert, forged.ljust(len(insert))))
        script = dump(copy)
        assert script.returncode == 0, script.stderr.decode()
        assert forged not in script.stdout and b"SIGNAL SQLSTATE" in script.stdout
        db.sql("DROP DATABASE ld")
        r = subprocess.run(client, input=script.stdout, capture_output=True)
        assert r.returncode != 0 and b"(LOCAL INFILE) is not run" in r.stderr, r.stderr
        assert "secret" not in db.sql("SELECT HEX(v) FROM ld.t UNION SELECT 'none'")
        assert db.sql("SELECT COUNT(*) FROM ld.t WHERE id = 7").strip().endswith("0")
