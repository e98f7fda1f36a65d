"""`dump --format jsonl --jobs N`: a worker's compiled JSON-lines lane goes on from one piece of a
file to its next (cli/pieces.kept_lane), knowing the file's tables and plans, and nothing else:

- after forget_ids() it writes no rows event whose TABLE_MAP it has not passed (the piece's
  reader would need the pieces before it), GTID or transaction number of the last piece;
- a worker's pieces read one after another with a kept lane write what each piece read with a
  fresh lane writes, also when the pieces of another worker between them changed the server's
  character set (the kept plans were made for the one before: the piece's JsonlWriter and the
  character sets in force where it starts decide), on a binlog a MariaDB server wrote, the
  samples and the corpus;
- the picked walk of the character sets before a piece gives the QUERY_EVENTs and the stop the
  plain walk gives, on whole and damaged files;
- standard output a slow pipe: what the parent copied into it is not changed after.
"""
import os

import pytest

from binlog_grammar import native

from helpers.paths import ROOT, corpus_files

SAMPLES = sorted(str(p) for p in (ROOT / "samples").glob("mariadb-*"))

needs_lane = pytest.mark.skipif(native.jsonl_lane() is None or native.rows() is None,
                                reason="the compiled JSON-lines lane is not built")


def _cfg(rows_only=False):
    from binlog_grammar.binlog.stream import Filters
    from binlog_grammar.cli.pieces import Config

    return Config("jsonl", Filters(None, None, None, None, None, None, None, None, None),
                  rows_only=rows_only)


def _worker(path, split, parity, rows_only=False):
    """(texts of a worker's pieces read one after another, kept lane; each read alone, fresh),
    the worker taking every other piece of `path` cut every `split` bytes."""
    from binlog_grammar.cli import parallel, pieces

    cut = parallel.plan_file(path, 0, 0, split, 0)[0][parity::2]
    cfg = _cfg(rows_only)
    pieces._KEPT = None
    pieces._BEFORE.clear()
    kept = [pieces.work(cfg, [p], [path]) for p in cut]
    fresh = []
    for p in cut:
        pieces._KEPT = None
        pieces._BEFORE.clear()
        fresh.append(pieces.work(cfg, [p], [path]))
    pieces._KEPT = None
    return [(r.text, r.sequential) for r in kept], [(r.text, r.sequential) for r in fresh]


def _same(path, splits):
    pieces_read = 0
    for split in splits:
        for parity in (0, 1):
            for rows_only in (False, True):
                kept, fresh = _worker(path, split, parity, rows_only)
                assert kept == fresh, (path, split, parity, rows_only)
                pieces_read += len(kept)
    return pieces_read


@needs_lane
def test_a_kept_lane_writes_what_a_fresh_one_writes():
    """The samples and a few corpus files, cut small: every piece of a worker the same with the
    lane it kept as with a fresh one."""
    n = 0
    for path in SAMPLES + [str(p) for p in corpus_files()][:6]:
        n += _same(path, (300, 2000))
    assert n > 50


@needs_lane
def test_the_lane_goes_on_after_a_full_run(monkeypatch):
    """Runs of at most a single record (the lane stops in the middle of many events'
    runs): a worker asks the lane to go on from where it stopped, without an event read by
    Python, and its pieces write what dump --format jsonl --jobs 1 writes."""
    from binlog_grammar.output import jsonl_lane

    calls = []
    go_on = jsonl_lane.JsonlLane.go_on

    def counted(self, f, pos, stop=None):
        ran = go_on(self, f, pos, stop)
        calls.append(ran is not None)
        return ran

    files = SAMPLES + [str(p) for p in corpus_files()][:6]
    ones = [_in_process(["dump", "--format", "jsonl", path]) for path in files]
    monkeypatch.setattr(jsonl_lane, "MAX_BYTES", 1)
    monkeypatch.setattr(jsonl_lane.JsonlLane, "go_on", counted)
    for path, one in zip(files, ones):
        assert _two_workers(path, 2000) == one, path
    assert any(calls)


def _two_workers(path, split):
    """The text of the pieces of `path` cut every `split` bytes, read by two workers in this
    process (each its every other piece, one after another, its lane kept), in input order."""
    from binlog_grammar.cli import parallel, pieces

    cut = parallel.plan_file(path, 0, 0, split, 0)[0]
    texts = {}
    for parity in (0, 1):
        pieces._KEPT = None
        pieces._BEFORE.clear()
        for n in range(parity, len(cut), 2):
            r = pieces.work(_cfg(), [cut[n]], [path])
            assert not r.sequential, (path, n, r.sequential)
            texts[n] = r.text
    pieces._KEPT = None
    return "".join(texts[n] for n in range(len(cut)))


