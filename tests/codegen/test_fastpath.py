"""The fast readers (generated/fast.py, from the same specs by fastgen.py) give exactly what the
construct structs give: for random tables and rows drawn from the specs, and for every rows event
of the corpus and the samples."""
from construct import ConstructError
from hypothesis import HealthCheck, given, reject, settings

from binlog_grammar.generated import fast as F
from binlog_grammar.generated import types as T
from binlog_grammar.binlog.reader import BinlogFile
from binlog_grammar.binlog.rows import RowDecoder
from helpers.paths import ROOT, corpus_files
from helpers.compare import exact
from helpers.rows import tables_and_rows


def _build(value, ctx):
    try:
        return T.row_images.build(value, **ctx)
    except ConstructError as e:
        if "does not fit" in str(e) or "too long" in str(e):  # a drawn value too long for its prefix
            reject()
        raise


def _plain(v):
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items() if not str(k).startswith("_")}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(tables_and_rows())
def test_fast_readers_equal_construct_on_random_row_images(case):
    ctx, value = case
    data = _build(value, ctx)
    slow = T.row_images.parse(data, **ctx)
    fast, pos = F.t_row_images(data, 0, len(data), {"_params": ctx}, ctx, None)
    assert pos == len(data)
    assert _plain(fast) == _plain(slow)
    for a, b in zip(fast["rows"], slow.rows):
        for x, y in zip(a["images"], b.images):
            assert x["null_bits"].pad == y.null_bits.pad


def _changes(path, fast):
    dec = RowDecoder(fast=fast)
    out = []
    try:
        for ev in BinlogFile(path):
            if ev.type is None:
                continue
            if ev.type.name == "TABLE_MAP_EVENT":
                dec.table_map(ev)
            elif ev.type.row_op:
                out.append([(c.op, c.before, c.after) for c in dec.changes(ev)])
    except Exception as e:  # noqa: BLE001 - both paths must fail the same way
        out.append(str(e))
    return out


def test_fast_readers_equal_construct_on_real_binlogs():
    files = [*corpus_files(), *sorted((ROOT / "samples").iterdir())]
    compared = 0
    for path in files:
        fast, slow = _changes(path, True), _changes(path, False)
        assert fast == slow, path
        compared += sum(len(x) for x in fast if isinstance(x, list))
    assert compared > 40


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(tables_and_rows())
def test_table_readers_equal_construct_on_random_row_images(case):
    """The reader specialised for each random table (fasttable.py) gives what construct gives."""
    from binlog_grammar.codegen import table as fasttable

    ctx, value = case
    data = _build(value, ctx)
    slow = T.row_images.parse(data, **ctx)
    read = fasttable.reader(ctx["columns"], ctx["images"], ctx["type_code"], ctx["json_columns"])
    assert read is not None
    fast = read(data, ctx)
    assert _plain(fast) == _plain(slow)
    # the "images" form: each image {column name: value} of the columns it holds
    images = fasttable.reader(ctx["columns"], ctx["images"], ctx["type_code"], ctx["json_columns"],
                              form="images")
    names = [c["name"] for c in ctx["columns"]]
    if ctx["json_columns"] or len(set(names)) != len(names):
        assert images is None
        return
    want = [[{names[i]: v for i, (v, p) in enumerate(zip(img.cells, img.present)) if p}
             for img in row.images] for row in slow.rows]
    got = images(data, ctx)
    assert got == want
    assert [[{k: type(v) for k, v in img.items()} for img in row] for row in got] == \
        [[{k: type(v) for k, v in img.items()} for img in row] for row in want]


def _events(path, **kw):
    out = []
    try:
        for ev in BinlogFile(path, **kw):
            out.append((ev.offset, ev.name, exact(ev.header), exact(ev.data), ev.checksum,
                        ev.checksum_ok))
    except Exception as e:  # noqa: BLE001 - both paths must fail the same way
        out.append(str(e))
    return out


def test_generated_event_readers_equal_construct_on_real_binlogs():
    """Every event of the corpus and the samples: header and data read by the generated readers
    (generated/fast.py, events whose bytes repeat sharing one value) are what the construct
    structs give, and damaged files fail with the same message."""
    files = [*corpus_files(), *sorted((ROOT / "samples").iterdir())]
    compared = 0
    for path in files:
        slow = _events(path, fast=False)
        assert _events(path) == slow, path
        assert _events(path, share_data=False) == slow, path
        compared += sum(1 for x in slow if isinstance(x, tuple))
    assert compared > 1000


