"""The public reading API (binlog_grammar.open_stream, Filters, Change): one call for a file,
files, a glob, an index; row changes with their GTID, position and table; filters that take an
easy mistake in its obvious meaning or refuse it with a message, never an empty result; a
docstring on every public name; the README's "Python API" examples run verbatim on the samples
(the one that reads a server runs in test_pymysqlreplication.py)."""
import datetime as dt
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import binlog_grammar
from binlog_grammar import BinlogError, Filters, open_stream

from helpers.paths import ROOT

SAMPLES = sorted(str(p) for p in (ROOT / "samples").glob("mariadb-*"))


def _changes(s):
    return [(c.gtid, c.op, c.db, c.table, c.pos) for c in s.row_changes()]


def test_a_table_name_given_as_one_str_is_that_table():
    got = _changes(open_stream(SAMPLES, Filters(tables="shop.customers")))
    assert got and {t for _, _, _, t, _ in got} == {"customers"}
    assert got == _changes(open_stream(SAMPLES, Filters(tables=["shop.customers"])))


def test_a_table_without_its_database_is_that_table_in_any_database():
    flt = Filters(tables=["customers"], exclude_tables="ord*")
    assert flt.tables == ["*.customers"] and flt.exclude_tables == ["*.ord*"]
    got = _changes(open_stream(SAMPLES, flt))
    assert got == _changes(open_stream(SAMPLES, Filters(tables=["shop.customers"])))
    assert got


def test_the_cli_table_option_without_a_database_matches_too():
    def dump(*opts):
        return subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", *opts, *SAMPLES],
                              capture_output=True, text=True, cwd=ROOT).stdout

    short, full = dump("--table", "customers"), dump("--table", "shop.customers")
    assert "shop`.`customers" in full and short == full


def test_datetimes_may_be_text_dates_or_epoch_seconds():
    start = dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)
    for given in ("2000-01-01 00:00:00", "2000-01-01T00:00:00Z", "2000-01-01T02:00:00+02:00",
                  dt.date(2000, 1, 1), dt.datetime(2000, 1, 1), int(start.timestamp()), start):
        flt = Filters(start_datetime=given, stop_datetime="2100-01-01")
        assert flt.start_datetime == start, given
        assert len(_changes(open_stream(SAMPLES, flt))) == len(_changes(open_stream(SAMPLES)))
    assert not _changes(open_stream(SAMPLES, start_datetime="2100-01-01"))


@pytest.mark.parametrize("kwargs, error, words", [
    ({"tables": 42}, TypeError, "tables=...) takes a name or a list of names, not int 42"),
    ({"databases": ["shop", 3]}, TypeError, "databases=...): 3 is not a name"),
    ({"tables": [""]}, TypeError, "is not a name"),
    ({"start_datetime": "yesterday"}, ValueError, "not a date and time"),
    ({"stop_datetime": [2020]}, TypeError, "takes a datetime"),
    ({"start_datetime": "2020-01-02", "stop_datetime": "2020-01-01"}, ValueError, "is not after"),
    ({"start_position": "100"}, TypeError, "takes a byte offset"),
    ({"stop_position": -1}, ValueError, "not negative"),
    ({"start_position": True}, TypeError, "takes a byte offset"),
    ({"include_gtids": "0-1"}, ValueError, "not a GTID set element"),
    ({"exclude_gtids": 5}, TypeError, "takes a GtidSet or its text"),
])
def test_a_wrong_filter_is_refused_with_a_message_naming_it(kwargs, error, words):
    with pytest.raises(error) as e:
        Filters(**kwargs)
    assert words in str(e.value) and f"{next(iter(kwargs))}" in str(e.value)


def test_gtid_sets_may_be_text():
    got = _changes(open_stream(SAMPLES, include_gtids="0-1-4-6"))
    assert got and {g for g, *_ in got} == {"0-1-4", "0-1-5", "0-1-6"}
    assert "0-1-4" not in {g for g, *_ in _changes(open_stream(SAMPLES, exclude_gtids="0-1-4"))}


