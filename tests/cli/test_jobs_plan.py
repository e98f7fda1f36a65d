"""The plan of `--jobs N` on the compiled walk (cli/plan.py) cuts where spark.split.scan_file
cuts, and `--jobs 2` with a real standard output (the spool's files copied by os.sendfile and
written again by the next pieces) writes what `--jobs 1` writes.

- every sample and corpus file, whole, truncated and with a byte changed, at many split sizes,
  with walks of a few records at a time (a cut whose boundary lies in the next walk): the same
  cuts, the same GTID count, and where the walk stops early (damage), the cuts before it and the
  offset the parent reads on from;
- the command in a process of its own, standard output a file: pieces of every size written
  over the same spool files, longer texts before shorter ones.
"""
import os
import subprocess
import sys

import pytest

from binlog_grammar import native
from binlog_grammar.cli import plan
from binlog_grammar.spark.split import scan_file

from helpers.jobs import run
from helpers.paths import ROOT, corpus_files

SAMPLES = sorted(str(p) for p in (ROOT / "samples").glob("mariadb-*"))
SIZES = (None, 1, 64, 300, 1000, 4096, 50_000)

needs_compiled = pytest.mark.skipif(native.framing() is None,
                                    reason="the compiled walk is not built (the plan is scan_file's)")


def files():
    return SAMPLES + [str(p) for p in corpus_files()]


def check(path, split):
    """The walk's cuts are scan_file's, or the prefix of them before where its walk stopped."""
    sc = scan_file(path, split)
    whole = sc.splittable and sc.scanned_to == sc.size
    walk = plan.cut_walk(path, split)
    if walk is None:
        assert not sc.splittable or not whole or len(sc.cuts) == 1, (path, split)
        return 0
    cuts = list(walk)
    for c in cuts[1:]:
        assert c["state"] == replay_state(walk, path, c["start"]), (path, split, c["start"])
    got = [{k: v for k, v in c.items() if k != "state"} for c in cuts]
    assert walk.whole == whole, (path, split)
    if whole:
        assert got == sc.cuts, (path, split)
        assert walk.gtid_events == sc.gtid_events, (path, split)
    else:
        assert got == sc.cuts[:len(got)], (path, split)
        assert walk.rest == sc.cuts[len(got)]["start"], (path, split)
    return len(got)


def replay_state(walk, path, start):
    """What a cut lists for dump's replay form (cli/replay_jobs.replay_from), from the plain walk:
    the statements and format events before `start` (not the file's first) and the last GTID
    event, each (offset, length); None after a LOAD DATA block, a payload or encryption, or more
    than plan.STATE_REFS of them."""
    from binlog_grammar.binlog.framing import Walk

    refs, gtid = [], None
    for at, code, length in Walk(path, walk.hl, 4, start, short=True):
        if code in walk.c.unsure:
            return None
        if code in walk.c.state and at != 4:
            refs.append((at, length))
        if code in walk.c.gtid_set:
            gtid = (at, length)
    return None if len(refs) > plan.STATE_REFS else (tuple(refs), gtid)


@needs_compiled
@pytest.mark.parametrize("batch", [1, 3, plan.BATCH])
def test_cuts_are_scan_files(monkeypatch, batch):
    monkeypatch.setattr(plan, "BATCH", batch)
    cut = 0
    for path in files():
        for split in SIZES:
            cut += check(path, split)
    assert cut > 100  # the files are cut (else the test compares nothing)


