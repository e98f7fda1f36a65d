"""MySQL 8's compressed transactions (TRANSACTION_PAYLOAD_EVENT) in the reading API's batches
(binlog/batch.py's Inner, _rows.payload_events over generated/native/payload.h): the events
inside each payload are inflated and framed in C and made as the batches make theirs, and
open_stream gives exactly what it gives on the Python backend (binlog/payload.py): every event
(its offset the payload's, its extra's payload_offset, header, data, no checksum), every row
change, GTID and table, the damage skipped and the error raised, over repeated payloads, payloads
the Python path must read (tests/native/test_payload_jsonl.py's hostile list) and damaged copies."""
import random

import pytest

from binlog_grammar import native
from binlog_grammar.binlog.batch import FramedEvent
from helpers.native import damage
from helpers.payload_binlog import PAYLOAD, payload_file, repeated
from helpers.paths import CORPUS, needs_corpus

from helpers.payload_binlog import good, hostile, zstd_built
from helpers.native import api_read

pytestmark = [pytest.mark.skipif(native.unavailable() is not None,
                                 reason="the compiled extensions are not built"), needs_corpus]


def _same(path, **kw):
    c, py = api_read(path, "c", **kw), api_read(path, "python", **kw)
    assert c[:3] == py[:3]
    return c


def _inner_framed(path):
    """How many events inside payloads open_stream gave as FramedEvents (framed in C)."""
    from binlog_grammar.binlog.stream import open_stream

    native.select("c")
    try:
        return sum(se.event.inner and type(se.event) is FramedEvent
                   for se in open_stream([path]).events())
    finally:
        native.select(None)


@pytest.mark.parametrize("gtid_code", [33, 34], ids=["gtid", "anonymous"])
def test_repeated_payloads_are_framed_in_c(tmp_path, gtid_code):
    path = tmp_path / "compressed.000001"
    path.write_bytes(repeated(30, rows=3, gtid_code=gtid_code))
    seen, err, _damage, _n = _same(path)
    assert err is None and sum(1 for x in seen if isinstance(x, str)) == 90  # the row changes
    if not zstd_built():
        pytest.skip("built without zstd.h: the payloads are binlog/payload.py's")
    # every payload's 4 events but the first payload's (which shows the file its event types)
    assert _inner_framed(path) == 29 * 4


def test_the_corpus_payload_file_reads_the_same():
    _same(CORPUS / "transaction_compression.000001", raw_rows=True)
    _same(CORPUS / "transaction_compression.000001", verify_checksum=False, skip_damaged=True)


@pytest.mark.parametrize("name,body", hostile(), ids=[n for n, _b in hostile()])
def test_payloads_the_python_path_reads(tmp_path, name, body):
    """Each between payloads framed in C: the same events, changes, errors and damage."""
    path = tmp_path / "hostile.000001"
    path.write_bytes(payload_file([good(0), good(1), body, good(2), good(3)]))
    _same(path, raw_rows=True)
    _same(path, skip_damaged=True, raw_rows=True)


@pytest.mark.parametrize("kw", [{}, {"skip_damaged": True, "raw_rows": True}],
                         ids=["strict", "skip"])
def test_damaged_payload_files_read_the_same(tmp_path, kw):
    rnd = random.Random(34)
    data = payload_file([good(k) for k in range(6)])
    start = data.index(bytes([PAYLOAD]), 150) - 4  # damage past the format events
    for k in range(30):
        path = tmp_path / f"damaged{k}.000001"
        path.write_bytes(data[:start] + damage(data[start:], rnd))
        _same(path, **kw)


def test_mutated_payloads_read_the_same(tmp_path):
    """A bounded share of tools/fuzz_lane.py --form api without the sanitizers: payload files
    mutated inside their payloads (and out), open_stream compared on both backends; most
    mutants still have events framed in C (BINLOG_GRAMMAR_PAYLOAD_FUZZ_MUTANTS for more)."""
    import importlib.util
    import os

    from helpers.paths import ROOT

    spec = importlib.util.spec_from_file_location("fuzz_lane", ROOT / "tools" / "fuzz_lane.py")
    fuzz = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fuzz)
    rnd = random.Random(35)
    pool = [fuzz.payload_like(6, 2), fuzz.payload_like(3, 1)]
    path = tmp_path / "mutant.000001"
    framed = 0
    for k in range(int(os.environ.get("BINLOG_GRAMMAR_PAYLOAD_FUZZ_MUTANTS", "150"))):
        path.write_bytes(fuzz.mutate(pool[k % 2], rnd, pool))
        opts = [o for o, p in (("--no-checksum", 0.5), ("--skip-damaged", 0.25)) if rnd.random() < p]
        fuzz.API_HITS.clear()
        assert fuzz._api(path, "c", opts) == fuzz._api(path, "python", opts), k
        framed += next(iter(fuzz.API_HITS))[1] > 0
    if zstd_built():
        assert framed > 50
