"""MySQL 8.3+'s GTID_TAGGED_LOG_EVENT in the compiled JSON-lines lane: its data object (the
serialized message's integers, each field as {tag, id, value}: generated/native/payload.h, its
names from the spec) and the records' "gtid" `uuid:tag:gno` written by C; `dump --format jsonl`
prints the same bytes on both backends (--jobs 1 and 2, --rows-only) over 8.4 files of tagged
GTIDs (tests/helpers/tagged_binlog.py), tagged GTIDs the Python path must read and damaged
copies, and the lane writes every tagged GTID (it stopped at each before)."""
import random

import pytest

from binlog_grammar import native
from helpers.native import damage, same_jsonl
from helpers.paths import needs_corpus
from helpers.tagged_binlog import TAGGED, hostile_tagged, tagged_body, tagged_file


pytestmark = [pytest.mark.skipif(
    native.unavailable() is not None or native._extension("_jsonl_lane")[0] is None,
    reason="the compiled extensions are not built"), needs_corpus]


@pytest.mark.parametrize("opts", [(), ("--rows-only",), ("--jobs", "2")], ids=["all", "rows", "jobs2"])
def test_tagged_gtids_are_written_in_c(tmp_path, stops, opts):
    path = tmp_path / "tagged.000001"
    path.write_bytes(tagged_file())
    code, out, _err = same_jsonl(path, *opts)
    assert code == 0 and ":t" in out
    if not opts:
        assert out.count('"GTID_TAGGED_LOG_EVENT"') == 120 and stops.get(TAGGED, 0) == 0


@pytest.mark.parametrize("name,body", hostile_tagged(), ids=[n for n, _b in hostile_tagged()])
def test_tagged_gtids_the_python_path_reads(tmp_path, name, body):
    good = [tagged_body(g, b"ok") for g in range(1, 5)]
    path = tmp_path / "hostile.000001"
    path.write_bytes(tagged_file(12, good + [body] * 4 + [tagged_body(g, b"ok") for g in range(9, 20)]))
    same_jsonl(path)


def test_damaged_tagged_copies(tmp_path):
    rnd = random.Random(27)
    data = tagged_file(8)
    start = data.index(b"8.4.0") + 200
    for k in range(30):
        path = tmp_path / f"damaged{k}.000001"
        path.write_bytes(data[:start] + damage(data[start:], rnd))
        same_jsonl(path)
