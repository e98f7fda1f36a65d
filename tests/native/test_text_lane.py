"""The compiled text lane of `dump` (output/text_lane.py, binlog_grammar.native._lane) writes what
the Python path writes: on the samples (where it writes most events, so this is not vacuous), on
the corpus (tests/native/test_rows.py runs `dump` on both backends), and on copies of a sample
damaged at many places, with and without CRC32 checks, where whatever the Python path prints and
says (its error, its exit status) must come out the same."""
import io
import random
from contextlib import redirect_stderr, redirect_stdout

import pytest

from binlog_grammar import native
from binlog_grammar.binlog.stream import Written, open_stream
from binlog_grammar.output.text_lane import TextLane
from helpers.paths import ROOT

LANE = native._load_lane()[0]
pytestmark = pytest.mark.skipif(LANE is None or native.unavailable() is not None,
                                reason="the compiled extensions are not built")
SAMPLE = ROOT / "samples" / "mariadb-10.11-sample.000001"


def _dump(path, backend, *opts):
    from binlog_grammar.cli import main

    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(["--backend", backend, "dump", "--no-progress", *opts, str(path)])
            except SystemExit as e:
                code = e.code
    finally:
        native.select(None)
    return code, out.getvalue(), err.getvalue()


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
    assert _dump(SAMPLE, "c") == _dump(SAMPLE, "python")


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
        c, py = _dump(path, "c", *opts), _dump(path, "python", *opts)
        assert c == py, (k, at)
