"""`stats`'s compiled loop (output/stats_loop.py, binlog_grammar.native._stats) counts what the
Python path counts, on binlogs where it counts most of the transactions: a MariaDB sample grown to
hundreds of transactions (its row transactions copied with new GTIDs, times and repeated rows
events, between its DDL, which the Python path reads), then the same with bytes of one event
changed and its CRC32 made again (so the damage reaches the loop's GTID, TABLE_MAP and row-image
reading), and several files at once. Text, --json, --top and the exit status and stderr must be
those of `BINLOG_GRAMMAR_BACKEND=python binlog-grammar stats` (the backend's name aside), and the
loop must have counted most transactions (else these tests would check nothing). Last, the bounded
run of tools/fuzz_stats.py: the same comparison on mutants, the extensions under ASan+UBSan
(BINLOG_GRAMMAR_STATS_FUZZ_EXECS executions, default 300)."""
import importlib.util
import json
import os
import random
import zlib

import pytest

from binlog_grammar import native
from binlog_grammar.binlog.framing import scan
from binlog_grammar.cli import main
from binlog_grammar.generated.catalog import EVENTS
from binlog_grammar.output import stats_loop
from helpers.native import damage
from helpers.paths import ROOT

pytestmark = pytest.mark.skipif(
    native.unavailable() is not None or native._extension("_stats")[0] is None,
    reason="the compiled extensions are not built")

SAMPLE = ROOT / "samples" / "mariadb-10.11-sample.000001"
HEADER, CRC = 19, 4  # the v4 common header and the CRC32 footer of the sample
TIMESTAMP, LENGTH, LOG_POS = slice(0, 4), slice(9, 13), slice(13, 17)


def _events(path):
    """[(name, bytes of the event without its CRC32)] of a binlog; the magic first."""
    data = path.read_bytes()
    return data[:4], [(EVENTS[code].name, bytearray(data[pos:pos + n - CRC]))
                      for pos, code, n in scan(path)]


def _assemble(magic, events) -> bytes:
    """A binlog of these events, each one's length, end_log_pos and CRC32 made again."""
    out = bytearray(magic)
    for _name, ev in events:
        ev = bytearray(ev)
        ev[LENGTH] = (len(ev) + CRC).to_bytes(4, "little")
        ev[LOG_POS] = (len(out) + len(ev) + CRC).to_bytes(4, "little")
        out += ev + zlib.crc32(bytes(ev)).to_bytes(4, "little")
    return bytes(out)


def _grown(copies=60, seed=27, first_seq=100):
    """The sample's events with its row transactions (GTID .. XID) repeated `copies` times: new
    seq_nos, an XID `k % 4` seconds after its GTID, each rows event 1 to 3 times; its DDL
    transactions and those of compressed rows events come back now and then (the Python path
    reads them)."""
    rnd = random.Random(seed)
    magic, events = _events(SAMPLE)
    head, txs, tx, tail = [], [], None, []
    for name, ev in events:
        if name == "GTID_EVENT":
            tx = [(name, ev)]
            txs.append(tx)
        elif tx is not None and name != "ROTATE_EVENT":
            tx.append((name, ev))
        elif tx is None:
            head.append((name, ev))
        else:
            tail.append((name, ev))
    ddl = [t for t in txs if any(n == "QUERY_EVENT" for n, _e in t)]
    # MariaDB's compressed rows events are inflated by the Python path: their transactions too
    packed = [t for t in txs if t not in ddl and any(EVENTS_BY_NAME[n].decode for n, _e in t)]
    plain = [t for t in txs if t not in ddl and t not in packed]
    out, seq = list(head), first_seq
    for k in range(copies):
        pick = ddl if k % 9 == 4 else packed if k % 7 == 2 else plain
        t = [(n, bytearray(e)) for n, e in rnd.choice(pick)]
        seq += 1
        t[0][1][HEADER:HEADER + 8] = seq.to_bytes(8, "little")
        base = int.from_bytes(t[0][1][TIMESTAMP], "little") + 60 * k
        for n, e in t:
            e[TIMESTAMP] = base.to_bytes(4, "little")
        t[-1][1][TIMESTAMP] = (base + k % 4).to_bytes(4, "little")
        for n, e in t:
            out += [(n, e)] * (rnd.randint(1, 3) if EVENTS_BY_NAME[n].row_op else 1)
    return magic, out + tail


