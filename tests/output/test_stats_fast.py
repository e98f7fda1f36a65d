"""`stats` from the compiled header walk (output/stats_fast.py) prints what the Python path
prints: text and --json, exit status and stderr, on the corpus, the samples, several files at once
and damaged copies (where the fast path gives up, midway, and the whole input is read again);
and the fast path really runs where it should, and steps aside where an option needs every event.

The Python path is today's `BINLOG_GRAMMAR_BACKEND=python binlog-grammar stats`; the one line
(one key) that differs by design is the backend's name."""
import json
import random

import pytest

from binlog_grammar import native
from binlog_grammar.cli import main
from binlog_grammar.output import stats_fast
from helpers.paths import ROOT, corpus_files, needs_corpus

pytestmark = pytest.mark.skipif(native.unavailable() is not None,
                                reason=f"compiled backend not built: {native.unavailable()}")

SAMPLES = sorted((ROOT / "samples").glob("*.0000*"))
# corpus files the fast path reads whole (v4, CRC32 footers, no event inside another)
FAST_CORPUS = ["binlog_transaction_with_GTID.000001", "json.binlog.000001", "master-bin.000001",
               "minimal_row_metadata.000001", "mysql-enum-string-set.000001",
               "slave-relay-bin.000001", "bug32407.001"]


@pytest.fixture
def spy(monkeypatch):
    """Each stats_fast.read call's outcome: True when the fast path gave the figures."""
    calls = []
    real = stats_fast.read

    def read(stream, top=10):
        got = real(stream, top)
        calls.append(got is not None)
        return got

    monkeypatch.setattr(stats_fast, "read", read)
    return calls


def stats(monkeypatch, capsys, backend, *argv):
    monkeypatch.setenv(native.ENV, backend)
    try:
        rc = main(["stats", *map(str, argv)])
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    if "--json" in argv and rc == 0:
        d = json.loads(out)
        assert d.pop("backend") == backend
        return rc, d, err
    return rc, [ln for ln in out.splitlines() if not ln.startswith("backend: ")], err


def same(monkeypatch, capsys, *argv):
    fast = stats(monkeypatch, capsys, "c", *argv)
    slow = stats(monkeypatch, capsys, "python", *argv)
    assert fast == slow
    return fast


def damaged_copies(tmp_path):
    """Flipped bytes (a CRC32 no longer matches) and a cut end, in each sample."""
    rnd = random.Random(26)
    out = []
    for f in SAMPLES:
        data = f.read_bytes()
        for k in range(4):
            b = bytearray(data)
            b[rnd.randrange(len(data) // 4, len(data))] ^= 0x10
            out.append(tmp_path / f"{f.name}.flip{k}")
            out[-1].write_bytes(bytes(b))
        out.append(tmp_path / f"{f.name}.cut")
        out[-1].write_bytes(data[:len(data) * 2 // 3])
    return out


@pytest.mark.parametrize("extra", [(), ("--json",), ("--top", "2")])
def test_samples_fast_and_equal(monkeypatch, capsys, spy, extra):
    for f in SAMPLES:
        spy.clear()
        rc, _out, _err = same(monkeypatch, capsys, *extra, f)
        assert rc == 0 and spy[0] is True, f  # the fast path gave the figures
    spy.clear()
    same(monkeypatch, capsys, *extra, *SAMPLES)  # several files, one transaction stream
    assert spy[0] is True


@needs_corpus
def test_corpus_equal(monkeypatch, capsys, spy):
    fast = set()
    for f in corpus_files():
        for extra in ((), ("--json",)):
            spy.clear()
            same(monkeypatch, capsys, *extra, f)
            if spy and spy[0]:
                fast.add(f.name)
    assert set(FAST_CORPUS) <= fast  # not vacuous: these were read by the fast path


def test_damaged_equal(monkeypatch, capsys, spy, tmp_path):
    for f in damaged_copies(tmp_path):
        for extra in ((), ("--json",)):
            spy.clear()
            rc, _out, err = same(monkeypatch, capsys, *extra, f)
            # the fast path gave up (the damage is the Python path's to report) and said nothing
            assert spy[0] is False and rc != 0 and err, f
    # damage in the second file: the first one was read fast, then everything is read again
    spy.clear()
    rc, _out, _err = same(monkeypatch, capsys, SAMPLES[0], damaged_copies(tmp_path)[-1])
    assert spy[0] is False and rc != 0


@pytest.mark.parametrize("option", [("--table", "*.t1"), ("--start-position", "300"),
                                    ("--skip-damaged",), ("--no-checksum",)])
def test_options_that_need_every_event(monkeypatch, capsys, spy, option):
    rc, _out, _err = same(monkeypatch, capsys, *option, SAMPLES[0])
    assert rc == 0 and spy[0] is False


def test_python_backend_is_not_the_fast_path(monkeypatch, capsys, spy):
    stats(monkeypatch, capsys, "python", SAMPLES[0])
    assert spy == [False]
