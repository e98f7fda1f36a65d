"""The fast readers (generated/fast.py, from the same specs by fastgen.py) give exactly what the
construct structs give: for random tables and rows drawn from the specs, and for every rows event
of the corpus and the samples."""
from construct import ConstructError
from hypothesis import HealthCheck, given, reject, settings

from binlog_grammar.generated import fast as F
from binlog_grammar.generated import types as T
from binlog_grammar.reader import BinlogFile
from binlog_grammar.rows import RowDecoder
from conftest import ROOT, corpus_files, exact
from test_row_images import tables_and_rows


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
    from binlog_grammar import fasttable

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
