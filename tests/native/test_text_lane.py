"""The compiled text lane of `dump` (output/text_lane.py, binlog_grammar.native._lane) writes what
the Python path writes: on the samples (where it writes most events, so this is not vacuous), on
the corpus (tests/native/test_rows.py runs `dump` on both backends), and on copies of a sample
damaged at many places, with and without CRC32 checks, where whatever the Python path prints and
says (its error, its exit status) must come out the same."""
import random

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from binlog_grammar import native
from binlog_grammar.binlog.stream import open_stream
from binlog_grammar.output.text_lane import TextLane
from helpers.native import cli_dump, lane_counts
from helpers.paths import ROOT

LANE = native._load_lane()[0]
pytestmark = pytest.mark.skipif(LANE is None or native.unavailable() is not None,
                                reason="the compiled extensions are not built")
SAMPLE = ROOT / "samples" / "mariadb-10.11-sample.000001"


def test_the_lane_writes_most_events_of_a_sample():
    s = open_stream([SAMPLE])
    s.lane = TextLane(LANE)
    written, python = lane_counts(s)
    assert written > python > 0


def test_the_lane_and_python_print_the_same_sample():
    assert cli_dump(SAMPLE, "c") == cli_dump(SAMPLE, "python")


@pytest.mark.parametrize("opts", [(), ("--no-checksum",)], ids=["crc32", "no-crc32"])
def test_damaged_copies_print_the_same(tmp_path, opts):
    data = SAMPLE.read_bytes()
    rnd = random.Random(26)
    for k in range(30):
        bad = bytearray(data)
        at = rnd.randrange(4, len(bad))
        bad[at] ^= 1 << rnd.randrange(8)
        path = tmp_path / f"damaged-{k}.000001"
        path.write_bytes(bytes(bad))
        c, py = cli_dump(path, "c", *opts), cli_dump(path, "python", *opts)
        assert c == py, (k, at)


def _patched(data: bytes, table_id: int, flags: int) -> bytes:
    """The sample with every TABLE_MAP and rows event given `table_id`, and every rows event
    `flags`, their CRC32s made again (so the bytes reach the lane's parsing of both)."""
    import zlib

    from binlog_grammar.binlog.framing import scan
    from binlog_grammar.generated.catalog import EVENTS

    out = bytearray(data)
    for pos, code, length in scan(SAMPLE):
        et = EVENTS.get(code)
        if et is None or not (et.name == "TABLE_MAP_EVENT" or et.row_op):
            continue
        body = pos + 19
        out[body:body + 6] = table_id.to_bytes(6, "little")
        if et.row_op:
            out[body + 6:body + 8] = flags.to_bytes(2, "little")
        end = pos + length
        out[end - 4:end] = zlib.crc32(bytes(out[pos:end - 4])).to_bytes(4, "little")
    return bytes(out)


@pytest.mark.parametrize("table_id,flags", [(2 ** 48 - 1, 0x9F), (7, 0x9F), (2 ** 48 - 1, 0xFFFF)])
def test_long_header_lines_print_the_same(tmp_path, table_id, flags):
    """Every rows flag with a name, a table id of 15 digits: a header line longer than the lane's
    first summary buffer held (it wrote past it), and unnamed flags, which the Python path writes."""
    path = tmp_path / "patched.000001"
    path.write_bytes(_patched(SAMPLE.read_bytes(), table_id, flags))
    c, py = cli_dump(path, "c"), cli_dump(path, "python")
    assert c == py
    assert c[0] == 0 and "flags: STMT_END_F NO_FOREIGN_KEY_CHECKS_F" in c[1]


def _with_statements(data: bytes, queries) -> bytes:
    """The sample's first events (to its first GTID_EVENT, which the Python path reads) followed
    by one ANNOTATE_ROWS_EVENT per query (a copy of the sample's first, its query replaced, its
    length, log_pos and CRC32 made again)."""
    import zlib

    from binlog_grammar.binlog.framing import scan
    from binlog_grammar.generated.catalog import EVENTS

    events = list(scan(SAMPLE))
    gtid = next(e for e in events if EVENTS[e[1]].name == "GTID_EVENT")
    ann = next(e for e in events if EVENTS[e[1]].name == "ANNOTATE_ROWS_EVENT")
    out = bytearray(data[:gtid[0] + gtid[2]])
    head = data[ann[0]:ann[0] + 19]
    for q in queries:
        length = 19 + len(q) + 4
        ev = bytearray(head) + q
        ev[9:13] = length.to_bytes(4, "little")
        ev[13:17] = (len(out) + length).to_bytes(4, "little")
        out += ev + zlib.crc32(bytes(ev)).to_bytes(4, "little")
    return bytes(out)


# statements of plain words with now and then one mark the comment quoting rewrites (or a
# control, a byte that is not UTF-8, a C1 control in UTF-8, U+2028): one such byte is what the
# lane's plain test must see
_SPECIAL = [b"/*", b"*/", b"\\", b"\n", b"\r", b"\t", b"\x00", b"\x1b", b"\x7f", b"\xc2\x85",
            b"\xe2\x80\xa8", b"\xff", b"/", b"*"]
