"""A TABLE_MAP whose metadata names two columns alike, or one '' (damaged metadata: no server
writes that), gives its columns positional names: row images are keyed by name, and a value would
otherwise take another column's place (a BLOB's text under a DECIMAL column made `dump` raise
decimal.InvalidOperation, a traceback; found by tools/fuzz_lane.py)."""
import pytest

from binlog_grammar.binlog.reader import BinlogFile
from binlog_grammar.binlog.rows import table_from_event
from helpers.paths import ROOT

SAMPLE = ROOT / "samples" / "mariadb-10.11-sample.000001"


def _table_map():
    for ev in BinlogFile(SAMPLE):
        if ev.name == "TABLE_MAP_EVENT":
            return ev.data
    raise AssertionError("no TABLE_MAP_EVENT in the sample")


class _Data(dict):
    """A TABLE_MAP's parsed data with some entries replaced (read as attributes or keys)."""

    __getattr__ = dict.__getitem__


def _with_names(data, names):
    meta = [dict(e, value=names) if e.get("id") == "column_name" else e
            for e in data["optional_metadata"]]
    return _Data({k: data[k] for k in data if not str(k).startswith("_")}, optional_metadata=meta)


def test_the_sample_names_its_columns():
    t = table_from_event(_table_map())
    assert t.full_metadata and all(not c.name.startswith("@") for c in t.columns)


@pytest.mark.parametrize("broken", ["repeated", "empty"])
def test_names_that_cannot_key_a_row_are_dropped(broken):
    data = _table_map()
    names = [c.name for c in table_from_event(data).columns]
    names[-1] = names[0] if broken == "repeated" else ""
    t = table_from_event(_with_names(data, names))
    assert [c.name for c in t.columns] == [f"@{i + 1}" for i in range(len(names))]
    assert not t.full_metadata
    assert all(n.startswith("@") for n in t.primary_key)
