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
from binlog_grammar.runtime.ints import sv_uint_bytes
from helpers.mysql_binlog import mysql_file
from helpers.native import damage
from helpers.paths import needs_corpus
from helpers.tagged_binlog import as_84, tagged_body

from test_mysql_stats import _same, counted  # noqa: F401 - counted: the fixture

pytestmark = [pytest.mark.skipif(
    native.unavailable() is not None or native._extension("_stats")[0] is None,
    reason="the compiled extensions are not built"), needs_corpus]


def _tags(k):  # tags of every length, so that later transactions are the largest
    return b"t" + bytes(b"abcdefghijklmnopqrstuvwxyz0123_"[j % 31] for j in range(k % 32))[:31]


def _file(n=120, bodies=None):
    if bodies is None:
        bodies = (tagged_body(g, _tags(g)) for g in range(1, 10 ** 6))
    return as_84(mysql_file(repeat=n), iter(bodies))


@pytest.mark.parametrize("opts", [("--json", "--top", "5"), ("--top", "3"), ("--jobs", "2", "--json")],
                         ids=["json", "text", "jobs2"])
def test_tagged_transactions_are_counted_in_c(tmp_path, counted, opts):
    path = tmp_path / "tagged.000001"
    path.write_bytes(_file())
    rc, out, _err = _same(*opts, path)
    assert rc == 0 and ":t" in str(out)
    if "--jobs" not in opts:
        assert counted[0] >= 110


def _hostile():
    sv = sv_uint_bytes
    u = b"".join(sv(b) for b in range(0xa0, 0xb0))
    fields = sv(1) + u + sv(2) + sv(10)
    return [
        ("unknown field", tagged_body(5, extra=sv(12) + sv(7))),
        ("last non-ignorable too high", tagged_body(5, last=20)),
        ("uuid byte over 255", tagged_body(5, fields=sv(1) + sv(300) + u[1:] + sv(2) + sv(10) + sv(3) + sv(1) + b"a")),
        ("out of order", tagged_body(5, fields=sv(2) + sv(10) + sv(1) + u + sv(3) + sv(1) + b"a")),
        ("no tag", tagged_body(5, tag=None)),
        ("upper-case tag", tagged_body(5, tag=b"Blue")),
        ("tag of 33", tagged_body(5, tag=b"x" * 33)),
        ("empty tag", tagged_body(5, tag=b"")),
        ("tag past the end", tagged_body(5, fields=fields + sv(3) + sv(9) + b"abc")),
        ("negative gno", tagged_body(-7)),
        ("largest gno", tagged_body((1 << 63) - 1)),
        ("smallest gno", tagged_body(-(1 << 63))),
        ("wrong size", tagged_body(5)[:1] + sv(3) + tagged_body(5)[2:]),
        ("nine-byte integers", tagged_body(5, fields=sv(1) + b"".join(b"\xff" + bytes([b]) + bytes(7) for b in range(16)) + sv(2) + sv(10) + sv(3) + sv(1) + b"q")),
    ]


@pytest.mark.parametrize("name,body", _hostile(), ids=[n for n, _b in _hostile()])
def test_tagged_gtids_the_python_path_reads(tmp_path, name, body):
    good = [tagged_body(g, b"ok") for g in range(1, 5)]
    path = tmp_path / "hostile.000001"
    path.write_bytes(_file(12, good + [body] * 4 + [tagged_body(g, b"ok") for g in range(9, 20)]))
    _same("--json", "--top", "4", path)


def test_damaged_tagged_copies(tmp_path):
    rnd = random.Random(26)
    data = _file(8)
    start = data.index(b"8.4.0") + 200
    for k in range(30):
        path = tmp_path / f"damaged{k}.000001"
        path.write_bytes(data[:start] + damage(data[start:], rnd))
        _same("--json", "--top", "2", path)