@needs_compiled
def test_damaged_files(tmp_path):
    """Truncated and flipped copies: the walk stops where scan_file's stops, and the cuts before
    it are scan_file's."""
    stopped = 0
    for src in files():
        data = open(src, "rb").read()
        if len(data) < 200:
            continue
        for at in (len(data) // 3, len(data) // 2, len(data) - 7):
            for how in ("truncated", "flipped"):
                bad = bytearray(data[:at] if how == "truncated" else data)
                if how == "flipped":
                    bad[at + 9 if at + 9 < len(bad) else at] ^= 0x5A  # often an event_length
                p = tmp_path / f"{os.path.basename(src)}-{how}-{at}"
                p.write_bytes(bytes(bad))
                for split in (64, 1000):
                    check(str(p), split)
                    w = plan.cut_walk(str(p), split)
                    if w is not None:
                        list(w)
                        stopped += not w.whole
    assert stopped > 5


def dump(argv, out_path, split):
    env = dict(os.environ, BINLOG_GRAMMAR_SPLIT_BYTES=str(split))
    with open(out_path, "wb") as out:
        p = subprocess.run([sys.executable, "-m", "binlog_grammar", *argv], stdout=out,
                           stderr=subprocess.PIPE, cwd=ROOT, env=env, timeout=300)
    return p.returncode, out_path.read_bytes(), p.stderr


@pytest.mark.parametrize("argv", [["dump", "--format", "text"], ["dump", "--format", "jsonl"], ["dump", "--format", "hexdump"]],
                         ids=" ".join)
def test_real_stdout(tmp_path, argv):
    """Standard output a file: the workers' texts copied by os.sendfile from spool files that
    the next pieces write over (a shorter text after a longer one must not leave the end of the
    longer one in the output), equal to --jobs 1."""
    inputs = SAMPLES + [str(p) for p in corpus_files()][:6]
    one = dump([*argv, "--jobs", "1", *inputs], tmp_path / "one", 300)
    for split in (300, 5000):
        many = dump([*argv, "--jobs", "2", *inputs], tmp_path / "many", split)
        assert many[0] == one[0] and many[2] == one[2], (split, many[2])
        assert many[1] == one[1], split
    assert one[1]


def _runs(path, raw):
    """The texts of the runs the compiled lane writes over `path` (raw: its bytes)."""
    from binlog_grammar.binlog.stream import Written, open_stream
    from binlog_grammar.output.text_lane import TextLane

    s = open_stream([path])
    s.lane = TextLane(native.lane())
    s.lane.raw = raw
    return [se.text for se in s.events() if type(se) is Written]


@pytest.mark.server
@pytest.mark.skipif(native.lane() is None, reason="the compiled lane is not built")
def test_raw_lane_text_is_the_text_encoded(tmp_path):
    """The lane's raw runs (what a worker's spool writes) are its str runs encoded as the spool
    encodes them (UTF-8, surrogateescape), on rows whose values are not UTF-8 (latin1 text and
    random bytes in a BLOB, written by a MariaDB server), and `dump --jobs 2` with a real
    standard output writes what --jobs 1 writes."""
    import random
    import shutil

    from helpers.services import need_mariadb
    from binlog_grammar.testing.mariadb import MariaDB

    need_mariadb()
    rnd = random.Random(27)
    with MariaDB(["--character-set-server=latin1", "--collation-server=latin1_swedish_ci"]) as db:
        statements = ["CREATE DATABASE b;",
                      "CREATE TABLE b.t (id INT PRIMARY KEY, v VARCHAR(40), x BLOB) ENGINE=InnoDB;"]
        for i in range(400):
            blob = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 40))).hex()
            statements.append(f"INSERT INTO b.t VALUES ({i}, 'caf\u00e9 {i}', x'{blob}');")
        db.sql("\n".join(statements))
        db.sql("FLUSH BINARY LOGS;")
        path = tmp_path / "bin.000001"
        shutil.copy(db.binlogs()[0], path)
    text, raw = _runs(path, False), _runs(path, True)
    assert len(raw) == len(text)
    escaped = 0
    for t, r in zip(text, raw):
        assert type(r) is bytes and r == t.encode("utf-8", "surrogateescape")
        escaped += any(0xDC80 <= ord(c) <= 0xDCFF for c in t)
    assert escaped  # the lane wrote bytes that are not UTF-8
    one = dump(["dump", "--format", "text", "--jobs", "1", path], tmp_path / "one", 2000)
    many = dump(["dump", "--format", "text", "--jobs", "2", path], tmp_path / "many", 2000)
    assert many == one


