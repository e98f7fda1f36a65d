"""MariaDB with log_bin_compress=ON writes its statements as QUERY_COMPRESSED_EVENTs (the DDL, the
XA statements: every statement over log_bin_compress_min_len bytes). The transaction grouping of
stats, sql, flashback and filtered dump read their text: it must be the inflated statement (it once
was the compressed bytes, and every one of those commands failed with a Python traceback)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from binlog_grammar.testing import mariadb

from helpers.services import need_mariadb

pytestmark = pytest.mark.server

WORKLOAD = """
CREATE DATABASE d;
CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(100)) ENGINE=InnoDB;
BEGIN; INSERT INTO d.t VALUES (1, REPEAT('x', 50)), (2, 'y'); UPDATE d.t SET v = 'z' WHERE id = 2; COMMIT;
XA START 'x1'; INSERT INTO d.t VALUES (3, 'q'); XA END 'x1'; XA PREPARE 'x1'; XA COMMIT 'x1';
DELETE FROM d.t WHERE id = 1;
FLUSH BINARY LOGS;
"""


@pytest.fixture(scope="module")
def compressed_binlog(tmp_path_factory):
    need_mariadb()
    with mariadb.MariaDB(["--log-bin-compress=ON", "--log-bin-compress-min-len=10",
                          "--binlog-row-metadata=FULL"]) as db:
        db.sql(WORKLOAD)
        out = tmp_path_factory.mktemp("compressed") / "mariadb-bin.000001"
        out.write_bytes(db.binlogs()[0].read_bytes())
    return out


@pytest.mark.parametrize("command", [["stats"], ["sql"], ["flashback"], ["dump", "--format", "text", "--database", "d"],
                                     ["dump", "--format", "jsonl", "--table", "d.t"]])
def test_reading_commands_read_compressed_statements(compressed_binlog, command):
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", *command, str(compressed_binlog)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "Error:" not in r.stderr


def test_sql_of_compressed_transactions_has_every_change(compressed_binlog):
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "sql", str(compressed_binlog)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("INSERT INTO") == 3 and "UPDATE" in r.stdout and "DELETE FROM" in r.stdout
