"""`dump --format jsonl --envelope debezium` on the compiled backend (its row changes written by
output/debezium_native.py and native/forms_debezium.h) writes the bytes the Python backend
writes, with the same errors and exit status: on every binlog of the corpus and the samples, with
each value option the compiled path implements, and on the samples with their rows events'
bytes damaged (CRC32 checks off, so that the damaged rows reach the compiled readers). The
compiled path must also have written events (else the comparison proves nothing).
tests/native/test_debezium_rows.py draws random tables, rows and options."""
import random

import pytest

from binlog_grammar import native
from binlog_grammar.binlog.stream import open_stream
from binlog_grammar.output.debezium import DebeziumWriter
from helpers.native import VALUE_OPTIONS, cli_dump
from helpers.paths import ROOT, corpus_files

ROWS = native._load_rows()[0]
pytestmark = pytest.mark.skipif(ROWS is None or not hasattr(ROWS, "DEBEZIUM"),
                                reason="the compiled extension _rows is not built")
SAMPLES = sorted((ROOT / "samples").glob("*.0*"))
# the files whose rows events the compiled path writes (the others: no rows, MySQL's binary
# JSON, keys that change, ...), for the option matrix
WITH_ROWS = {"update-full-row.binlog", "write-full-row.binlog", "write-partial-row.binlog",
             "ver_trunk_row_v2.001", "mysql-enum-string-set.000001", "bug32407.001"}


def _dump(path, backend, *options):
    opts = [x for k, v in options for x in ("--debezium-option", f"{k}={v}")]
    return cli_dump(path, backend, "--format", "jsonl", "--envelope", "debezium", *opts)


def _native_events(path, options=()) -> int:
    w = DebeziumWriter(dict(options))
    for se in open_stream([str(path)]).events():
        for _ in w.lines(se):
            pass
    return w.native.events if w.native else 0


@pytest.mark.parametrize("path", corpus_files() + SAMPLES, ids=lambda p: p.name)
def test_both_backends_alike(path):
    assert _dump(path, "c") == _dump(path, "python")


@pytest.mark.parametrize("option", VALUE_OPTIONS, ids=lambda o: "=".join(o))
def test_each_value_option_alike(option):
    files = SAMPLES + [p for p in corpus_files() if p.name in WITH_ROWS]
    written = 0
    for path in files:
        assert _dump(path, "c", option) == _dump(path, "python", option), path.name
        written += _native_events(path, [option])
    assert written > 0


def test_the_compiled_path_writes_the_samples_rows():
    """The comparisons above see the compiled path at work: it writes the rows events of the
    samples' tables without DDL that says more (the others are the Python path's)."""
    assert _native_events(SAMPLES[0]) >= 2
    assert sum(_native_events(p) for p in corpus_files() if p.name in WITH_ROWS) >= 8


ROWS_EVENTS = [(1919, 557), (3401, 159), (4127, 118)]  # samples[0]: (offset, length)


@pytest.mark.parametrize("seed", range(12))
def test_damaged_rows_alike(seed, tmp_path):
    """Bits flipped inside the samples' rows events (lengths kept, CRC32 not checked): the
    compiled path writes what the Python path writes, or leaves the event to it (the same
    error at the same offset)."""
    rnd = random.Random(seed)
    data = bytearray(SAMPLES[0].read_bytes())
    for _ in range(rnd.randint(1, 3)):
        at, length = rnd.choice(ROWS_EVENTS)
        k = at + rnd.randrange(30, length - 4)
        data[k] ^= 1 << rnd.randrange(8)
    path = tmp_path / SAMPLES[0].name
    path.write_bytes(bytes(data))
    got = cli_dump(path, "c", "--no-checksum", "--format", "jsonl", "--envelope", "debezium")
    assert got == cli_dump(path, "python", "--no-checksum", "--format", "jsonl", "--envelope",
                           "debezium")


def test_bounded_fuzz_campaign(tmp_path):
    """A bounded share of `tools/fuzz_jsonl_lane.py --envelope debezium` (the sample's
    transactions repeated, mutated, dumped by both backends; BINLOG_GRAMMAR_DEBEZIUM_FUZZ_MUTANTS
    for more)."""
    import os
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import fuzz_jsonl_lane

    mutants = os.environ.get("BINLOG_GRAMMAR_DEBEZIUM_FUZZ_MUTANTS", "12")
    assert fuzz_jsonl_lane.main(["--envelope", "debezium", "--mutants", mutants, "--seed", "27",
                                 "--findings", str(tmp_path)]) == 0
