"""`dump --print-table-metadata` (issue 28 item 1; output/table_metadata.py) prints the `# Columns(...)`
and `# Primary Key(...)` lines mariadb-binlog prints after each TABLE_MAP: the same lines, in the same
places, in the text and in the replay form, on a real MariaDB's binlog of every column type (FULL and MINIMAL metadata), on one with
charsets, keys and hostile names, and on every corpus file mariadb-binlog reads; on both backends;
a column name cannot end the comment."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from binlog_grammar.testing import mariadb
from helpers.paths import corpus_files
from helpers.services import need_mariadb, need_mariadb_binlog

pytestmark = pytest.mark.server


def dump(*argv, backend=None):
    env = {**os.environ, "TZ": "UTC"}
    if backend:
        env["BINLOG_GRAMMAR_BACKEND"] = backend
    return subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", "--print-table-metadata",
                           *map(str, argv)], capture_output=True, text=True, env=env,
                          encoding="utf-8", errors="surrogateescape")


def theirs(path):
    return subprocess.run(["mariadb-binlog", "--print-table-metadata", str(path)],
                          capture_output=True, text=True, env={**os.environ, "TZ": "UTC"},
                          encoding="utf-8", errors="surrogateescape")


def metadata(text: str) -> list:
    """(the `# at` offset before them, the lines) of each TABLE_MAP's metadata lines."""
    out, at, block = [], None, None
    for ln in text.splitlines():
        if ln.startswith("# at "):
            at = ln
            block = None
        elif ln.startswith("# Columns(") or (block is not None and ln.startswith("#         ")) \
                or ln.startswith("# Primary Key("):
            if block is None:
                block = []
                out.append((at, block))
            block.append(ln)
        else:
            block = None
    return out


def same(path, hostile=()):
    want = theirs(path)
    if want.returncode != 0:
        return None
    got = {}
    for backend in ("python", "c"):
        r = dump(path, backend=backend)
        if backend == "c" and r.returncode == 2 and "backend" in r.stderr:
            continue
        assert r.returncode in (0, 1), r.stderr
        got[backend] = metadata(r.stdout)
    # the replay form (BINLOG blocks), which is mariadb-binlog's own default
    replay = dump("--base64-output=AUTO", path)
    if replay.returncode in (0, 1):
        got["replay"] = metadata(replay.stdout)
    for backend, lines in got.items():
        # a TABLE_MAP of a table with hostile names is compared elsewhere (it is escaped here)
        keep = [b for b in metadata(want.stdout) if not any(h in b[1][0] for h in hostile)]
        assert [b for b in lines if not any(h in b[1][0] for h in hostile)] == keep, (path, backend)
    return len(metadata(want.stdout))


def test_every_column_type(server_binlogs):
    blocks = sum(same(p) or 0 for p in server_binlogs)
    assert blocks >= 10


@pytest.mark.corpus
def test_corpus():
    need_mariadb_binlog()
    blocks = sum(same(p) or 0 for p in corpus_files())
    if blocks == 0:
        pytest.skip("the corpus is not here")
    assert blocks >= 10


def test_charsets_keys_and_names(tmp_path):
    need_mariadb_binlog()
    need_mariadb()
    with mariadb.MariaDB(["--binlog-row-metadata=FULL"]) as db:
        db.sql("CREATE DATABASE m; USE m; "
               "CREATE TABLE t1 (a INT UNSIGNED, b VARCHAR(5) CHARACTER SET utf8mb4, "
               "c CHAR(3) CHARACTER SET ucs2, d TEXT CHARACTER SET latin1 COLLATE latin1_bin, "
               "e VARBINARY(4), f DECIMAL(10,3) UNSIGNED NOT NULL, g BIT(11), h DATETIME(3), "
               "i TIME, j TIMESTAMP(6) NULL, k POINT, l ENUM('ab','c d') CHARACTER SET utf8mb3, "
               "m TINYBLOB, n DOUBLE, o FLOAT UNSIGNED, p YEAR, q BIGINT, r MEDIUMINT UNSIGNED, "
               "PRIMARY KEY (f, c(2))) ENGINE=InnoDB; "
               "INSERT INTO t1 (f, c) VALUES (1.5, 'x'); "
               "CREATE TABLE t2 (x JSON, y INT, z VARCHAR(3)); INSERT INTO t2 VALUES ('[]', 1, 'a'); "
               "CREATE TABLE t3 (`q\n*/ x` INT, r ENUM('a''b','c\\\\d')); INSERT INTO t3 VALUES (1, 'a''b'); "
               "FLUSH BINARY LOGS;")
        path = db.binlogs()[-2]
        assert (same(path, hostile=("`q",)) or 0) >= 3
        out = dump(path).stdout
        assert "# Primary Key(f, c(2))" in out
        # the hostile names stay inside their comment lines, with no `*/`
        block = next(lines for _at, lines in metadata(out) if "Columns(`q" in lines[0])
        assert len(block) == 2 and all(ln.startswith("#") and "*/" not in ln for ln in block)