def _in_process(argv):
    """The standard output of the command run in this process (surrogateescape text)."""
    import contextlib
    import io

    from binlog_grammar.cli import main

    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", write_through=True)
    with contextlib.redirect_stdout(out):
        assert main([str(a) for a in argv]) in (0, None)
        out.flush()
    return raw.getvalue().decode("utf-8", "surrogateescape")


@needs_lane
def test_a_kept_lane_forgets_ids_gtid_and_transaction(monkeypatch):
    """After forget_ids() the lane writes no rows event whose TABLE_MAP it has not passed (it
    wrote them before), and it has no GTID, transaction number or event of the last piece."""
    from binlog_grammar.binlog.framing import scan
    from binlog_grammar.binlog.stream import Written, open_stream
    from binlog_grammar.generated.catalog import EVENTS
    from binlog_grammar.output.dump import JsonlWriter
    from binlog_grammar.output.jsonl_lane import MAX_BYTES, JsonlLane, _gtid_json

    path = SAMPLES[0]
    s = open_stream([path])
    writer = JsonlWriter()
    lane = s.lane = JsonlLane(native.jsonl_lane(), writer)
    for se in s.events():
        if type(se) is not Written:
            lane.seen(se)
            list(writer.lines(se))
    events = list(scan(path))
    rows = [pos for (pos, code, _n), (_p, prev, _l) in zip(events[1:], events)
            if EVENTS[code].row_op and EVENTS[prev].name == "TABLE_MAP_EVENT"]

    def wrote():
        n = 0
        for pos in rows:
            limit = lane.base + len(lane.map)
            if lane.base <= pos < limit:
                out = lane.mod.lines(lane.map, lane.base, pos, limit, lane.cfg,
                                     _gtid_json(lane.gtid or "0-1-1"), lane.tx_seq, lane.tables,
                                     lane.ids, lane.plans, MAX_BYTES)
                n += out[1] > pos
        return n

    assert lane.plans and lane.tx_seq and lane.gtid and wrote()  # it knows their ids
    plans, tables = dict(lane.plans), dict(lane.tables)
    lane.forget_ids()
    assert wrote() == 0
    assert (lane.gtid, lane.tx_seq, lane.last) == (None, 0, None)
    assert lane.plans == plans and lane.tables == tables  # what it learned of the file stays


def _charset_binlog(tmp_path):
    """A binlog (a server's second) of rows of latin1 text in a table without charset metadata
    (read as UTF-8 while no QUERY_EVENT has said otherwise), with, in its middle, a CREATE TABLE
    run under collation_server latin1: the JSON of the rows before and after it differ (their
    bytes C3 A9 are UTF-8 too, so the lane writes both)."""
    import shutil

    from helpers.services import need_mariadb
    from binlog_grammar.testing.mariadb import MariaDB

    need_mariadb()
    with MariaDB() as db:
        db.sql("CREATE DATABASE b; CREATE TABLE b.t (id INT PRIMARY KEY, v VARCHAR(40)) "
               "ENGINE=InnoDB DEFAULT CHARSET=latin1; FLUSH BINARY LOGS;")
        rows = [f"INSERT INTO b.t VALUES ({i}, CONCAT(x'C3A9', ' {i}'));" for i in range(300)]
        db.sql("\n".join(rows[:150] + ["SET SESSION collation_server = latin1_swedish_ci;",
                                       "CREATE TABLE b.u (id INT PRIMARY KEY);"] + rows[150:]
                         + ["FLUSH BINARY LOGS;"]))
        path = tmp_path / "bin.000002"
        shutil.copy(db.binlogs()[1], path)
    return str(path)


