"""MySQL 8.3+'s GTID_TAGGED_LOG_EVENT in `stats`' compiled loop: a tagged GTID (its serialized
fields read in C: uuid, gno, tag) opens a transaction as MySQL's GTID_LOG_EVENT does, and the
largest and longest transactions carry `uuid:tag:gno` as binlog.gtid.gtid_of writes it; `stats`
prints what `BINLOG_GRAMMAR_BACKEND=python binlog-grammar stats` prints (text, --json, --top,
--jobs 2) over MySQL 8.0 transactions made 8.4 ones with tagged GTIDs (tests/helpers/
tagged_binlog.py; the corpus has no 8.4 file), over tagged GTIDs the Python path must read
(fields it does not know, out of order, sizes that disagree, hostile tags and uuids) and damaged
copies, and the loop counts the transactions (it stopped at every tagged GTID before)."""
import random

import pytest

from binlog_grammar import native
from helpers.native import damage, same_stats
from helpers.paths import needs_corpus
from helpers.tagged_binlog import hostile_tagged, tagged_body, tagged_file


pytestmark = [pytest.mark.skipif(
    native.unavailable() is not None or native._extension("_stats")[0] is None,
    reason="the compiled extensions are not built"), needs_corpus]


@pytest.mark.parametrize("opts", [("--json", "--top", "5"), ("--top", "3"), ("--jobs", "2", "--json")],
                         ids=["json", "text", "jobs2"])
def test_tagged_transactions_are_counted_in_c(tmp_path, counted, opts):
    path = tmp_path / "tagged.000001"
    path.write_bytes(tagged_file())
    rc, out, _err = same_stats(*opts, path)
    assert rc == 0 and ":t" in str(out)
    if "--jobs" not in opts:
        assert counted[0] >= 110


@pytest.mark.parametrize("name,body", hostile_tagged(), ids=[n for n, _b in hostile_tagged()])
def test_tagged_gtids_the_python_path_reads(tmp_path, name, body):
    good = [tagged_body(g, b"ok") for g in range(1, 5)]
    path = tmp_path / "hostile.000001"
    path.write_bytes(tagged_file(12, good + [body] * 4 + [tagged_body(g, b"ok") for g in range(9, 20)]))
    same_stats("--json", "--top", "4", path)


def test_damaged_tagged_copies(tmp_path):
    rnd = random.Random(26)
    data = tagged_file(8)
    start = data.index(b"8.4.0") + 200
    for k in range(30):
        path = tmp_path / f"damaged{k}.000001"
        path.write_bytes(data[:start] + damage(data[start:], rnd))
        same_stats("--json", "--top", "2", path)
