"""Damaged input is a normal case: bit flips, truncations, bogus lengths and spliced events end in
a clean BinlogError (or a correct result), never another exception, a hang or runaway memory."""
import random
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from binlog_grammar.errors import BinlogError
from binlog_grammar.reader import BinlogFile
from binlog_grammar.verify import verify_file

from conftest import CORPUS, ROOT, corpus_files

SOURCES = [p for p in corpus_files() if p.stat().st_size < 20000] or sorted(
    (ROOT / "samples").glob("mariadb-*"))
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def read_all(path):
    events = 0
    try:
        for _ev in BinlogFile(path):
            events += 1
    except BinlogError as e:
        assert e.offset is not None or "magic" in e.message or e.file
        return events, e
    return events, None


mutation = st.tuples(
    st.sampled_from(SOURCES),
    st.sampled_from(["flip", "truncate", "length", "splice"]),
    st.integers(0, 1 << 30),
    st.integers(0, 1 << 30),
)


@FUZZ
@given(mutation)
def test_mutated_binlogs_fail_cleanly(tmp_path_factory, case):
    src, kind, a, b = case
    data = bytearray(src.read_bytes())
    rnd = random.Random(a ^ b)
    if kind == "flip":
        i = 4 + a % (len(data) - 4)
        data[i] ^= 1 << (b % 8)
    elif kind == "truncate":
        data = data[: 4 + a % (len(data) - 4)]
    elif kind == "length":  # a bogus event_length in some event's header
        pos = 4 + a % (len(data) - 4)
        data[pos:pos + 4] = rnd.choice([b"\xff\xff\xff\xff", b"\x00\x00\x00\x00",
                                        b"\xff\xff\xff\x7f", bytes([rnd.randrange(256)] * 4)])
    else:  # splice bytes from another file
        other = rnd.choice(SOURCES).read_bytes()
        i = 4 + a % (len(data) - 4)
        j = 4 + b % (len(other) - 4)
        data[i:i + 40] = other[j:j + 40]
    path = tmp_path_factory.mktemp("fuzz") / "mutated.000001"
    path.write_bytes(bytes(data))
    tracemalloc.start()
    try:
        read_all(path)
        report = verify_file(path)
        _cur, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * len(data) + (32 << 20)  # no allocation sized by a bogus length field
    assert isinstance(report["errors"], list)


@pytest.mark.skipif(not (CORPUS / "json.binlog.000001").exists(), reason="../shared/corpus is absent")
def test_every_single_bit_flip_in_a_checksummed_event_is_detected(tmp_path):
    """Each of the 8 bits of every byte after the magic number, flipped alone, is caught: by the
    CRC32, or by the framing when the flip hits a length."""
    src = (CORPUS / "json.binlog.000001").read_bytes()
    good = verify_file(CORPUS / "json.binlog.000001")
    assert good["ok"]
    path = tmp_path / "flip.000001"
    rnd = random.Random(7)
    positions = sorted(rnd.sample(range(4, len(src)), 300))
    for pos in positions:
        for bit in range(8):
            data = bytearray(src)
            data[pos] ^= 1 << bit
            path.write_bytes(bytes(data))
            report = verify_file(path)
            assert not report["ok"], (pos, bit)
