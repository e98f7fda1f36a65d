"""`stats` over MySQL 8's compressed transactions (TRANSACTION_PAYLOAD_EVENT): output/stats_fast.py
reads the payload and the events inside it (binlog.payload) where it gave the whole input up
before, and the compiled loop (native._stats) counts payloads it inflates itself; `stats` prints
what `BINLOG_GRAMMAR_BACKEND=python binlog-grammar stats` prints (text, --json, --top, --jobs 2,
exit status and stderr) over repeated transactions, payloads the Python path must read and
damaged copies."""
import random

import pytest

from binlog_grammar import native
from binlog_grammar.output import stats_fast
from helpers.native import damage, same_stats
from helpers.payload_binlog import PAYLOAD, good, hostile, payload_file, repeated, zstd_built
from helpers.paths import needs_corpus


pytestmark = [pytest.mark.skipif(
    native.unavailable() is not None or native._extension("_stats")[0] is None,
    reason="the compiled extensions are not built"), needs_corpus]


@pytest.fixture
def fast(monkeypatch):
    """Whether output/stats_fast.py read each input (False: it gave the input up)."""
    got = []
    real = stats_fast.read

    def read(stream, top=10):
        r = real(stream, top)
        got.append(r is not None)
        return r

    monkeypatch.setattr(stats_fast, "read", read)
    return got


@pytest.mark.parametrize("gtid_code", [33, 34], ids=["gtid", "anonymous"])
@pytest.mark.parametrize("opts", [("--json", "--top", "5"), ("--top", "3"), ("--jobs", "2", "--json")],
                         ids=["json", "text", "jobs2"])
def test_repeated_payloads_are_counted_on_the_fast_path(tmp_path, fast, counted, gtid_code, opts):
    path = tmp_path / "compressed.000001"
    path.write_bytes(repeated(60, rows=3, gtid_code=gtid_code))
    rc, _out, _err = same_stats(*opts, path)
    assert rc == 0
    assert fast[0]  # the c run's (before, a payload file was read by the whole Python path)
    if not zstd_built():
        pytest.skip("built without zstd.h: the payloads are the Python path's")
    if "--jobs" not in opts:  # (the workers' loops count in their own processes)
        # the compiled loop counts all but the first few (whose tables and plans the Python
        # path learns from): it stopped at every payload before
        assert counted[0] >= 55


@pytest.mark.parametrize("name,body", hostile(), ids=[n for n, _b in hostile()])
def test_payloads_the_python_path_reads(tmp_path, name, body):
    path = tmp_path / "hostile.000001"
    path.write_bytes(payload_file([good(0), good(1), body, good(2), good(3)]))
    same_stats("--json", "--top", "3", path)


def test_damaged_payload_files(tmp_path):
    rnd = random.Random(26)
    data = payload_file([good(k) for k in range(6)])
    start = data.index(bytes([PAYLOAD]), 150) - 4
    for k in range(30):
        path = tmp_path / f"damaged{k}.000001"
        path.write_bytes(data[:start] + damage(data[start:], rnd))
        same_stats("--json", "--top", "2", path)


def test_zstd_is_built_where_its_header_is():
    assert zstd_built() == ("TRANSACTION_PAYLOAD_EVENT" in native.jsonl_lane().CODES)
