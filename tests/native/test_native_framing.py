"""The compiled framing walk (generated/native/, binlog_grammar.native) and the Python one
(binlog.framing, the reference) give identical frames, CRC32 verdicts, stops and errors: on
every sample and corpus file, on Hypothesis-drawn event sequences and on mutated files
(truncations, bit flips, huge and tiny lengths); the CRC32 equals zlib's; the generated C is
what the specs give today."""
import zlib

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from binlog_grammar import native
from binlog_grammar.binlog import framing as fr
from binlog_grammar.binlog.header import V1_HEADER_LEN, V4_HEADER_LEN, layout
from binlog_grammar.errors import BinlogError
from helpers.paths import ROOT, corpus_files, needs_corpus

SAMPLES = sorted((ROOT / "samples").iterdir())
built = pytest.mark.skipif(native.unavailable() is not None,
                           reason=f"compiled backend not built: {native.unavailable()}")


def _run(make_iter):
    """(items, error text or None) of an iteration that may raise BinlogError."""
    items = []
    try:
        for x in make_iter():
            items.append(x)
    except BinlogError as e:
        return items, (type(e).__name__, str(e), e.offset, e.event_type)
    return items, None


def _same_file(path):
    for checksums in (None, True, False):
        py = _run(lambda: fr.frames(path, checksums=checksums, backend="python"))
        c = _run(lambda: fr.frames(path, checksums=checksums, backend="c"))
        assert c == py, (path, checksums)
    assert _run(lambda: fr.scan(path, backend="c")) == _run(lambda: fr.scan(path, backend="python"))


@built
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_samples_walk_the_same_on_both_backends(path):
    _same_file(path)


@built
@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_corpus_walks_the_same_on_both_backends(path):
    _same_file(path)


@built
def test_frames_check_the_footers_the_reader_checks():
    from binlog_grammar.binlog.reader import BinlogFile

    path = SAMPLES[0]
    want = [(e.offset, e.checksum_ok) for e in BinlogFile(path, keep_bad_crc=True)]
    got = [(f.offset, f.checksum_ok) for f in fr.frames(path, backend="c")]
    assert got == want and all(ok for _o, ok in got)


@built
@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.binary(max_size=300), st.integers(0, 0xFFFFFFFF))
def test_crc32_is_zlibs(data, start):
    mod = native.framing()
    assert mod.crc32(data) == zlib.crc32(data)
    assert mod.crc32(data, start) == zlib.crc32(data, start)


# ---------------------------------------------------------------------------------------------
# drawn files: events built from the header layout, then damaged

def _event(hl, fields, payload, checksums):
    fmt, names = layout(hl)
    body = payload + (b"\0\0\0\0" if checksums else b"")
    values = dict(fields, event_length=hl + len(body))
    head = fmt.pack(*(values[n] for n in names)) + b"\0" * (hl - fmt.size)
    raw = head + body
    if checksums:
        raw = raw[:-4] + zlib.crc32(raw[:-4]).to_bytes(4, "little")
    return raw


header_fields = st.fixed_dictionaries({
    "timestamp": st.integers(0, 0xFFFFFFFF), "type_code": st.integers(0, 255),
    "server_id": st.integers(0, 0xFFFFFFFF), "log_pos": st.integers(0, 0xFFFFFFFF),
    "flags": st.integers(0, 0xFFFF)})
length_damage = st.tuples(
    st.just("length"), st.integers(0, 40),
    st.one_of(st.sampled_from([0, 1, 0x7FFFFFFF, 0xFFFFFFF0, 0xFFFFFFFF]),
              st.tuples(st.just("hl"), st.integers(-2, 2))))  # the header length -2..+2
damage = st.one_of(
    st.none(), length_damage, length_damage,
    st.tuples(st.just("truncate"), st.integers(0, 1 << 16)),
    st.tuples(st.just("flip"), st.integers(0, 1 << 16), st.integers(0, 7)))


