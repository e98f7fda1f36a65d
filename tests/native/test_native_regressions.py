"""Every input under tests/native/regressions/ (what tools/fuzz_native.py found, and inputs
kept by hand) walks the same on both backends, with every header length and checksum setting."""
import pytest

from binlog_grammar import native
from binlog_grammar.binlog import framing as fr
from helpers.paths import ROOT

FILES = sorted((ROOT / "tests" / "native" / "regressions").glob("*.bin"))


@pytest.mark.skipif(native.unavailable() is not None, reason="compiled backend not built")
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_regression_input_walks_the_same(path):
    for hl in (13, 19, 20):
        for checksums in (False, True):
            walks = [fr.Walk(path, hl, checksums=checksums, backend=b) for b in ("python", "c")]
            assert list(walks[1]) == list(walks[0])
            assert walks[1].stop == walks[0].stop
