"""The reading API on the compiled backend (binlog/batch.py: events framed in batches by the
compiled walk, FramedEvent) gives what it gives on the Python backend: every event (equal, and
alike in repr: header, data, checksum, CRC32 verdict), every row change, GTID and table, the
damage skipped and the error raised (its message and offset), on the samples, the corpus, and
copies of a sample damaged at many places, with and without CRC32 checks and skip_damaged."""
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from binlog_grammar import native
from binlog_grammar.binlog.batch import FramedEvent
from binlog_grammar.binlog.reader import BinlogFile
from helpers.native import api_read, damage
from helpers.paths import ROOT, corpus_files, needs_corpus

pytestmark = pytest.mark.skipif(native.unavailable() is not None,
                                reason="the compiled extensions are not built")
SAMPLES = sorted((ROOT / "samples").glob("*.0000*"))


@pytest.fixture(params=["compiled-loop", "python-loop"])
def loop(request, monkeypatch):
    """The batches' loop compiled (_rows.frame_events), or the Python one (a build without it)."""
    if request.param == "python-loop":
        monkeypatch.delattr(native._load_rows()[0], "frame_events", raising=False)
    return request.param


def _same(path, **kw):
    c, py = api_read(path, "c", **kw), api_read(path, "python", **kw)
    assert c[:3] == py[:3]
    assert py[3] == 0
    return c


def test_the_samples_read_the_same_and_mostly_in_batches(loop):
    events = batched = 0
    for path in SAMPLES:
        seen, err, _damage, n = _same(path)
        assert err is None
        events += sum(1 for x in seen if isinstance(x, tuple))
        batched += n
    assert batched > events // 2  # not vacuous: the batches read most events


def test_a_framed_event_equals_the_event_read_alone():
    path = SAMPLES[0]
    native.select("python")
    try:
        alone = list(BinlogFile(path))
    finally:
        native.select(None)
    framed = list(BinlogFile(path))
    assert any(type(e) is FramedEvent for e in framed)
    assert framed == alone and alone == framed
    assert [repr(e) for e in framed] == [repr(e) for e in alone]
    assert [(e.header, e.checksum, e.extra) for e in framed] == \
        [(e.header, e.checksum, e.extra) for e in alone]


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_the_corpus_reads_the_same(path, loop):
    _same(path, raw_rows=True)
    _same(path, verify_checksum=False, skip_damaged=True, raw_rows=True)


@pytest.mark.parametrize("kw", [{}, {"verify_checksum": False}, {"skip_damaged": True},
                                {"verify_checksum": False, "skip_damaged": True, "raw_rows": True}],
                         ids=["crc32", "no-crc32", "skip", "no-crc32-skip"])
def test_damaged_copies_read_the_same(tmp_path, kw, loop):
    data = SAMPLES[0].read_bytes()
    rnd = random.Random(27)
    for k in range(25):
        path = tmp_path / f"damaged-{k}.000001"
        path.write_bytes(data[:4] + damage(data[4:], rnd))
        _same(path, **kw)