@st.composite
def drawn_files(draw):
    hl = draw(st.sampled_from([V1_HEADER_LEN, V4_HEADER_LEN, V4_HEADER_LEN + 3]))
    checksums = draw(st.booleans())
    events = draw(st.lists(st.tuples(header_fields, st.binary(max_size=60)), max_size=40))
    data = bytearray(b"\xfebin")
    starts = []
    for fields, payload in events:
        starts.append(len(data))
        data += _event(hl, fields, payload, checksums)
    d = draw(damage)
    if d is not None and d[0] == "truncate":
        del data[d[1] % (len(data) + 1):]
    elif d is not None and d[0] == "flip" and len(data) > 4:
        data[4 + d[1] % (len(data) - 4)] ^= 1 << d[2]
    elif d is not None and d[0] == "length" and starts:
        at = starts[d[1] % len(starts)] + 9
        value = hl + d[2][1] if isinstance(d[2], tuple) else d[2]
        data[at:at + 4] = value.to_bytes(4, "little")
    pos = draw(st.sampled_from([4, 4, 4, 4, 0, 1, len(data)]))
    stop = draw(st.sampled_from([None, None, len(data) // 2, len(data) + 10]))
    return bytes(data), hl, checksums, pos, stop, d is None


@built
@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(drawn_files())
def test_drawn_and_damaged_files_walk_the_same(tmp_path, drawn):
    data, hl, checksums, pos, stop, intact = drawn
    path = tmp_path / "drawn.000001"
    path.write_bytes(data)
    for short in (False, True):
        walks = [fr.Walk(path, hl, pos, stop, checksums=checksums, short=short, backend=b)
                 for b in ("python", "c")]
        py, c = (list(w) for w in walks)
        assert c == py
        assert walks[1].stop == walks[0].stop
        if intact and not short and pos == 4 and stop is None:  # every event built, found
            assert walks[0].stop.status == "end"
            assert all(f.checksum_ok is (True if checksums else None) for f in py)


@built
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_length_field_of_a_sample_damaged_walks_the_same(path, tmp_path):
    """Each event's event_length set in turn to the header length -1, +0, +1, to what is left
    of the file -1, +0, +1, and to 0 and 0xFFFFFFFF; a bit flipped in each header byte."""
    data = path.read_bytes()
    events = list(fr.scan(path, backend="python"))
    bad = tmp_path / "bad.000001"
    for at, _code, _length in events:
        variants = []
        for value in (V4_HEADER_LEN - 1, V4_HEADER_LEN, V4_HEADER_LEN + 1, len(data) - at - 1,
                      len(data) - at, len(data) - at + 1, 0, 0xFFFFFFFF):
            variants.append(data[:at + 9] + value.to_bytes(4, "little") + data[at + 13:])
        variants += [data[:at + k] + bytes([data[at + k] ^ 0x80]) + data[at + k + 1:]
                     for k in range(V4_HEADER_LEN)]
        for v in variants:
            bad.write_bytes(v)
            for short in (False, True):
                walks = [fr.Walk(bad, V4_HEADER_LEN, checksums=True, short=short, backend=b)
                         for b in ("python", "c")]
                assert list(walks[1]) == list(walks[0]) and walks[1].stop == walks[0].stop, at


@built
def test_batches_join_where_the_records_fill(monkeypatch, tmp_path):
    path = SAMPLES[0]
    whole = list(fr.frames(path, backend="c"))
    monkeypatch.setattr(fr, "BATCH", 3)
    assert list(fr.frames(path, backend="c")) == whole


@built
def test_a_huge_length_is_reported_at_its_event_on_both_backends(tmp_path):
    data = bytearray(SAMPLES[0].read_bytes())
    second = list(fr.scan(SAMPLES[0]))[1][0]
    data[second + 9:second + 13] = (0xFFFFFFF0).to_bytes(4, "little")
    bad = tmp_path / "bad.000001"
    bad.write_bytes(bytes(data))
    errors = [_run(lambda: fr.scan(bad, backend=b))[1] for b in ("python", "c")]
    assert errors[0] == errors[1]
    assert errors[0][2] == second and "event_length 4294967280 does not fit" in errors[0][1]


@built
def test_the_split_planner_cuts_the_same_on_both_backends(monkeypatch):
    from binlog_grammar.spark.split import scan_file

    out = {}
    for b in ("python", "c"):
        monkeypatch.setenv(native.ENV, b)
        out[b] = [scan_file(str(p), split_bytes=500) for p in SAMPLES]
    assert out["c"] == out["python"]
    assert any(len(s.cuts) > 1 for s in out["c"])


def test_the_generated_c_is_what_the_specs_give():
    """generate --check's rule for the C: a fresh render equals generated/native/ byte for byte."""
    from binlog_grammar.codegen import c
    from binlog_grammar.lang.loader import load_specs

    files = c.render(load_specs())
    committed = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "generated" / "native").iterdir()
                 if p.suffix in (".c", ".h")}
    assert {k: v if v.endswith("\n") else v + "\n" for k, v in files.items()} == committed


def test_generated_offsets_are_the_specs():
    """No 13/19/4 typed into the templates: the layouts' lengths and offsets are the Python
    side's (binlog.header), from the same spec."""
    from binlog_grammar.codegen import c
    from binlog_grammar.lang.loader import load_specs
    from binlog_grammar.binlog.header import offsets

    lays = {lay["header_len"]: lay for lay in c.layouts(load_specs())}
    assert set(lays) == {V4_HEADER_LEN, V1_HEADER_LEN}
    for hl, lay in lays.items():
        assert {f["id"]: f["at"] for f in lay["fields"]} == {k: v[0] for k, v in offsets(hl).items()}
