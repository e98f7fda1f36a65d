"""User variables in dump's replay script (USER_VAR_EVENT), judged by mariadb-binlog and a server.

A statement-based binlog logs each user variable a statement reads as a USER_VAR_EVENT before it.
The script once wrote a DECIMAL one as a comment, so the replayed statement read NULL where the
source read the number. Every kind (DECIMAL at its widest and smallest, REAL, signed and unsigned
INT, a string with its charset and collation, NULL) is now written as mariadb-binlog writes it,
byte for byte, and the script piped back after the database is dropped gives the same table.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from binlog_grammar.testing import mariadb

from helpers.paths import ROOT
from helpers.services import need_mariadb, need_mariadb_binlog

pytestmark = pytest.mark.server

WORKLOAD = """CREATE DATABASE u; USE u;
CREATE TABLE t (id INT PRIMARY KEY, a DECIMAL(65,30), b DOUBLE, c BIGINT UNSIGNED,
                d VARCHAR(20) CHARACTER SET latin1, e BIGINT);
SET @d = 1.25, @w = -12345678901234567890123456789012345.123456789012345678901234567890,
    @tiny = 0.0000001, @zero = 0.000, @b = 2.5e10, @c = 18446744073709551615,
    @s = _latin1 'x''y\\\\', @e = -5, @z = NULL;
INSERT INTO t VALUES (1, @d, @b, @c, @s, @e);
INSERT INTO t VALUES (2, @w, @z, @z, @z, @z);
INSERT INTO t VALUES (3, @tiny, @zero, 0, '', 0);
INSERT INTO t VALUES (4, @zero + @d, NULL, NULL, NULL, NULL);
"""


def test_user_variables_are_mariadb_binlogs_and_replay():
    need_mariadb()
    need_mariadb_binlog()
    with mariadb.MariaDB(["--binlog-format=STATEMENT"]) as db:
        db.sql(WORKLOAD)
        db.sql("FLUSH BINARY LOGS")
        path = db.binlogs()[0]
        before = db.sql("SELECT * FROM u.t ORDER BY id")
        ours = subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", str(path)],
                              capture_output=True, cwd=ROOT, timeout=120)
        assert ours.returncode == 0, ours.stderr.decode()
        theirs = subprocess.run(["mariadb-binlog", "--no-defaults", str(path)],
                                capture_output=True, check=True).stdout
        assert b"SET @`w`:=-12345678901234567890123456789012345.1234567890" in ours.stdout
        assert ours.stdout == theirs
        db.sql("DROP DATABASE u")
        r = subprocess.run(db._client(), input=ours.stdout, capture_output=True)
        assert r.returncode == 0, r.stderr.decode()
        assert db.sql("SELECT * FROM u.t ORDER BY id") == before
