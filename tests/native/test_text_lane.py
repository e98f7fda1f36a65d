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
from binlog_grammar.binlog.stream import Written, open_stream
from binlog_grammar.output.text_lane import TextLane
from helpers.native import cli_dump
from helpers.paths import ROOT

LANE = native._load_lane()[0]
pytestmark = pytest.mark.skipif(LANE is None or native.unavailable() is not None,
                                reason="the compiled extensions are not built")
SAMPLE = ROOT / "samples" / "mariadb-10.11-sample.000001"


def test_the_lane_writes_most_events_of_a_sample():
    s = open_stream([SAMPLE])
    s.lane = TextLane(LANE)
    written = python = 0
    for se in s.events():
        if type(se) is Written:
            written += se.text.count("# at ")
        else:
            python += 1
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
