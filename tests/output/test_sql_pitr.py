"""Point-in-time recovery with `sql` (issue 28): a `mariadb-dump` snapshot at a binlog position,
a workload of DDL and DML over several databases, the snapshot restored on a second, fresh server,
then `binlog-grammar sql --start-position P FILES | mariadb` applied there: every table equals the
source's (the same tables, the same SHOW CREATE TABLE, the same CHECKSUM TABLE), as it does with
`mariadb-binlog FILES | mariadb`, which the test applies to a third server as the baseline.

The workload runs its statements under session settings that change how a server reads or runs
them, each of which the script must carry (output/sql_statements.py): default databases and
unqualified names, ANSI_QUOTES and NO_BACKSLASH_ESCAPES in sql_mode, a session time zone and a
TIMESTAMP default literal, the time of an ALTER that fills a new column with CURRENT_TIMESTAMP(6)
(SET TIMESTAMP with the logged microseconds), foreign_key_checks off for a table that references one made later,
auto_increment_increment/offset, a latin1 connection, explicit_defaults_for_timestamp off, a
stored procedure whose body holds `;` (the DELIMITER form), a statement holding a backslash
command outside strings in a comment-free form the client cannot read (the hex form), RENAME,
DROP, indexes, and row changes before and after each DDL. The applying client runs with the
settings that would break a naive script (another character set, NO_BACKSLASH_ESCAPES).
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from helpers.paths import ROOT
from helpers.pitr import apply, restored, tables

pytestmark = pytest.mark.server


def test_sql_restores_every_table(pitr_source):
    src, snapshot, name, pos, files, expected = pitr_source
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "sql", "--start-position",
                        f"{name}:{pos}", *files], capture_output=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert b"-- not replayed" not in r.stdout
    dst = restored(snapshot)
    try:
        apply(dst, r.stdout)
        assert tables(dst) == expected
    finally:
        dst.cleanup()


def test_mariadb_binlog_restores_them_too(pitr_source):
    """The baseline: what mariadb-binlog does with the same snapshot and files."""
    src, snapshot, name, pos, files, expected = pitr_source
    r = subprocess.run(["mariadb-binlog", "--no-defaults", f"--start-position={pos}", files[0]],
                       capture_output=True, check=True)
    rest = [subprocess.run(["mariadb-binlog", "--no-defaults", f], capture_output=True,
                           check=True).stdout for f in files[1:]]
    dst = restored(snapshot)
    try:
        apply(dst, r.stdout + b"".join(rest))
        assert tables(dst) == expected
    finally:
        dst.cleanup()
