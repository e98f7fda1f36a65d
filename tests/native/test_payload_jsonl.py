"""MySQL 8's compressed transactions (TRANSACTION_PAYLOAD_EVENT) in the compiled JSON-lines lane
(binlog_grammar.native._jsonl_lane, generated/native/payload.h): the payload's record (its header's
entries by name, its bytes in base64) and the records of the events inside it (inflated by
libzstd, each with the payload's position and "inner": true) written by C; `dump --format jsonl`
prints the same bytes on both backends (--jobs 1 and 2, --rows-only) over repeated transactions
each with its own values, payloads the Python path must read (headers it reads otherwise, frames
cut, followed by bytes, lying about their size, inner events cut short or a GTID inside) and
damaged copies; and the lane writes every payload but the first (before, it stopped at each)."""
import random

import pytest

from binlog_grammar import native
from helpers.native import damage, same_jsonl
from helpers.payload_binlog import PAYLOAD, good, hostile, payload_file, repeated, zstd_built
from helpers.paths import needs_corpus


pytestmark = [pytest.mark.skipif(
    native.unavailable() is not None or native._extension("_jsonl_lane")[0] is None,
    reason="the compiled extensions are not built"), needs_corpus]
JSONL = ("--format", "jsonl")


@pytest.mark.parametrize("gtid_code", [33, 34], ids=["gtid", "anonymous"])
@pytest.mark.parametrize("opts", [(), ("--rows-only",), ("--jobs", "2")], ids=["all", "rows", "jobs2"])
def test_repeated_payloads_are_written_in_c(tmp_path, stops, gtid_code, opts):
    path = tmp_path / "compressed.000001"
    path.write_bytes(repeated(40, rows=3, gtid_code=gtid_code))
    code, out, _err = same_jsonl(path, *opts)
    assert code == 0 and out.count('"TRANSACTION_PAYLOAD_EVENT"') == (0 if "--rows-only" in opts else 40)
    if not zstd_built():
        pytest.skip("built without zstd.h: the payloads are the Python path's")
    if opts == ("--jobs", "2"):
        return  # each worker learns the tables from its own first payload
    # the first payload is the Python path's (its table and plan are learned from it)
    assert stops.get(PAYLOAD, 0) == 1


@pytest.mark.parametrize("name,body", hostile(), ids=[n for n, _b in hostile()])
def test_payloads_the_python_path_reads(tmp_path, name, body):
    """Each between payloads the lane writes: the same bytes, exit status and errors."""
    path = tmp_path / "hostile.000001"
    path.write_bytes(payload_file([good(0), good(1), body, good(2), good(3)]))
    same_jsonl(path)
    same_jsonl(path, "--rows-only")


def test_damaged_payload_files(tmp_path):
    rnd = random.Random(26)
    data = payload_file([good(k) for k in range(6)])
    start = data.index(bytes([PAYLOAD]), 150) - 4  # damage past the format events
    for k in range(40):
        path = tmp_path / f"damaged{k}.000001"
        path.write_bytes(data[:start] + damage(data[start:], rnd))
        same_jsonl(path)
