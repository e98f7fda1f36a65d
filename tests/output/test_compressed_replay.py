"""MariaDB's QUERY_COMPRESSED_EVENT (log_bin_compress) in dump's two forms, judged by mariadb-binlog.

Its statement is zlib data in the binlog. The replay script once printed "# a statement not
decoded as text is not printed" in its place, so a point-in-time recovery from a compressed
binlog lost every DDL statement; the ### text printed only the event's name. Now:
- the replay script of a server's compressed binlog (latin1 bytes that are not UTF-8 in a
  statement, DDL, DML) is mariadb-binlog's, byte for byte but for the one documented difference
  (an ANNOTATE_ROWS comment's bytes that are not UTF-8 written as \\xNN), and piped back into the server after
  the database is dropped it gives the same CHECKSUM TABLE;
- the ### text shows the inflated statement under mariadb-binlog's label, Query_compressed.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from binlog_grammar.testing import mariadb

from helpers.paths import ROOT
from helpers.services import need_mariadb, need_mariadb_binlog

pytestmark = pytest.mark.server

SAMPLE = ROOT / "tests" / "native" / "data" / "mariadb-10.11-compressed.000001"

# sent as latin1 bytes: 0xE9 (é) and 0xFF are not UTF-8 on their own
WORKLOAD = (b"CREATE DATABASE cz CHARACTER SET latin1; USE cz;\n"
            b"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(60), w VARCHAR(60) DEFAULT 'd\xe9f')"
            b" ENGINE=InnoDB;\n"
            b"INSERT INTO t VALUES (1, 'caf\xe9 \xff', DEFAULT), (2, REPEAT('x', 40), 'y');\n"
            b"ALTER TABLE t ADD COLUMN z INT DEFAULT 7, ADD INDEX iv (v);\n"
            b"UPDATE t SET v = 'na\xefve' WHERE id = 2;\n"
            b"SET SESSION binlog_format = STATEMENT;\n"
            b"INSERT INTO t (id, v) VALUES (3, 'r\xe9sum\xe9 statement-based');\n"
            b"RENAME TABLE t TO t2;\n")


def run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "binlog_grammar", *map(str, args)],
                          capture_output=True, cwd=ROOT)


def mariadb_binlog(*args) -> bytes:
    return subprocess.run(["mariadb-binlog", "--no-defaults", *map(str, args)],
                          capture_output=True, check=True).stdout


@pytest.fixture(scope="module")
def server():
    need_mariadb()
    with mariadb.MariaDB(["--log-bin-compress=ON", "--log-bin-compress-min-len=10",
                          "--binlog-row-metadata=FULL"]) as db:
        client = [a.replace("utf8mb4", "latin1") for a in db._client()]
        subprocess.run(client, input=WORKLOAD, capture_output=True, check=True)
        db.sql("FLUSH BINARY LOGS")
        yield db


def test_the_replay_script_of_a_compressed_binlog_is_mariadb_binlogs(server):
    need_mariadb_binlog()
    path = server.binlogs()[0]
    ours = run("dump", path)
    assert ours.returncode == 0, ours.stderr.decode()
    assert b"Query_compressed" in ours.stdout and b"'r\xe9sum\xe9 statement-based'" in ours.stdout
    theirs = mariadb_binlog(path)
    assert ours.stdout.count(b"\n") == theirs.count(b"\n")
    for mine, its in zip(ours.stdout.split(b"\n"), theirs.split(b"\n")):
        if mine != its:  # the one documented difference (docs/mysqlbinlog.md): #Q> escapes
            assert mine.startswith(b"#Q> ") and mine == _escaped(its), (mine, its)


def _escaped(line: bytes) -> bytes:
    """An ANNOTATE_ROWS comment line with its bytes that are not UTF-8 as \\xNN."""
    text = line.decode("utf-8", "surrogateescape")
    return "".join(f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else c
                   for c in text).encode()


def test_the_replay_script_restores_what_the_compressed_binlog_did(server):
    before = server.sql("CHECKSUM TABLE cz.t2; SELECT * FROM cz.t2 ORDER BY id")
    script = run("dump", server.binlogs()[0])
    assert script.returncode == 0, script.stderr.decode()
    server.sql("DROP DATABASE cz")
    r = subprocess.run(server._client(), input=script.stdout, capture_output=True)
    assert r.returncode == 0, r.stderr.decode()
    assert server.sql("CHECKSUM TABLE cz.t2; SELECT * FROM cz.t2 ORDER BY id") == before


def test_the_text_shows_the_inflated_statement():
    need_mariadb_binlog()
    text = run("dump", "-vv", "--base64-output=decode-rows", SAMPLE)
    assert text.returncode == 0, text.stderr.decode()
    theirs = mariadb_binlog("-vv", "--base64-output=decode-rows", SAMPLE)
    for statement in (b"CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(200), b BLOB",
                      b"CREATE TABLE u (a INT, v VARCHAR(40)) ENGINE=InnoDB"):
        assert statement in theirs and statement in text.stdout
    assert text.stdout.count(b"\tQuery_compressed") == theirs.count(b"\tQuery_compressed") == 2