EVENTS_BY_NAME = {et.name: et for et in EVENTS.values()}


def stats(monkeypatch, capsys, backend, *argv):
    monkeypatch.setenv(native.ENV, backend)
    try:
        rc = main(["stats", *map(str, argv)])
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    lines = [ln for ln in out.splitlines() if not ln.startswith("backend: ")
             and not ln.startswith('  "backend": ')]
    return rc, lines, err


@pytest.fixture
def counted(monkeypatch):
    """How many transactions the compiled loop counted (and the Stats' count) per stats run."""
    runs = []
    real_run, real_close = stats_loop.Loop.run, stats_loop.Loop.close

    def run(self, mm, pos, size):
        before = self.st.tx_count
        got = real_run(self, mm, pos, size)
        self.loop_tx = getattr(self, "loop_tx", 0) + self.st.tx_count - before
        return got

    def close(self):
        real_close(self)
        runs.append((getattr(self, "loop_tx", 0), self.st.tx_count))

    monkeypatch.setattr(stats_loop.Loop, "run", run)
    monkeypatch.setattr(stats_loop.Loop, "close", close)
    return runs


def same(monkeypatch, capsys, *argv):
    c = stats(monkeypatch, capsys, "c", *argv)
    py = stats(monkeypatch, capsys, "python", *argv)
    assert c == py
    return c


@pytest.mark.parametrize("extra", [(), ("--json",), ("--top", "3"), ("--top", "0", "--json"),
                                   ("--top", "500")])
def test_grown_sample_counts_alike(monkeypatch, capsys, counted, tmp_path, extra):
    path = tmp_path / "grown.000001"
    path.write_bytes(_assemble(*_grown()))
    rc, out, _err = same(monkeypatch, capsys, *extra, path)
    assert rc == 0
    loop_tx, total = counted[0]
    assert total >= 60 and loop_tx > total // 2  # the loop counted most transactions
    if "--json" in extra:
        d = json.loads("\n".join(out))
        assert sum(v["insert"] + v["update"] + v["delete"] for v in d["tables"].values()) > 100


def test_several_files_count_alike(monkeypatch, capsys, counted, tmp_path):
    """Two grown files and the sample: transactions numbered across files (ties in the top lists
    go to the first), the tables of each file its own."""
    paths = []
    for k in range(2):
        paths.append(tmp_path / f"grown.00000{k + 1}")
        paths[-1].write_bytes(_assemble(*_grown(copies=40, seed=k, first_seq=1000 * k)))
    rc, _out, _err = same(monkeypatch, capsys, "--json", "--top", "7", *paths, SAMPLE)
    assert rc == 0 and counted[0][0] > 50


