"""dump's replay form on a real MariaDB 10.11's binlog, against `mariadb-binlog`:

- XA transactions: the GTID event of an XA PREPARE group prints `XA START xid`, the
  XA_PREPARE_LOG_EVENT its `XID = xid` header and `XA PREPARE xid`, the xid as the server
  serializes it (hex of the gtrid and bqual bytes, formatID), byte for byte with mariadb-binlog
  plain, -v, -vv and -s; the script piped into the server (its data dropped, binlog reset) gives
  the same tables back;
- `-d DB`: the same statements and BINLOG blocks as `mariadb-binlog -d DB`, the ANNOTATE_ROWS
  of a statement whose tables were filtered out printed nowhere. Where they differ on purpose:
  mariadb-binlog prints `# at` for every event it skips and keeps a transaction with nothing of
  DB as an empty one (its GTID, START TRANSACTION, COMMIT); dump keeps or drops whole
  transactions and prints only what it keeps.

One server for the module: the workload once, the replay into the same server after it."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from helpers.paths import ROOT
from helpers.services import need_mariadb, need_mariadb_binlog

pytestmark = pytest.mark.server

# an XA PREPARE then COMMIT, one phase, a PREPARE then ROLLBACK, and an xid whose gtrid and bqual
# hold a quote, a backslash and a newline and whose formatID is not 1
WORKLOAD = r"""
CREATE DATABASE xa1;
CREATE TABLE xa1.t (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB;
XA START 'x'; INSERT INTO xa1.t VALUES (1, 'prepared'); XA END 'x'; XA PREPARE 'x';
XA COMMIT 'x';
XA START 'y'; INSERT INTO xa1.t VALUES (2, 'one phase'); XA END 'y'; XA COMMIT 'y' ONE PHASE;
XA START 'z'; INSERT INTO xa1.t VALUES (3, 'rolled back'); XA END 'z'; XA PREPARE 'z';
XA ROLLBACK 'z';
XA START 'q''\\\n', 'b*/q', 7; UPDATE xa1.t SET v = 'updated' WHERE id = 1;
DELETE FROM xa1.t WHERE id = 2; XA END 'q''\\\n', 'b*/q', 7; XA PREPARE 'q''\\\n', 'b*/q', 7;
XA COMMIT 'q''\\\n', 'b*/q', 7;
INSERT INTO xa1.t VALUES (4, 'plain');
CREATE DATABASE d2;
CREATE TABLE d2.t (id INT PRIMARY KEY, v INT);
INSERT INTO d2.t VALUES (1, 1);
USE xa1; INSERT INTO t VALUES (5, 'use xa1'); INSERT INTO d2.t VALUES (2, 2);
BEGIN; INSERT INTO xa1.t VALUES (6, 'mixed'); INSERT INTO d2.t VALUES (3, 3); COMMIT;
USE d2; UPDATE xa1.t SET v = 'from d2' WHERE id = 6; ALTER TABLE d2.t ADD COLUMN w INT;
"""


def dump(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", *map(str, args)],
                          capture_output=True, cwd=ROOT, timeout=120)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    need_mariadb()
    need_mariadb_binlog()
    from binlog_grammar.testing.mariadb import MariaDB

    with MariaDB() as db:
        r = subprocess.run(db._client(), input=WORKLOAD.encode(), capture_output=True)
        assert r.returncode == 0, r.stderr.decode(errors="replace")
        db.sql("FLUSH BINARY LOGS")
        copies = tmp_path_factory.mktemp("binlogs")  # the replay test resets the server's
        files = [shutil.copy(p, copies / p.name) for p in db.binlogs()]
        yield db, [str(p) for p in files]


def _rows(db):
    return db.sql("SELECT id, v FROM xa1.t ORDER BY id")


@pytest.mark.parametrize("flags", [[], ["-v"], ["-vv"], ["-s"], ["-D"]],
                         ids=["plain", "v", "vv", "s", "D"])
def test_xa_transactions_are_mariadb_binlogs_bytes(server, flags):
    db, files = server
    got = dump(*flags, *files)
    assert got.returncode == 0, got.stderr.decode(errors="replace")
    theirs = subprocess.run(["mariadb-binlog", "--no-defaults", *flags, *files],
                            capture_output=True, check=True).stdout
    assert got.stdout == theirs
    assert b"XA START X'78',X'',1/*!*/;\n" in got.stdout
    assert b"XA PREPARE X'71275c0a',X'622a2f71',7\n/*!*/;\n" in got.stdout


def test_xa_script_replayed_gives_the_tables_back(server):
    """... and with -D (--disable-log-bin) the target logs none of it."""
    db, files = server
    script = dump("-D", *files)
    assert script.returncode == 0, script.stderr.decode(errors="replace")
    expected = _rows(db)
    assert expected.split() == "1 updated 4 plain 5 use xa1 6 from d2".split(), expected
    db.sql("DROP DATABASE xa1; DROP DATABASE d2; RESET MASTER")
    logged = db.sql("SHOW MASTER STATUS")
    r = subprocess.run(db._client(), input=script.stdout, capture_output=True)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert _rows(db) == expected
    assert "x" not in db.sql("XA RECOVER")  # nothing left prepared
    assert db.sql("SHOW MASTER STATUS") == logged  # -D: SQL_LOG_BIN=0 while it ran


def _content(text: bytes) -> list:
    """The statements and BINLOG blocks of a script: its lines but comments, session lines,
    transaction and XA boundaries and delimiters (mariadb-binlog -d keeps the GTID and the
    boundaries of a transaction of other databases, and the session lines move to the first
    GTID printed; dump keeps or drops whole transactions)."""
    skip = re.compile(r"#|/\*|SET |START TRANSACTION$|COMMIT|ROLLBACK|BEGIN$|XA |DELIMITER|use |$")
    return [line for line in text.decode("utf-8", "surrogateescape").splitlines()
            if not skip.match(line)]


@pytest.mark.parametrize("db_name", ["xa1", "d2"])
def test_database_option_selects_what_mariadb_binlog_does(server, db_name):
    db, files = server
    got = dump("-d", db_name, *files)
    assert got.returncode == 0, got.stderr.decode(errors="replace")
    theirs = subprocess.run(["mariadb-binlog", "--no-defaults", "-d", db_name, *files],
                            capture_output=True, check=True).stdout
    other = "d2" if db_name == "xa1" else "xa1"
    assert _content(got.stdout) == _content(theirs) and _content(theirs)
    assert f"INSERT INTO {other}.t".encode() not in got.stdout  # its statements' annotations
    assert f"INSERT INTO {db_name}.t".encode() in got.stdout
    # every XA transaction of xa1 ends: its XA COMMIT/ROLLBACK goes with its XA PREPARE
    xa = re.findall(rb"^XA (PREPARE|COMMIT|ROLLBACK) ", got.stdout, re.M)
    assert xa == ([b"PREPARE", b"COMMIT", b"PREPARE", b"ROLLBACK", b"PREPARE", b"COMMIT"]
                  if db_name == "xa1" else [])
