"""The split planner and the split reader of the Spark data source, without Spark.

A file cut at transaction boundaries and read split by split gives the row changes (in the dump's
Debezium form, tx_seq and GTID included) and the errors the plain reader gives for the whole input,
whatever the split size and whatever the filters.
"""
from __future__ import annotations

import datetime as dt
import os

import pytest

from binlog_grammar.output.dump import change_record
from binlog_grammar.errors import BinlogError
from binlog_grammar.spark.split import (
    expand_paths, header_struct, natural_key, plan, scan_file, split_stream)
from binlog_grammar.binlog.stream import Filters, GtidSet, open_stream

from helpers.paths import ROOT, corpus_files, needs_corpus

SAMPLES = sorted(str(p) for p in (ROOT / "samples").glob("mariadb-*"))


def plain(paths, flt=None):
    out = []
    try:
        for se in open_stream(paths, flt).events():
            out += [change_record(ch, se, i) for i, ch in enumerate(se.changes)]
    except BinlogError as e:
        out.append(("error", str(e)))
    return out


def by_splits(paths, split_bytes, flt=None):
    splits, _ = plan(paths, split_bytes)
    out = []
    try:
        for sp in splits:
            for se in split_stream(sp, paths, flt).events():
                out += [change_record(ch, se, i) for i, ch in enumerate(se.changes)]
    except BinlogError as e:
        out.append(("error", str(e)))
    return out, splits


def test_header_fields_come_from_the_spec():
    fmt, hl = header_struct()
    assert hl == 19
    with open(SAMPLES[0], "rb") as fh:
        head = fh.read(4 + 19)[4:]
    code, length = fmt.unpack_from(head, 0)
    assert code == 15  # FORMAT_DESCRIPTION_EVENT
    assert 19 < length < 1000


@pytest.mark.parametrize("split_bytes", [None, 1, 200, 1000])
def test_samples_split_anywhere_give_the_plain_rows(split_bytes):
    expected = plain(SAMPLES)
    got, splits = by_splits(SAMPLES, split_bytes)
    assert got == expected
    assert len(expected) == 13
    if split_bytes == 1:  # every transaction its own split
        assert len(splits) > 10
        for sp in splits:
            if sp.fde_pos is not None:
                assert sp.start > 4


@needs_corpus
@pytest.mark.parametrize("split_bytes", [None, 1, 512])
def test_corpus_files_split_give_the_plain_rows_and_errors(split_bytes):
    for f in corpus_files():
        p = [str(f)]
        assert by_splits(p, split_bytes)[0] == plain(p), f.name


@needs_corpus
def test_corpus_as_one_input_counts_transactions_across_files():
    good = [str(f) for f in corpus_files() if not any(isinstance(r, tuple) for r in plain([str(f)]))]
    got, splits = by_splits(good, 300)
    assert got == plain(good)
    assert len({sp.path for sp in splits}) == len(good)


@pytest.mark.parametrize("flt", [
    Filters(tables=["shop.orders"]), Filters(exclude_tables=["shop.orders"]),
    Filters(start_position=3000), Filters(stop_position=700),
    Filters(start_position=3000, stop_position=700), Filters(databases=["nope"]),
    Filters(start_datetime=dt.datetime(2000, 1, 1), stop_datetime=dt.datetime(2100, 1, 1)),
    Filters(include_gtids=GtidSet("0-1-5,0-1-9")), Filters(exclude_gtids=GtidSet("0-1-5")),
], ids=lambda f: ",".join(f"{k}={v}" for k, v in vars(f).items() if v))
def test_filters_apply_as_in_the_plain_reader(flt):
    expected = plain(SAMPLES, flt)
    for sb in (None, 1, 700):
        assert by_splits(SAMPLES, sb, flt)[0] == expected


def test_scan_reports_boundaries_open_files_and_gtids():
    sc = scan_file(SAMPLES[0], 1)
    assert sc.splittable and not sc.in_use
    assert sc.gtid_events == 9
    assert sc.scanned_to == sc.size
    starts = [c["start"] for c in sc.cuts]
    assert starts == sorted(set(starts)) and starts[0] == 4
    # every cut after the first starts at a GTID event or right after an XID_EVENT
    from binlog_grammar.binlog.reader import BinlogFile

    events = list(BinlogFile(SAMPLES[0]))
    names = {ev.offset: ev.name for ev in events}
    after_xid = {ev.end for ev in events if ev.name == "XID_EVENT"}
    assert all(names[s] == "GTID_EVENT" or s in after_xid for s in starts[1:])
    assert sum(names[s] == "GTID_EVENT" for s in starts) == 9
    # resuming at a boundary keeps the transaction count of what comes before
    resume = starts[3]
    sc2 = scan_file(SAMPLES[0], None, start=resume)
    assert sc2.cuts[0]["start"] == resume
    assert sc2.cuts[0]["gtids_before"] == sc.cuts[3]["gtids_before"]