_QUERY_BYTES = st.lists(st.one_of(
    st.sampled_from([b"SELECT", b" ", b"a", b"'x'", b'"y"', b"`t`", b"#", b"1", b"-- c"]),
    st.sampled_from(_SPECIAL)), max_size=8).map(b"".join)


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(_QUERY_BYTES, min_size=1, max_size=6))
@example([b"x\\y", b"a/*b", b"a*/b", b"tab\there", b"a/b*c", b""])
def test_statements_of_annotate_rows_print_the_same(tmp_path, queries):
    """The lane writes an ANNOTATE_ROWS statement only when comment quoting leaves it as it is
    (bg_lane_plain): on drawn statements full of comment marks, line breaks, controls and bytes
    that are not UTF-8, both backends print the same."""
    path = tmp_path / "annotate.000001"
    path.write_bytes(_with_statements(SAMPLE.read_bytes(), queries))
    assert cli_dump(path, "c") == cli_dump(path, "python")


def _lane(plain=None, pairs=None, verify=True):
    """A native._lane.Lane for MariaDB's format, with text_lane's labels and flag names."""
    from binlog_grammar.output import text_lane

    p, q = text_lane.comment_plain()
    phl = bytearray(256)
    phl[19], phl[162] = 8, 19
    for code in (23, 24, 25):
        phl[code] = 8
    for code in (30, 31, 32):
        phl[code] = 10
    labels = [None] * 256
    labels[160], labels[162], labels[16] = b"Annotate_rows:", b"GTID", b"Xid"
    return LANE.Lane(bytes(phl), bytes([4]) * 256, tuple(labels), text_lane._FLAGS,
                     p if plain is None else plain, q if pairs is None else pairs, verify)


def _event(code: int, data: bytes, at: int = 4) -> bytes:
    """An event at offset `at` with its end_log_pos and CRC32 right."""
    import zlib

    n = 19 + len(data) + 4
    ev = (1764148837).to_bytes(4, "little") + bytes([code]) + (1).to_bytes(4, "little") + \
        n.to_bytes(4, "little") + (at + n).to_bytes(4, "little") + b"\0\0" + data
    return ev + zlib.crc32(ev).to_bytes(4, "little")


def _annotate_written(lane, statement: bytes) -> bool:
    ev = _event(160, statement)
    text, end = lane.text(ev, 4, 4, 4 + len(ev), 1 << 18)[:2]
    assert (end == 4 + len(ev)) == bool(text)
    return end > 4


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.text(st.sampled_from(list("ab #'\"`\\/*\t\n-;") + ["\x01", "\x7f", "\u0085", "\xe9"]),
               max_size=12))
def test_the_lanes_plain_test_is_quoting_comments(s):
    """The C writes an ANNOTATE_ROWS statement itself exactly when output/quoting.comment leaves
    it as it is (and it is ASCII): the set it tests is read from quoting.comment, not a copy."""
    from binlog_grammar.output import quoting

    raw = s.encode("utf-8")
    assert _annotate_written(_lane(), raw) == (s.isascii() and quoting.comment(s) == s)


def test_the_lane_follows_a_change_of_quoting_comments_unsafe_set(monkeypatch):
    """A character quoting.comment starts to rewrite ('#' here) is one the lane no longer writes
    itself: before, the lane's C held its own copy of the set, which would have written it."""
    from binlog_grammar.output import quoting, text_lane

    assert _annotate_written(_lane(), b"SELECT 1 # x")
    real = quoting.comment
    monkeypatch.setattr(quoting, "comment", lambda t: real(t).replace("#", "\\x23"))
    text_lane.comment_plain.cache_clear()
    try:
        assert not _annotate_written(_lane(), b"SELECT 1 # x")
        assert _annotate_written(_lane(), b"SELECT 1")
    finally:
        monkeypatch.undo()
        text_lane.comment_plain.cache_clear()


def _gtid(flags2: int, rest: bytes = b"") -> bytes:
    return _event(162, (5).to_bytes(8, "little") + (0).to_bytes(4, "little") + bytes([flags2]) +
                  rest + bytes(max(0, 6 - len(rest))))


@pytest.mark.parametrize("flags2,rest,written", [
    (0x00, b"", True), (0x02, (7).to_bytes(8, "little"), True), (0x02, b"", False),
    (0x40, b"", False), (0x80, b"", False), (0x01 | 0x04 | 0x08, b"", True)])
def test_gtid_flags(flags2, rest, written):
    """flags2's commit id (FL_GROUP_COMMIT_ID: 8 bytes after flags2) and XA xid (FL_PREPARED_XA,
    FL_COMPLETED_XA: the Python path's), as gtid.yaml's body says: a commit id announced but
    cut short is a damaged event the Python path reports."""
    ev = _gtid(flags2, rest)
    text, end = _lane().text(ev, 4, 4, 4 + len(ev), 1 << 18)[:2]
    assert (end > 4) == written, text
    if written:
        assert "GTID 0-1-5" in text