def test_bad_crc32_kept_reads_the_same(tmp_path):
    """verify's reading (keep_bad_crc): an event whose CRC32 does not match comes with
    checksum_ok False on both backends."""
    data = bytearray(SAMPLES[0].read_bytes())
    data[len(data) // 2] ^= 0x10
    path = tmp_path / "bad-crc.000001"
    path.write_bytes(bytes(data))
    out = {}
    for backend in ("c", "python"):
        native.select(backend)
        try:
            out[backend] = [(repr(e), e.checksum_ok)
                            for e in BinlogFile(path, keep_bad_crc=True, skip_damaged=True)]
        finally:
            native.select(None)
    assert out["c"] == out["python"]
    assert any(ok is False for _, ok in out["c"])


def test_the_data_spans_are_what_the_readers_read_whatever_the_bytes():
    """EVENT_DATA_SPANS (codegen.python.data_span) lets the batches leave an event's data to its
    reader's first use: that reader must read any bytes of a length in the span, and refuse a
    length outside it."""
    from binlog_grammar.generated import fast as F
    from binlog_grammar.runtime.fast import FAST_ERRORS

    assert 16 in F.EVENT_DATA_SPANS and 160 in F.EVENT_DATA_SPANS  # XID, ANNOTATE_ROWS
    rnd = random.Random(5)
    ctx = {"header_len": 19, "post_header_len": 0, "checksum_alg": 1, "server": None}
    for code, (least, most) in F.EVENT_DATA_SPANS.items():
        reader = F.EVENT_READERS[code]
        for n in range(least, (most if most is not None else least + 40) + 1):
            for _ in range(20):
                data = bytes(rnd.randrange(256) for _ in range(n))
                reader(data, 0, n, dict(ctx, type_code=code))
        for n in ([least - 1] if least else []) + ([most + 1] if most is not None else []):
            with pytest.raises(FAST_ERRORS):
                reader(bytes(n), 0, n, dict(ctx, type_code=code))


def test_slot_maker_makes_what_init_makes_and_refuses_what_it_cannot_set():
    from binlog_grammar.binlog.stream import StreamEvent

    mod = native._load_rows()[0]
    d = StreamEvent.__dict__
    names = ("event", "table", "gtid", "_decoder", "tx_seq", "_on_undecoded", "_changes",
             "undecoded")
    make = mod.slot_maker(StreamEvent, tuple(d[n] for n in names), (None, None))
    ev = next(iter(BinlogFile(SAMPLES[0])))
    a, b = make(ev, 2, "0-1-2", None, 7, None), StreamEvent(ev, 2, "0-1-2", None, 7, None)
    assert type(a) is StreamEvent
    assert [getattr(a, n) for n in names] == [getattr(b, n) for n in names]
    assert a.changes == [] and repr(a) == repr(b)
    with pytest.raises(TypeError):
        make(1, 2)
    with pytest.raises(TypeError):  # a property is no slot
        mod.slot_maker(FramedEvent, (FramedEvent.header,), ())
    with pytest.raises(TypeError):  # a slot of another class
        mod.slot_maker(StreamEvent, (FramedEvent.__dict__["_head"],), ())
    with pytest.raises(TypeError):  # a class with a __dict__
        mod.slot_maker(type("WithDict", (), {}), (), ())
    partial = mod.slot_maker(StreamEvent, (d["event"],), ())(5)
    with pytest.raises(AttributeError):  # slots it does not name stay unset
        partial.table


@settings(max_examples=600, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([23, 24, 25, 30, 31, 32, 19]), st.sampled_from([8, 6, 10]),
       st.sampled_from([0, 4]), st.integers(0, 0xFF), st.binary(min_size=0, max_size=80),
       st.integers(0, 100))
def test_rows_head_reads_only_what_the_generated_reader_reads(code, phl, crc, count, tail, cut):
    """rows_head() vouches for a rows event: when it reads a head, the generated reader of the
    event's data reads the same bytes without refusing them, and gives the same table id,
    bitmaps and row images (so the batches may leave the data to that reader's first use)."""
    from binlog_grammar.generated import fast as F

    mod = native._load_rows()[0]
    body = (bytes(range(1, 9)) + bytes([count]) + tail)[:cut]  # table id, flags, count, ...
    raw = bytes(19) + body + bytes(crc)
    head = mod.rows_head(raw, 19, phl, crc, code)
    if head is None:
        return
    assert code in (23, 24, 25)
    ctx = {"header_len": 19, "post_header_len": phl, "type_code": code, "checksum_alg": 1,
           "server": None}
    d = F.EVENT_READERS[code](body, 0, len(body), ctx)  # raises if the reader refuses the bytes
    table_id, shape, rows_at = head
    assert d["table_id"] == table_id
    assert F.t_rows_columns(shape, 0, len(shape), {"_index": None}, ctx, None)[0] == d["columns"]
    assert raw[rows_at:len(raw) - crc] == d["rows"]


def test_rows_head_reads_a_plain_rows_event():
    mod = native._load_rows()[0]
    raw = bytes(19) + bytes([7, 0, 0, 0, 0, 0, 1, 0, 3, 0b101, 0b011]) + b"rows" + bytes(4)
    assert mod.rows_head(raw, 19, 8, 4, 24) == (7, bytes([3, 0b101, 0b011]), 30)
    assert mod.rows_head(raw, 19, 8, 4, 23) == (7, bytes([3, 0b101]), 29)
    assert mod.rows_head(raw, 19, 8, 4, 16) is None  # an XID
    assert mod.rows_head(raw[:27] + bytes([251]) + raw[28:], 19, 8, 4, 23) is None