def test_one_call_opens_a_path_paths_a_glob_and_an_index(tmp_path):
    every = _changes(open_stream(SAMPLES))
    assert every
    assert _changes(open_stream(str(ROOT / "samples" / "mariadb-10.11-sample.0*"))) == every
    assert _changes(open_stream([Path(p) for p in SAMPLES])) == every
    one = _changes(open_stream(Path(SAMPLES[0])))
    assert one and one == _changes(open_stream([SAMPLES[0]])) and one == every[:len(one)]
    index = tmp_path / "mariadb-bin.index"
    index.write_text("".join(f"{p}\n" for p in SAMPLES))
    assert _changes(open_stream(index)) == every
    with pytest.raises(BinlogError, match="no binlog file matches"):
        open_stream(str(tmp_path / "nothing-*.0*"))
    with pytest.raises(TypeError, match="not int"):
        open_stream(42)
    with pytest.raises(TypeError, match="unknown keyword.*tabels"):
        open_stream(SAMPLES, tabels=["shop.orders"])
    with pytest.raises(TypeError, match="not both"):
        open_stream(SAMPLES, Filters(), tables=["shop.orders"])


def test_a_row_change_carries_its_gtid_position_and_table():
    s = open_stream(SAMPLES)
    by_tx = [(tx.gtid, c.op, c.db, c.table, c.pos, c.before, c.after)
             for tx in open_stream(SAMPLES).transactions() for c in tx.changes]
    changes = list(s.row_changes())
    assert [(c.gtid, c.op, c.db, c.table, c.pos, c.before, c.after) for c in changes] == by_tx
    first = changes[0]
    assert first.gtid == "0-1-4" and first.file == SAMPLES[0] and first.pos > 4
    assert first.values == first.after and first.primary_key == ["id"] and first.tx_seq == 4


def test_every_public_name_has_a_docstring():
    missing = []
    for name in binlog_grammar.__all__:
        obj = getattr(binlog_grammar, name)
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj):
            missing += [f"{name}.{m}" for m, f in vars(obj).items()
                        if not m.startswith("_") and (inspect.isfunction(f) or isinstance(f, property))
                        and not (f.__doc__ or "").strip() and m not in ("keeps_all",)]
    assert missing == []


def readme_blocks():
    """The README's "Python API" section's ```python blocks (the section ends at the next '## ')."""
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_readme_python_examples_run_verbatim_on_the_samples():
    blocks = [b for b in readme_blocks() if "BINLOG_SERVER" not in b]
    assert len(blocks) >= 4
    for block in blocks:
        out = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True,
                             cwd=ROOT, timeout=120)
        assert out.returncode == 0, f"{block}\n{out.stderr}"
        assert out.stdout.strip(), block
    assert "0-1-4" in subprocess.run([sys.executable, "-c", blocks[0]], capture_output=True,
                                     text=True, cwd=ROOT).stdout


def test_a_server_url_gives_a_replication_source_with_its_options():
    from binlog_grammar.compat.api import source_from_url

    src = source_from_url("mysql://repl:p%40ss@10.0.0.5:3307?gtid=0-1-5&until_now=1&blocking=0")
    assert (src.host, src.port, src.user, src.until_now, src.blocking) == \
        ("10.0.0.5", 3307, "repl", True, False)
    assert str(src.gtid_state) == "0-1-5" and src.password.reveal() == b"p@ss"
    assert "p@ss" not in repr(src)
    with pytest.raises(ValueError, match="unknown option 'nope'.*until_now"):
        source_from_url("mysql://repl@h?nope=1")
    with pytest.raises(ValueError, match="write 1 or 0"):
        source_from_url("mariadb://repl@h?blocking=maybe")
    with pytest.raises(ValueError, match="position filters do not apply to a server"):
        open_stream("mysql://repl@127.0.0.1:1", start_position=4)
    with pytest.raises(TypeError, match="takes no skip_damaged"):
        open_stream("mysql://repl@127.0.0.1:1", skip_damaged=True)


@pytest.mark.corpus
def test_the_corpus_reads_through_the_python_mysql_replication_api():
    """Every corpus file through BinLogStreamReader(files=...) and every event's dump(): read to
    the end, or stopped by a BinlogGrammarError where `dump` also stops (damaged files)."""
    import contextlib
    import io

    from binlog_grammar.compat.pymysqlreplication import BinLogStreamReader
    from helpers.paths import corpus_files

    files = corpus_files()
    stopped = []
    for path in files:
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                for event in BinLogStreamReader(files=[path], filter_non_implemented_events=False):
                    event.dump()
        except binlog_grammar.BinlogGrammarError:
            stopped.append(path)
    assert len(files) > 20 and len(stopped) < len(files) // 4
    for path in stopped:
        out = subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", str(path)],
                             capture_output=True, cwd=ROOT)
        assert out.returncode != 0, path