def test_events_with_the_same_data_bytes_share_one_parsed_value():
    """The TABLE_MAP written before every statement is parsed once per file and shared (read-only);
    share_data=False gives each event its own value; the values are equal either way."""
    path = ROOT / "samples" / "mariadb-10.11-sample.000001"

    def maps(**kw):
        return [ev for ev in BinlogFile(path, **kw) if ev.name == "TABLE_MAP_EVENT"]

    shared, own = maps(), maps(share_data=False)
    by_bytes = {}
    for ev in shared:
        data = ev.raw[ev.context["header_len"]:len(ev.raw) - 4 * ev.footer]
        by_bytes.setdefault(data, []).append(ev)
    repeated = [evs for evs in by_bytes.values() if len(evs) > 1]
    assert repeated, "the sample has TABLE_MAPs whose data repeats"
    for evs in repeated:
        assert all(e.data is evs[0].data for e in evs)
    assert len({id(ev.data) for ev in own}) == len(own)
    assert [exact(e.data) for e in shared] == [exact(e.data) for e in own]


# ---------------------------------------------------------------------------------------------
# What may fall back to construct: the fast readers' own data errors (FastPathError), counted;
# a bug in a generated reader (a TypeError, a KeyError, ...) surfaces instead of being re-parsed

import signal  # noqa: E402

import pytest  # noqa: E402

from binlog_grammar.errors import BinlogError  # noqa: E402
from binlog_grammar.runtime.fast import FAST_ERRORS, FastPathError  # noqa: E402
from helpers.paths import CORPUS  # noqa: E402

SAMPLE = ROOT / "samples" / "mariadb-10.11-sample.000001"


def _code(name):
    from binlog_grammar.generated.catalog import EVENTS

    return next(c for c, e in EVENTS.items() if e.name == name)


def test_only_fast_path_errors_fall_back():
    assert FAST_ERRORS == (FastPathError,)


def test_a_broken_event_reader_surfaces(monkeypatch):
    """Before, reader.py caught KeyError, TypeError and AttributeError from the generated readers
    and quietly parsed with construct: a bug in fastgen.py went unseen. Now it propagates."""
    def broken(buf, pos, end, ctx):
        raise TypeError("a bug in a generated reader")

    monkeypatch.setitem(F.EVENT_READERS, _code("QUERY_EVENT"), broken)
    with pytest.raises(TypeError, match="a bug in a generated reader"):
        list(BinlogFile(SAMPLE))
    from binlog_grammar import cli  # and the command does not turn it into a data error either

    with pytest.raises(TypeError):
        cli.main(["stats", str(SAMPLE)])


def test_a_broken_header_reader_surfaces(monkeypatch):
    def broken(*args):
        raise KeyError("type_code")

    monkeypatch.setattr(F, "t_common_header", broken)
    with pytest.raises(KeyError):
        list(BinlogFile(SAMPLE))


def test_a_broken_row_reader_surfaces(monkeypatch):
    import binlog_grammar.codegen.table as ft

    real = ft.reader

    def broken_reader(*args, **kw):
        fn = real(*args, **kw)
        if fn is None:
            return None

        def run(buf, ctx):
            raise AttributeError("a bug in a table reader")
        return run

    from binlog_grammar import native
    from binlog_grammar.binlog.rows import iter_row_changes

    monkeypatch.setattr(ft, "reader", broken_reader)
    # the Python backend: the compiled one makes the sample's values itself, before any table
    # reader runs (binlog/rows_native.py)
    monkeypatch.setenv(native.ENV, "python")
    with pytest.raises(AttributeError, match="a bug in a table reader"):
        list(iter_row_changes([SAMPLE]))


