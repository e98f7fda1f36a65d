"""sql and flashback find their writer in the output format registry (output/formats.py), as dump
and stream do (issue 27 item 3): an entry replaced in the registry is what `sql` and `flashback`
write."""
from __future__ import annotations

import dataclasses

import pytest

from binlog_grammar.cli import main as cli_main
from binlog_grammar.output import formats

from helpers.paths import ROOT

SAMPLE = str(ROOT / "samples" / "mariadb-10.11-sample.000001")


@pytest.mark.parametrize("command", ["sql", "flashback"])
def test_sql_and_flashback_render_through_the_registry(command, monkeypatch, capsys):
    seen = []
    real = formats.get(command)

    def render(transactions, **kw):
        txs = list(transactions)
        seen.append(len(txs))
        yield f"-- rendered by the registry's {command} entry\n"
        yield from real.make(txs, **kw)

    monkeypatch.setitem(formats.FORMATS, command, dataclasses.replace(real, make=render))
    assert cli_main([command, SAMPLE]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"-- rendered by the registry's {command} entry\n")
    assert seen and seen[0] > 0
    # what the entry renders is the real script, unchanged
    monkeypatch.undo()
    assert cli_main([command, SAMPLE]) == 0
    assert capsys.readouterr().out == out.split("\n", 1)[1]


@pytest.mark.parametrize("command", ["sql", "flashback"])
def test_each_worker_renders_through_the_registry(command, monkeypatch, capsys):
    """With --jobs 2 and small splits, the header and every worker's piece come from the
    registry's entry (the workers are forked after it is replaced)."""
    from binlog_grammar.cli import parallel

    real = formats.get(command)

    def render(transactions, **kw):
        yield "-- from the registry\n"
        yield from real.make(transactions, **kw)

    monkeypatch.setenv(parallel.ENV_SPLIT, "300")
    monkeypatch.setitem(formats.FORMATS, command, dataclasses.replace(real, make=render))
    assert cli_main([command, "--jobs", "2", SAMPLE]) == 0
    out = capsys.readouterr().out
    assert out.count("-- from the registry\n") > 2, out[:2000]
