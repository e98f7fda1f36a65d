"""`stats`'s compiled loop (binlog_grammar.native._stats) on MySQL binlogs: transactions a
GTID_LOG_EVENT or ANONYMOUS_GTID opens, a QUERY_EVENT BEGIN continues (its bytes those the Python
path found to be BEGIN: binlog/boundaries.py) and an XID ends are counted in C, and `stats`
prints what `BINLOG_GRAMMAR_BACKEND=python binlog-grammar stats` prints (text, --json, --top,
--jobs 2, exit status and stderr) over the MySQL corpus, a MySQL 8.0 transaction repeated with
GTIDs and with ANONYMOUS_GTIDs, QUERY events the loop must give back (DDL, COMMIT, hostile
statements and status variables) and damaged copies; and the loop counts most transactions."""
import random

import pytest

from binlog_grammar import native
from helpers.mysql_binlog import mysql_file, query_data
from helpers.native import cli_stats, damage, same_stats
from helpers.paths import corpus_files, needs_corpus

pytestmark = pytest.mark.skipif(
    native.unavailable() is not None or native._extension("_stats")[0] is None,
    reason="the compiled extensions are not built")
CORPUS_FILES = corpus_files()


@needs_corpus
@pytest.mark.parametrize("path", CORPUS_FILES, ids=[p.name for p in CORPUS_FILES])
def test_the_mysql_corpus_counts_the_same(path):
    same_stats("--json", "--top", "3", path)


@needs_corpus
@pytest.mark.parametrize("gtid_code", [33, 34], ids=["gtid", "anonymous"])
@pytest.mark.parametrize("opts", [("--json", "--top", "5"), ("--top", "3"), ("--jobs", "2", "--json")],
                         ids=["json", "text", "jobs2"])
def test_repeated_mysql_transactions_are_counted_in_c(tmp_path, counted, gtid_code, opts):
    """200 transactions: the loop counts all but the first ones the Python path reads (before,
    it counted none: it stopped at every MySQL GTID)."""
    path = tmp_path / "tx.000001"
    path.write_bytes(mysql_file(repeat=200, gtid_code=gtid_code))
    _rc, out, _err = same_stats(*opts, path)
    assert counted[0] >= 190, counted[0]
    if "--json" in opts and "--jobs" not in opts:
        gtids = [t["gtid"] for t in out["largest_transactions"]]
        assert all(g is None for g in gtids) if gtid_code == 34 else all(":" in g for g in gtids)


@needs_corpus
def test_statements_the_loop_gives_back_count_the_same(tmp_path):
    """QUERY events after a GTID that are not BEGIN (DDL, COMMIT), BEGINs with odd status
    variables, databases and header flags, and BEGIN's bytes spelled otherwise ("begin", with a
    `;`): the loop opens a MySQL transaction only with bytes the Python path found to be BEGIN."""
    statements = [(query_data(q, db), flags) for q in (b"BEGIN", b"begin", b"BEGIN;", b" BEGIN",
                                                       b"COMMIT", b"CREATE TABLE t (a INT)",
                                                       b"\xff BEGIN", b"XA START 'x'")
                  for db, flags in ((b"test", 0), (b"", 0x8), (b"a\nb", 0))]
    status = query_data(b"BEGIN", status=b"\x01" + bytes(8) + b"\xc8 unknown")
    statements += [(status, 0), (query_data(b"BEGIN", status=b"\x01" + bytes(7)), 0)]
    path = tmp_path / "statements.000001"
    path.write_bytes(mysql_file(statements, repeat=30))
    same_stats("--json", "--top", "40", path)
    for k, (data, _flags) in enumerate(statements):  # in place of the rows transactions' BEGIN
        path = tmp_path / f"in-place-{k}.000001"
        path.write_bytes(mysql_file(repeat=30, begin=data))
        same_stats("--json", "--top", "10", path)


@needs_corpus
def test_damaged_mysql_copies_count_the_same(tmp_path):
    data = mysql_file([(query_data(b"BEGIN"), 0)] * 3, repeat=20)
    rnd = random.Random(2634)
    for k in range(30):
        path = tmp_path / f"damaged-{k}.000001"
        path.write_bytes(data[:1000] + damage(data[1000:], rnd))
        assert cli_stats("c", "--json", path) == cli_stats("python", "--json", path), k