def test_open_file_is_flagged(tmp_path):
    """LOG_EVENT_BINLOG_IN_USE_F set in the FDE: the file was still being written."""
    from binlog_grammar.binlog.reader import BinlogFile, FormatState

    end = max(ev.end for ev in BinlogFile(SAMPLES[0]) if ev.name == "XID_EVENT")
    data = bytearray(open(SAMPLES[0], "rb").read()[:end])  # no ROTATE: still being written
    from binlog_grammar.generated import types as T

    hdr = T.common_header.parse(bytes(data[4:23]), **FormatState().context(0))
    flags_at = T.common_header.build(dict(hdr, flags=0xA55A), **FormatState().context(0)).index(b"\x5a\xa5")
    data[4 + flags_at] |= 1
    p = tmp_path / "open.000001"
    p.write_bytes(bytes(data))
    sc = scan_file(str(p), None)
    assert sc.in_use
    assert sc.last_boundary == sc.size  # it ends with a committed transaction


def test_truncated_file_fails_where_the_plain_reader_does(tmp_path):
    p = tmp_path / "cut.000001"
    p.write_bytes(open(SAMPLES[0], "rb").read()[:3000])
    expected = plain([str(p)])
    assert expected[-1][0] == "error"
    for sb in (None, 1, 500):
        assert by_splits([str(p)], sb)[0] == expected


def test_expand_paths_globs_in_binlog_order(tmp_path):
    for n in ("b.999999", "b.1000000", "b.000010"):
        (tmp_path / n).write_bytes(b"")
    got = expand_paths([str(tmp_path / "b.*")])
    assert [p.rsplit("/", 1)[1] for p in got] == ["b.000010", "b.999999", "b.1000000"]
    assert sorted(["x.10", "x.9"], key=natural_key) == ["x.9", "x.10"]
    with pytest.raises(BinlogError, match="no file matches"):
        expand_paths([str(tmp_path / "none*")])
    with pytest.raises(BinlogError, match="No such file"):
        expand_paths([str(tmp_path / "missing.000001")])
    with pytest.raises(BinlogError, match="no binlog file in this folder"):
        expand_paths([str(tmp_path)])  # files, but none begins with the magic bytes


def test_expand_paths_reads_folders_globs_and_indexes(tmp_path):
    """What a user points the data source at: a server's folder (its binlogs by their magic
    bytes, subfolders too, in binlog order: name then number; not the index, the GTID state or
    an empty file), a glob over it (the index and state files beside the logs left out, a file
    whose magic is damaged kept, to be reported), its index file, several of them."""
    logs = tmp_path / "logs"
    (logs / "sub").mkdir(parents=True)
    body = open(SAMPLES[0], "rb").read()
    for n in ("b.1000000", "b.000010", "b.999999", "sub/a.000001", "a.000002"):
        (logs / n).write_bytes(body)
    (logs / "b.index").write_text("./b.000010\n./b.999999\n./b.1000000\n")
    (logs / "b.state").write_text("0-1-5\n")
    (logs / "notes.txt").write_text("not a binlog")
    (logs / "sub" / "empty.000002").write_bytes(b"")
    names = lambda got: [os.path.relpath(p, logs) for p in got]  # noqa: E731
    assert names(expand_paths([str(logs)])) == [
        "a.000002", "b.000010", "b.999999", "b.1000000", "sub/a.000001"]
    assert names(expand_paths([f"file://{logs}/b.*"])) == ["b.000010", "b.999999", "b.1000000"]
    assert names(expand_paths([str(logs / "b.index")])) == ["b.000010", "b.999999", "b.1000000"]
    assert names(expand_paths([str(logs / "sub"), str(logs / "a.*")])) == [
        "sub/a.000001", "a.000002"]
    (logs / "b.000011").write_bytes(b"\xfebXn" + body[4:])  # damaged magic: read, then refused
    assert "b.000011" in names(expand_paths([str(logs / "b.0*")]))
    assert "b.000011" not in names(expand_paths([str(logs)]))