@pytest.mark.skipif(native.lane() is None, reason="the compiled lane is not built")
def test_a_kept_lane_forgets_table_ids():
    """A worker's lane goes on from piece to piece knowing the tables and plans, not the table
    ids: after forget_ids() it does not write a rows event whose TABLE_MAP it has not passed
    (the piece's reader would need the pieces before it), which it wrote before."""
    from binlog_grammar.binlog.framing import scan
    from binlog_grammar.binlog.stream import open_stream
    from binlog_grammar.generated.catalog import EVENTS
    from binlog_grammar.output.text_lane import MAX_TEXT, TextLane

    s = open_stream([SAMPLES[0]])
    lane = s.lane = TextLane(native.lane())
    list(s.events())
    events = list(scan(SAMPLES[0]))
    rows = [pos for (pos, code, _n), (_p, prev, _l) in zip(events[1:], events)
            if EVENTS[code].row_op and EVENTS[prev].name == "TABLE_MAP_EVENT"]
    wrote = 0
    for pos in rows:
        limit = lane.base + len(lane.map)
        if not lane.base <= pos < limit:
            continue
        end = lane.cfg.text(lane.map, lane.base, pos, limit, MAX_TEXT)[1]
        wrote += end > pos
    assert wrote  # the lane knows their tables' ids
    lane.forget_ids()
    for pos in rows:
        limit = lane.base + len(lane.map)
        if lane.base <= pos < limit:
            assert lane.cfg.text(lane.map, lane.base, pos, limit, MAX_TEXT)[1] == pos


@pytest.mark.skipif(native.lane() is None, reason="the compiled lane is not built")
def test_the_lane_goes_on_after_a_full_run(monkeypatch):
    """Runs of at most a few hundred bytes of text (the lane stops in the middle of many
    events' runs): a worker asks the lane to go on from where it stopped, without an event read
    by Python, and writes what --jobs 1 writes."""
    from binlog_grammar.cli import parallel
    from binlog_grammar.output import text_lane

    calls = []
    go_on = text_lane.TextLane.go_on

    def counted(self, f, pos, stop=None):
        ran = go_on(self, f, pos, stop)
        calls.append(ran is not None)
        return ran

    monkeypatch.setattr(text_lane, "MAX_TEXT", 300)
    monkeypatch.setattr(text_lane.TextLane, "go_on", counted)
    monkeypatch.setenv(parallel.ENV_SPLIT, "2000")
    monkeypatch.setattr(parallel, "EXECUTOR", None)
    one = run(["dump", "--format", "text", "--jobs", "1", *SAMPLES])
    # in this process, as a worker runs it: the lane went on after full runs
    from binlog_grammar.binlog.stream import Filters
    from binlog_grammar.cli.pieces import Config, Piece, work

    cfg = Config("text", Filters(None, None, None, None, None, None, None, None, None))
    assert work(cfg, [Piece(SAMPLES[0], 0)], [SAMPLES[0]]).text
    assert any(calls)
    for jobs in (2, 3):
        assert run(["dump", "--format", "text", "--jobs", str(jobs), *SAMPLES]) == one


def test_charsets_before_walk_the_file_once(monkeypatch):
    """A worker's pieces of a file ask, in input order, what the file's QUERY_EVENTs before
    each said of character sets: the answers are those of a walk from the file's start (also
    out of order), and the walks go on from one piece to the next instead of walking the file
    from its start again for each (quadratic in the file's size)."""
    from binlog_grammar.binlog import framing
    from binlog_grammar.cli import parallel, pieces

    walked = []
    walk = framing.Walk

    class Counted(walk):
        def __iter__(self):
            for item in super().__iter__():
                walked.append(item)
                yield item

    monkeypatch.setattr(framing, "Walk", Counted)
    for path in SAMPLES:
        cut = parallel.plan_file(path, 0, 0, 300, 0)[0]
        events = sum(1 for _ in walk(path, 19, short=True))
        assert len(cut) > 2
        pieces._BEFORE.clear()
        walked.clear()
        got = [pieces._charsets_before(path, p.start) for p in cut]
        assert len(walked) <= events  # once over the file, not once per piece
        for p, cs in list(zip(cut, got))[::-1]:  # out of order: from the start again
            pieces._BEFORE.clear()
            fresh = pieces._charsets_before(path, p.start)
            assert (cs.server, cs.databases) == (fresh.server, fresh.databases)
            again = pieces._charsets_before(path, p.start)
            assert (again.server, again.databases) == (fresh.server, fresh.databases)