def test_bad_bytes_fall_back_and_are_counted(monkeypatch, tmp_path):
    """A reader that refuses bytes (FastPathError) hands them to construct, and the file's
    count by reader says so; `stats` shows the count (text and --json)."""
    calls = []
    real = F.EVENT_READERS[_code("QUERY_EVENT")]

    def refusing(buf, pos, end, ctx):
        calls.append(1)
        raise FastPathError("refused")

    monkeypatch.setitem(F.EVENT_READERS, _code("QUERY_EVENT"), refusing)
    bf = BinlogFile(SAMPLE)
    slow = [e.data for e in bf]
    assert calls and bf.fallbacks == {"QUERY_EVENT": len(calls)}
    n = len(calls)  # one refusal per QUERY_EVENT of one reading of the file
    monkeypatch.setitem(F.EVENT_READERS, _code("QUERY_EVENT"), real)
    assert [exact(d) for d in slow] == [exact(e.data) for e in BinlogFile(SAMPLE, fast=False)]
    monkeypatch.setitem(F.EVENT_READERS, _code("QUERY_EVENT"), refusing)

    import contextlib
    import io
    import json

    from binlog_grammar import cli

    # stats' count is its own reading's; describing the largest and longest transactions parses
    # some of their events again, which the reader also refuses, but which are not that count
    for argv in (["stats", str(SAMPLE)], ["stats", "--json", str(SAMPLE)]):
        calls.clear()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert cli.main(argv) == 0
        if "--json" in argv:
            fb = json.loads(out.getvalue())["fast_path_fallbacks"]
            assert len(calls) >= n
            assert fb == {"count": n, "by_file": {str(SAMPLE): {"QUERY_EVENT": n}}}
        else:
            assert len(calls) >= n
            assert f"fast-path fallbacks (events parsed again by construct): {n}" in \
                out.getvalue()
            assert f"{SAMPLE}  QUERY_EVENT" in out.getvalue()


def test_damaged_bytes_are_counted(tmp_path):
    """Real bad bytes: a QUERY_EVENT whose status-variables length points past its data. The fast
    reader refuses it, construct gives the precise error, the fallback is counted."""
    evs = list(BinlogFile(SAMPLE))
    q = next(e for e in evs if e.name == "QUERY_EVENT")
    data = bytearray(SAMPLE.read_bytes())
    at = q.offset + 19 + 4 + 4 + 1 + 2  # thread id, exec time, db length, error code
    data[at:at + 2] = b"\xff\xff"  # status_vars_len
    path = tmp_path / "bad.000001"
    path.write_bytes(bytes(data))
    bf = BinlogFile(path, verify_checksum=False, skip_damaged=True)
    list(bf)
    assert bf.damage and bf.damage[0].offset == q.offset
    assert bf.fallbacks["QUERY_EVENT"] >= 1


def _alarm(seconds):
    def fire(_s, _f):
        raise TimeoutError(f"more than {seconds} s: a loop that never ends")
    signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)


@pytest.mark.skipif(not (CORPUS / "write-full-row.binlog").exists(), reason="corpus absent")
def test_row_images_of_no_bytes_are_refused_not_repeated_forever():
    """A DELETE_ROWS_EVENT whose image holds no column (one flipped bit of write-full-row.binlog)
    has rows of 0 bytes: `repeat: eos` read them until memory ran out, on both paths."""
    data = bytearray((CORPUS / "write-full-row.binlog").read_bytes())
    data[456] = 0  # columns_present of the DELETE_ROWS_EVENT_V1 at 428
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".000001") as fh:
        fh.write(bytes(data))
        fh.flush()
        for fast in (True, False):
            dec = RowDecoder(fast=fast)
            _alarm(10)
            try:
                with pytest.raises(BinlogError, match="0 bytes long, so the elements never end"):
                    for ev in BinlogFile(fh.name, fast=fast):
                        if ev.name == "TABLE_MAP_EVENT":
                            dec.table_map(ev)
                        elif ev.type is not None and ev.type.row_op:
                            dec.changes(ev)
            finally:
                signal.alarm(0)


def test_a_size_computed_negative_is_refused_as_construct_refuses_it():
    """`size: ndb_len - 2` with ndb_len 0: the fast reader read backwards (and returned a
    value construct refuses)."""
    from binlog_grammar.generated import types as T

    data = bytes([0, 0]) + b"rest"
    with pytest.raises(ConstructError):
        T.rows_ndb_info.parse(data)
    with pytest.raises(FastPathError):
        F.t_rows_ndb_info(data, 0, len(data), {"_index": None}, {}, None)


def test_column_metadata_the_table_map_does_not_give_is_a_data_error():
    """A BLOB column without metadata (a TABLE_MAP of the 5.1 development tree, or a damaged one)
    or with another type's metadata: FastPathError where the metadata is read, not a TypeError
    of the expression that reads it."""
    from binlog_grammar.binlog.rows import Column

    for meta in (None, {"type": 252, "max_length": 3}):
        col = Column(name="b", type=252, real_type=252, meta=meta, charset=None)
        with pytest.raises(FastPathError, match="metadata"):
            F.t_value_blob(b"\x01\x00\x00\x00x", 0, 5, {"_index": 0}, {}, col)
    col = Column(name="d", type=246, real_type=246, meta=7, charset=None)
    with pytest.raises(FastPathError, match="without precision"):
        F.t_value_newdecimal(b"\x80" * 8, 0, 8, {"_index": 0}, {}, col)