@pytest.mark.server
@needs_lane
def test_a_kept_lane_follows_the_character_sets_between_pieces(tmp_path, monkeypatch):
    """The server's character set changes in a piece another worker reads: a worker's next
    piece writes its rows under the new one, as a fresh lane (and --jobs 1) does, not with the
    plans its lane made under the old one; and dump --jobs 2 writes what --jobs 1 writes."""
    import json
    import subprocess
    import sys

    from binlog_grammar.output import jsonl_lane

    path = _charset_binlog(tmp_path)
    one = subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", "--format", "jsonl",
                          path], capture_output=True, cwd=ROOT, timeout=300)
    records = [json.loads(line) for line in one.stdout.decode("utf-8").splitlines()]
    values = {r["after"]["@2"].split()[0] for r in records if "op" in r}
    assert values == {"\u00e9", "\u00c3\u00a9"}, values  # the rows before and after differ
    assert _same(path, (600, 1500, 4000)) > 20
    # its runs one record long: the lane goes on from run to run over whole transactions
    monkeypatch.setattr(jsonl_lane, "MAX_BYTES", 1)
    assert _two_workers(path, 1500) == one.stdout.decode("utf-8", "surrogateescape")
    for split in (600, 4000):
        env = dict(os.environ, BINLOG_GRAMMAR_SPLIT_BYTES=str(split))
        many = subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", "--format",
                               "jsonl", "--jobs", "2", path], capture_output=True, cwd=ROOT,
                              env=env, timeout=300)
        assert (many.returncode, many.stdout, many.stderr) == \
            (one.returncode, one.stdout, one.stderr), split


@needs_lane
def test_the_picked_walk_is_the_walk(tmp_path):
    """walks.picked gives the events of the wanted codes and the stop the plain walk gives,
    on the samples, the corpus and damaged copies, also when the codes wanted change as it
    goes (after a FORMAT_DESCRIPTION_EVENT); with a Last of the GTID codes (MariaDB's and
    MySQL's), the last GTID event before each event given and at the walk's end."""
    from binlog_grammar.binlog.framing import Walk
    from binlog_grammar.cli.walks import Last, picked as _picked

    files = SAMPLES + [str(p) for p in corpus_files()]
    for src in list(files):
        data = open(src, "rb").read()
        for at in (len(data) // 2, len(data) - 7):
            bad = bytearray(data)
            bad[at] ^= 0x5A
            p = tmp_path / f"{os.path.basename(src)}-{at}"
            p.write_bytes(bytes(bad[:at + 30] if at % 2 else bad))
            files.append(str(p))
    compared = 0
    for path in files:
        for start in (4, 400):
            plain = Walk(path, 19, start, short=True)
            if plain.mod is None:
                pytest.skip("the compiled walk is not built")
            want = [r for r in plain if r[1] in (2, 15)]
            keep = bytearray(256)
            keep[15] = 1  # FORMAT_DESCRIPTION_EVENT; QUERY_EVENT once one is met
            picked, got = Walk(path, 19, start, short=True), []
            for r in _picked(picked, keep):
                got.append(r)
                keep[2] = 1
            first = next((i for i, r in enumerate(want) if r[1] == 15), None)
            assert got == (want[first:] if first is not None else []), path
            assert picked.stop == plain.stop, path
            compared += len(got)
            gtid = bytearray(c in (162, 33) for c in range(256))
            everything, before, ref = list(Walk(path, 19, start, short=True)), {}, None
            for r in everything:
                before[r], ref = ref, r if gtid[r[1]] else ref
            last, keep = Last(gtid), bytearray(c in (2, 15, 16) for c in range(256))
            for r in _picked(Walk(path, 19, start, short=True), keep, last):
                assert last.ref == before[r], (path, r)
            assert last.ref == ref, path
    assert compared > 20


@pytest.mark.parametrize("fmt", ["text", "jsonl"])
def test_jobs_into_a_slow_pipe(fmt):
    """Standard output a pipe whose reader waits before it reads: the parent's copies of the
    workers' spool files into it are the texts, not what the next pieces wrote over those files
    before the reader came (sendfile into a pipe lends the file's pages)."""
    import subprocess
    import sys
    import time

    argv = [sys.executable, "-m", "binlog_grammar", "dump", "--format", fmt, *SAMPLES]
    one = subprocess.run(argv + ["--jobs", "1"], capture_output=True, cwd=ROOT, timeout=300)
    env = dict(os.environ, BINLOG_GRAMMAR_SPLIT_BYTES="600")
    for _ in range(3):
        p = subprocess.Popen(argv + ["--jobs", "2"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, cwd=ROOT, env=env)
        time.sleep(1.0)  # the workers write on, the pipe holds what the parent copied into it
        out, err = p.communicate(timeout=300)
        assert (p.returncode, out, err) == (one.returncode, one.stdout, one.stderr)