def test_the_gtid_flag_bits_come_from_the_spec():
    """codegen/c_lane.py reads which flags2 bits announce the commit id and the xid from the
    conditions of gtid.yaml's body fields (the C had them as 0x02 and 0xc0 by hand): a spec that
    says other bits gives other C, one whose condition is no flags test is refused."""
    import dataclasses

    from binlog_grammar.codegen import c_lane
    from binlog_grammar.errors import SpecError
    from binlog_grammar.lang.loader import load_specs

    specs = load_specs()
    m = c_lane.model(specs)
    assert (m["gtid_commit_id_mask"], m["gtid_xid_mask"]) == ("0x02", "0xc0")
    assert m["gtid_xid_flags"] == "FL_PREPARED_XA | FL_COMPLETED_XA"
    ed, _ = specs.event_by_name("GTID_EVENT")
    i = next(k for k, f in enumerate(ed.fields) if f.id == "commit_id")
    cond = ("bin", "!=", ("bin", "&", ("name", "flags2"), ("num", 0x10)), ("num", 0))
    ed.fields[i] = dataclasses.replace(ed.fields[i], cond=cond)
    lane_c = c_lane.render(specs)["lanes.h"]  # the GTID checks the compiled loops share
    assert "flags2 & 0x10" in lane_c and "flags2 & 0x02" not in lane_c
    ed.fields[i] = dataclasses.replace(ed.fields[i], cond=("bin", ">=", ("name", "remaining"),
                                                           ("num", 8)))
    with pytest.raises(SpecError):
        c_lane.model(specs)


def test_the_lane_writes_without_the_gil():
    """Lane.text releases the GIL while its C core writes: another thread runs meanwhile."""
    import sys
    import threading
    import time
    import zlib

    from binlog_grammar.binlog.framing import scan

    data = SAMPLE.read_bytes()
    s = open_stream([SAMPLE])
    tl = s.lane = TextLane(LANE)
    for _ in s.events():
        pass
    # the sample's GTIDs and XIDs, over and over (about 16 MB): the lane writes them all
    evs = [data[p:p + n] for p, _c, n in scan(SAMPLE) if data[p + 4] in (16, 162)]
    buf, at = bytearray(), 4
    while len(buf) < 16 << 20:
        for ev in evs:
            ev = bytearray(ev)
            ev[13:17] = (at + len(ev)).to_bytes(4, "little")
            ev[-4:] = zlib.crc32(bytes(ev[:-4])).to_bytes(4, "little")
            buf += ev
            at += len(ev)
    lane, ticks, span, done = tl.cfg, [], [], threading.Event()
    data = bytes(buf)

    def run():
        t0 = time.perf_counter()
        lane.text(data, 4, 4, 4 + len(data), 1 << 30)
        span[:] = [t0, time.perf_counter()]
        done.set()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    try:
        t = threading.Thread(target=run)
        t.start()
        while not done.is_set():
            ticks.append(time.perf_counter())
        t.join()
    finally:
        sys.setswitchinterval(interval)
    t0, t1 = span
    assert t1 - t0 > 0.03, "too short a run to tell"
    # held, the GIL would give the main thread no tick while the C writes (the first part of
    # the call; the text's conversion to str after it holds the GIL): at most a switch
    # interval's worth around the call's start. The first half of the call must have ticks
    assert sum(t0 + 0.01 < x < (t0 + t1) / 2 for x in ticks) > 100


def _dump_bytes(path, backend, encoding="utf-8"):
    """dump's standard output as bytes, written to a stream of `encoding` (whose errors
    cli.reading.stdout() sets to surrogateescape), and the text lanes the run attached."""
    import contextlib
    import io

    from binlog_grammar.cli import main
    from binlog_grammar.output import text_lane

    lanes, attach = [], text_lane.attach

    def spy(stream):
        attach(stream)
        lanes.append(stream.lane)

    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding=encoding, write_through=True)
    try:
        with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(io.StringIO()):
            mp.setattr(text_lane, "attach", spy)
            try:
                main(["--backend", backend, "dump", "--no-progress", "--format", "text", str(path)])
            except SystemExit:
                pass
            out.flush()
    finally:
        native.select(None)
    return raw.getvalue(), lanes


def test_dump_writes_the_lanes_runs_as_their_bytes():
    """With stdout writing UTF-8, dump takes the lane's runs as the bytes it
    wrote and puts them on stdout's buffer (the decoding and encoding of a run of non-UTF-8 BLOBs
    were a third of dump's time on the bench binlog): the same bytes as the Python backend's, on
    the sample and the lane's regression files (text and values that are not UTF-8); where stdout
    writes another encoding the runs stay text."""
    if native.lane() is None:
        pytest.skip("the compiled lane is not built here")
    files = [SAMPLE, *sorted((ROOT / "tests" / "native" / "regressions" / "lane").glob("*.bin"))]
    for path in files:
        ours, lanes = _dump_bytes(path, "c")
        assert ours == _dump_bytes(path, "python")[0], path
        assert lanes and all(lane is None or lane.raw for lane in lanes), path
    wide, lanes = _dump_bytes(SAMPLE, "c", encoding="utf-16")
    assert lanes and not lanes[0].raw and wide == _dump_bytes(SAMPLE, "python", "utf-16")[0]