def _damaged(rnd):
    """A grown sample with one GTID, TABLE_MAP or rows event changed (bytes flipped, or cut,
    or added by helpers.native.damage), lengths and CRC32s made again."""
    magic, events = _grown(copies=24, seed=rnd.randrange(1000))
    hot = [i for i, (n, _e) in enumerate(events)
           if n in ("GTID_EVENT", "TABLE_MAP_EVENT", "XID_EVENT", "ANNOTATE_ROWS_EVENT")
           or EVENTS_BY_NAME[n].row_op]
    i = rnd.choice(hot[len(hot) // 3:])  # after the first copies: the loop knows the tables
    name, ev = events[i]
    if rnd.random() < 0.5:
        body = bytearray(ev[HEADER:])
        for _ in range(rnd.randint(1, 3)):
            body[rnd.randrange(len(body))] ^= 1 << rnd.randrange(8)
        body = bytes(body)
    else:
        body = damage(bytes(ev[HEADER:]), rnd)
    events[i] = (name, ev[:HEADER] + body)
    return _assemble(magic, events), (i, name)


def test_damaged_events_count_alike(monkeypatch, capsys, tmp_path):
    rnd = random.Random(2627)
    for k in range(40):
        data, what = _damaged(rnd)
        path = tmp_path / f"damaged-{k}.000001"
        path.write_bytes(data)
        for extra in ((), ("--json", "--top", "4")):
            c = stats(monkeypatch, capsys, "c", *extra, path)
            py = stats(monkeypatch, capsys, "python", *extra, path)
            assert c == py, (k, what)


def _last_plain(events, name):
    """The index of the `name` event (or the first rows event: "rows") in the last transaction
    of plain rows events."""
    gtids = [i for i, (n, _e) in enumerate(events) if n == "GTID_EVENT"]
    g, end = next((g, end) for g, end in list(zip(gtids, gtids[1:]))[::-1]
                  if all(n != "QUERY_EVENT" and not EVENTS_BY_NAME[n].decode
                         for n, _e in events[g:end]))
    return next(i for i in range(g, end) if events[i][0] == name
                or name == "rows" and EVENTS_BY_NAME[events[i][0]].row_op)


# MariaDB GTID_EVENT data after seq_no (8) and domain_id (4): flags2, then what it announces
_FLAGS2 = HEADER + 12
_GTIDS = {  # (flags2 bits, what follows flags2); a GTID's data is 19 bytes or more
    "standalone": (0x01, b"\0" * 6),
    "commit-id": (0x02, b"\x07" * 8),
    "commit-id-cut": (0x02, b"\x07" * 6),
    "xa-prepared": (0x40, (1).to_bytes(4, "little") + b"\x02\x00ab" + b"\0" * 2),
    "xa-gtrid-past-the-end": (0x80, b"\0" * 4 + b"\xc8\x00ab"),
    "flags-extra-engines": (0, b"\x01\x05" + b"\0" * 4),
    "flags-extra-thread": (0, b"\x10\x01\x02\0\0\0"),
    "flags-extra-alter-cut": (0, b"\x04" + b"\x05" * 5),
    "padding-not-zero": (0, b"\0\0\x09\0\0\0"),
    "short": (0, b""),
    "long-zero": (0, b"\0" * 40),
}


@pytest.mark.parametrize("how", sorted(_GTIDS))
def test_gtid_bodies_count_alike(monkeypatch, capsys, tmp_path, how):
    """A GTID of a row transaction the loop would count, its flags2 and body changed: what the
    Python path reads in it (a standalone group, a commit id, an XA xid, extra flags and their
    fields, padding, bytes missing) decides, whether the loop counts it or gives it back."""
    magic, events = _grown(copies=30, seed=5)
    # the last transaction of plain rows events (the loop counts it unless its GTID stops it)
    i = _last_plain(events, "GTID_EVENT")
    flags, rest = _GTIDS[how]
    ev = bytearray(events[i][1][:_FLAGS2 + 1])
    ev[_FLAGS2] |= flags
    events[i] = ("GTID_EVENT", ev + rest)
    path = tmp_path / f"gtid-{how}.000001"
    path.write_bytes(_assemble(magic, events))
    for extra in ((), ("--json",)):
        same(monkeypatch, capsys, *extra, path)


_EVENTS = {  # which event, and its data (after the header) made from the old one
    "xid-long": ("XID_EVENT", _last_plain, lambda d: d + b"\1\2\3\4"),
    "xid-short": ("XID_EVENT", _last_plain, lambda d: d[:4]),
    "first-xid-long": ("XID_EVENT", lambda ev, n: next(
        i for i, (m, _e) in enumerate(ev) if m == n), lambda d: d + b"\0"),
    "annotate-any-bytes": ("ANNOTATE_ROWS_EVENT", _last_plain, lambda d: b"\xff\0\n*/ \\"),
    "annotate-empty": ("ANNOTATE_ROWS_EVENT", _last_plain, lambda d: b""),
    "gtid-list-cut": ("GTID_LIST_EVENT", lambda ev, n: next(
        i for i, (m, _e) in enumerate(ev) if m == n), lambda d: d[:-3]),
    "checkpoint-name-past-the-end": ("BINLOG_CHECKPOINT_EVENT", lambda ev, n: next(
        i for i, (m, _e) in enumerate(ev) if m == n), lambda d: b"\xc8" + d[1:]),
}


@pytest.mark.parametrize("how", sorted(_EVENTS))
def test_events_their_role_decides_count_alike(monkeypatch, capsys, tmp_path, how):
    """Events whose role alone says what they do to a transaction (an XID, an annotation, those
    between transactions) with data the Python path reads otherwise or refuses, their CRC32 made
    again: in a transaction the compiled loop counts, in one the Python loop reads (the first of
    its kind), and between transactions."""
    magic, events = _grown(copies=30, seed=5)
    name, where, change = _EVENTS[how]
    i = where(events, name)
    ev = events[i][1]
    events[i] = (name, ev[:HEADER] + change(bytes(ev[HEADER:])))
    path = tmp_path / f"{how}.000001"
    path.write_bytes(_assemble(magic, events))
    for extra in ((), ("--json",)):
        same(monkeypatch, capsys, *extra, path)


@pytest.mark.parametrize("name", ["GTID_EVENT", "TABLE_MAP_EVENT", "rows", "XID_EVENT"])
def test_a_crc32_that_does_not_match_counts_alike(monkeypatch, capsys, tmp_path, name):
    """A byte of an event the compiled loop would count changed, its CRC32 left as it was: the
    loop stops there, and the Python path reports the file damaged as without the loop."""
    magic, events = _grown(copies=30, seed=5)
    i = _last_plain(events, name)
    data = bytearray(_assemble(magic, events))
    at = len(_assemble(magic, events[:i])) + HEADER  # the event's first data byte
    data[at] ^= 0x20
    path = tmp_path / "crc.000001"
    path.write_bytes(bytes(data))
    rc, _out, err = same(monkeypatch, capsys, path)
    assert rc != 0 and "CRC" in err.upper()


def _plain(events):
    """(first, end) indexes of each transaction of plain rows events (the loop counts them)."""
    gtids = [i for i, (n, _e) in enumerate(events) if n == "GTID_EVENT"]
    return [(g, end) for g, end in zip(gtids, gtids[1:])
            if all(n != "QUERY_EVENT" and not EVENTS_BY_NAME[n].decode for n, _e in events[g:end])]


def _retimed():
    """A grown sample whose least and greatest event times are in transactions the compiled loop
    counts (one in the middle earlier than every other event, the last plain one later), with
    times of 0 among them and a relay log's artificial ROTATE of time 0 after the FORMAT
    DESCRIPTION: (the binlog, its least time, its greatest)."""
    magic, events = _grown(copies=40, seed=35)
    plain = _plain(events)
    mid, last = plain[len(plain) // 2], plain[-1]
    for i in range(*mid):
        events[i][1][TIMESTAMP] = (1000 + i - mid[0]).to_bytes(4, "little")
    for i in range(*last):
        events[i][1][TIMESTAMP] = (4_000_000_000 - (last[1] - i)).to_bytes(4, "little")
    for g, end in plain[1::3]:  # a rows event of time 0 in every third
        i = next(i for i in range(g, end) if EVENTS_BY_NAME[events[i][0]].row_op)
        events[i][1][TIMESTAMP] = bytes(4)
    rotate = next(bytearray(e) for n, e in events if n == "ROTATE_EVENT")
    rotate[TIMESTAMP] = bytes(4)
    events.insert(1, ("ROTATE_EVENT", rotate))
    data = _assemble(magic, events)
    stamps = [int.from_bytes(data[pos:pos + 4], "little") for pos, _c, _n in scan_bytes(data)]
    stamps = [t for t in stamps if t]
    assert min(stamps) == 1000 and max(stamps) == 3_999_999_999
    return data, min(stamps), max(stamps)


def scan_bytes(data):
    """(offset, type code, length) of each event of a v4 binlog's bytes, read here from the
    common header's fields (not by the code under test)."""
    pos = 4
    while pos + HEADER <= len(data):
        n = int.from_bytes(data[pos + LENGTH.start:pos + LENGTH.stop], "little")
        yield pos, data[pos + 4], n
        pos += n


def test_time_span_taken_in_the_one_pass(monkeypatch, capsys, counted, tmp_path):
    """The compiled `stats` takes its input's time span as it counts (no second walk over the
    file: output/stats_span.span is not called), from the events its C loop counts and those
    its Python side reads; the Python backend and --jobs 2 (its splits) walk the file again. All
    give the same text, --json and --json --figures, and the span is the headers' own."""
    data, lo, hi = _retimed()
    path = tmp_path / "relay-bin.000001"
    path.write_bytes(data)
    from binlog_grammar.output import stats_span

    walks = []
    real_span = stats_span.span
    monkeypatch.setattr(stats_span, "span", lambda *a, **k: walks.append(a) or real_span(*a, **k))
    for extra in ((), ("--json",), ("--json", "--top", "0"), ("--top", "500")):
        del walks[:]
        c = stats(monkeypatch, capsys, "c", *extra, path)
        assert not walks, "the compiled stats walked the file a second time"
        for argv, backend in (((), "python"), (("--jobs", "2"), "python"), (("--jobs", "2"), "c")):
            assert stats(monkeypatch, capsys, backend, *argv, *extra, path) == c, (argv, backend)
        assert walks  # the Python path's span: the reference
        if "--json" in extra:
            span = json.loads("\n".join(c[1]))["time_span"]
            assert (span["first"], span["last"], span["seconds"]) == (lo, hi, hi - lo)
    loop_tx, total = counted[0]
    assert total >= 40 and loop_tx > total // 2
    # --figures read every event on the Python path: the same span
    figures = json.loads("\n".join(stats(monkeypatch, capsys, "c", "--json", "--figures", path)[1]))
    assert (figures["time_span"]["first"], figures["time_span"]["last"]) == (lo, hi)


def test_time_span_of_several_files_and_windows(monkeypatch, capsys, tmp_path):
    """Several files (the span across them, the compiled loop's times merged with the Python
    side's), and datetime windows (read on the Python path), on both backends."""
    data, lo, hi = _retimed()
    one, two = tmp_path / "retimed.000001", tmp_path / "grown.000002"
    one.write_bytes(data)
    two.write_bytes(_assemble(*_grown(copies=20, seed=3, first_seq=5000)))
    for extra in (("--json",), ("--json", "--jobs", "2"), ("--utc", "--start-datetime",
                                                         "1970-01-01 00:20:00", "--json"),
                  ("--utc", "--stop-datetime", "2030-01-01 00:00:00")):
        c = same(monkeypatch, capsys, *extra, one, two, SAMPLE)
        assert c[0] == 0
        if extra == ("--json",):
            span = json.loads("\n".join(c[1]))["time_span"]
            assert (span["first"], span["last"]) == (lo, hi)


FUZZ_EXECS = int(os.environ.get("BINLOG_GRAMMAR_STATS_FUZZ_EXECS", "300"))


def test_sanitized_campaign_finds_nothing(tmp_path):
    """The bounded run of tools/fuzz_stats.py: the extensions built under AddressSanitizer and
    UndefinedBehaviorSanitizer, mutated binlogs counted by both backends (about 80 s with the
    build); 0 sanitizer reports, 0 differences, and the loop counted transactions of them."""
    spec = importlib.util.spec_from_file_location("fuzz_stats", ROOT / "tools" / "fuzz_stats.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    if not tool.fuzz_lane.asan_libs():
        pytest.skip("no gcc with AddressSanitizer and UndefinedBehaviorSanitizer")
    r = tool.campaign(FUZZ_EXECS, seed=27, findings=tmp_path / "findings")
    assert r["findings"] == 0, r
    assert r["execs"] == FUZZ_EXECS and r["loop_transactions"] > 5 * FUZZ_EXECS, r
