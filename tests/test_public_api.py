"""The package's public surface (binlog_grammar/__init__.py): every name it lists resolves, the
example in its docstring runs, and importing the package reads no generated module (the CLI
builds its parser before any grammar is chosen)."""
import subprocess
import sys

import binlog_grammar
from binlog_grammar.binlog import rows
from binlog_grammar.compat import api

from helpers.paths import ROOT

SAMPLES = sorted(str(p) for p in (ROOT / "samples").glob("mariadb-*"))


def test_every_public_name_resolves_to_its_definition():
    for name in binlog_grammar.__all__:
        assert getattr(binlog_grammar, name) is not None, name
    assert binlog_grammar.open_stream is api.open_stream  # files through stream.open_stream
    assert binlog_grammar.RowChange is rows.RowChange
    assert sorted(dir(binlog_grammar)) == sorted(binlog_grammar.__all__)


def test_an_unknown_name_is_an_attribute_error():
    try:
        binlog_grammar.no_such_name  # noqa: B018
    except AttributeError as e:
        assert "no_such_name" in str(e)
    else:
        raise AssertionError("no AttributeError")


def test_the_docstring_example_reads_the_samples():
    s = binlog_grammar.open_stream(SAMPLES, binlog_grammar.Filters())
    changes = [(tx.gtid, c.op, c.table) for tx in s.transactions() for c in tx.changes]
    assert changes and {op for _, op, _ in changes} == {"c", "u", "d"}
    assert all(gtid for gtid, _, _ in changes)


def test_importing_the_package_reads_no_generated_module():
    code = ("import sys, binlog_grammar\n"
            "print(sorted(m for m in sys.modules if m.startswith('binlog_grammar')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['binlog_grammar', 'binlog_grammar.errors']"
