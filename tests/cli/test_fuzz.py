"""Damaged input is a normal case: bit flips, byte changes, truncations, bogus lengths, spliced,
duplicated and removed events end in a clean BinlogError (or a correct result), never another
exception, a hang or runaway memory; with skip_damaged the reader never raises, and what it
yields and what it reports skipped cover the file exactly. And every reading command (verify,
dump, dump --format jsonl, stats, sql, flashback, with and without --skip-damaged) on mutants of
every file: no traceback, no hang, bounded memory, exit status 0 or 1, and with --skip-damaged
the output reaches the last event the mutation left whole (tools/fuzz.py, which runs more).

The default run takes about a minute and a half on 2 cores (most of it the commands' fuzz).
BINLOG_GRAMMAR_FUZZ_SCALE=N multiplies the number of
mutations (and the bit-flip positions checked through `verify`) by N for a longer run, e.g.
`BINLOG_GRAMMAR_FUZZ_SCALE=50 python -m pytest tests/cli/test_fuzz.py`; BINLOG_GRAMMAR_FUZZ_SEED
changes the seed of the deterministic mutation sweep."""
import os
import random
import signal
import time
import tracemalloc
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from binlog_grammar.errors import BinlogError
from binlog_grammar.binlog.reader import FLAGS_AT, LENGTH_AT, TYPE_AT, BinlogFile
from binlog_grammar.binlog.verify import verify_file

from helpers.paths import CORPUS, ROOT, corpus_files

SCALE = max(1, int(os.environ.get("BINLOG_GRAMMAR_FUZZ_SCALE", "1") or 1))
SEED = int(os.environ.get("BINLOG_GRAMMAR_FUZZ_SEED", "20240611") or 0)
TIME_LIMIT = 10.0  # seconds one read of one mutated file may take (a hang fails the test)
DAMAGED_ON_PURPOSE = {"binlog_truncated_event.000001", "binlog_truncated_prev_gtid_event.000001",
                      "corrupt-relay-bin.000624", "bug40482-bin.000001"}

SOURCES = [p for p in corpus_files() if p.stat().st_size < 20000] or sorted(
    (ROOT / "samples").glob("mariadb-*"))
FUZZ = settings(max_examples=150 * SCALE, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def read_all(path):
    events = 0
    try:
        for _ev in BinlogFile(path):
            events += 1
    except BinlogError as e:
        assert e.offset is not None or "magic" in e.message or e.file
        return events, e
    return events, None


mutation = st.tuples(
    st.sampled_from(SOURCES),
    st.sampled_from(["flip", "truncate", "length", "splice"]),
    st.integers(0, 1 << 30),
    st.integers(0, 1 << 30),
)


@FUZZ
@given(mutation)
def test_mutated_binlogs_fail_cleanly(tmp_path_factory, case):
    src, kind, a, b = case
    data = bytearray(src.read_bytes())
    rnd = random.Random(a ^ b)
    if kind == "flip":
        i = 4 + a % (len(data) - 4)
        data[i] ^= 1 << (b % 8)
    elif kind == "truncate":
        data = data[: 4 + a % (len(data) - 4)]
    elif kind == "length":  # a bogus event_length in some event's header
        pos = 4 + a % (len(data) - 4)
        data[pos:pos + 4] = rnd.choice([b"\xff\xff\xff\xff", b"\x00\x00\x00\x00",
                                        b"\xff\xff\xff\x7f", bytes([rnd.randrange(256)] * 4)])
    else:  # splice bytes from another file
        other = rnd.choice(SOURCES).read_bytes()
        i = 4 + a % (len(data) - 4)
        j = 4 + b % (len(other) - 4)
        data[i:i + 40] = other[j:j + 40]
    path = tmp_path_factory.mktemp("fuzz") / "mutated.000001"
    path.write_bytes(bytes(data))
    tracemalloc.start()
    try:
        read_all(path)
        report = verify_file(path)
        _cur, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * len(data) + (32 << 20)  # no allocation sized by a bogus length field
    assert isinstance(report["errors"], list)
    skipped = list(BinlogFile(path, skip_damaged=True))  # never raises past the magic number
    assert all(isinstance(e.raw, bytes) for e in skipped)


@pytest.mark.skipif(not (CORPUS / "json.binlog.000001").exists(), reason="../shared/corpus is absent")
def test_every_single_bit_flip_in_a_checksummed_event_is_detected(tmp_path):
    """Each of the 8 bits of sampled bytes after the magic number, flipped alone, is caught by
    `verify`: by the CRC32, or by the framing when the flip hits a length."""
    src = (CORPUS / "json.binlog.000001").read_bytes()
    good = verify_file(CORPUS / "json.binlog.000001")
    assert good["ok"]
    path = tmp_path / "flip.000001"
    rnd = random.Random(7)
    positions = sorted(rnd.sample(range(4, len(src)), min(len(src) - 4, 40 * SCALE)))
    for pos in positions:
        for bit in range(8):
            data = bytearray(src)
            data[pos] ^= 1 << bit
            path.write_bytes(bytes(data))
            report = verify_file(path)
            assert not report["ok"], (pos, bit)


# ---------------------------------------------------------------------------------------------
# A deterministic sweep of mutations over the corpus and samples/, each read twice (stopping at
# the damage, and with skip_damaged), with what the result must be wherever it can be known.

@dataclass
class Source:
    path: object
    data: bytes
    events: list  # (offset, raw, name) of every event
    crc: bool  # the FDE announced CRC32 footers
    version: str
    fde_dated: bool  # the FDE carries log_pos and create_timestamp (its CRC32 is always checked)


@lru_cache(maxsize=None)
def sources():
    out = []
    for path in sorted((ROOT / "samples").glob("mariadb-*")) + corpus_files():
        if path.name in DAMAGED_ON_PURPOSE:
            continue
        bf = BinlogFile(path)
        evs = [(e.offset, e.raw, e.name, e) for e in bf]
        fde = evs[0][3]
        dated = bool(fde.header.get("log_pos") and fde.data.get("create_timestamp"))
        out.append(Source(path, path.read_bytes(), [t[:3] for t in evs], bf.state.checksum_alg == 1,
                          bf.state.server_version, dated))
    return out


@dataclass
class Case:
    kind: str
    data: bytes
    src: Source
    # what must come out, when it can be known:
    exact: Optional[list] = None  # no error, no damage, these event bytes in this order
    # one damaged event (offset, length): the reader stops there with a BinlogError; with
    # skip_damaged exactly its bytes are reported skipped, every other event comes out unchanged
    damaged: Optional[tuple] = None
    others: list = field(default_factory=list)  # the unchanged events, with `damaged`
    error_at: Optional[int] = None  # the reader must stop with an error at this offset


def event_at(src, pos):
    for i, (off, raw, _name) in enumerate(src.events):
        if off <= pos < off + len(raw):
            return i
    return None


def one_event_damaged(case, i, strict=True):
    """Expect the damage to be exactly event i (strict: and the rest to read unchanged)."""
    off, raw, _ = case.src.events[i]
    case.error_at = off
    if strict:
        case.damaged = (off, len(raw))
        case.others = [r for j, (_o, r, _n) in enumerate(case.src.events) if j != i]


def undetectable_in_fde(fde_raw, rel, new_byte, dated):
    """The changes to a checksummed file's FDE (at byte `rel` of it) nothing can see: the
    LOG_EVENT_BINLOG_IN_USE_F flag, which the CRC32 leaves out on purpose; and checksum_alg
    CRC32 -> OFF/UNDEF in an FDE without log_pos and create_timestamp, whose own CRC32 a dump
    thread may have left stale, so is not checked (`dated`: the FDE has both)."""
    if rel == FLAGS_AT and (fde_raw[FLAGS_AT] ^ new_byte) == 1:
        return True
    return rel == len(fde_raw) - 5 and new_byte in (0, 255) and not dated


def rebuild(events):
    return b"\xfebin" + b"".join(events)


def mutate(rnd, kind):
    srcs = sources()
    src = rnd.choice(srcs)
    data = bytearray(src.data)
    raws = [r for _o, r, _n in src.events]
    case = Case(kind, b"", src)
    body = [i for i, (_o, _r, n) in enumerate(src.events) if i and n != "FORMAT_DESCRIPTION_EVENT"]
    if kind in ("bit", "byte"):
        pos = rnd.randrange(4, len(data))
        data[pos] ^= (1 << rnd.randrange(8)) if kind == "bit" else rnd.randrange(1, 256)
        i = event_at(src, pos)
        if src.crc:
            if i == 0:
                if not undetectable_in_fde(src.events[0][1], pos - 4, data[pos], src.fde_dated):
                    one_event_damaged(case, 0, strict=False)
            elif src.events[i][2] != "FORMAT_DESCRIPTION_EVENT":
                one_event_damaged(case, i)
    elif kind == "truncate":
        cut = rnd.randrange(4, len(data))
        data = data[:cut]
        i = event_at(src, cut)
        if src.events[i][0] == cut:
            case.exact = raws[:i]
        else:
            case.error_at = src.events[i][0]
            case.damaged = (src.events[i][0], cut - src.events[i][0])
            case.others = raws[:i]
    elif kind == "huge_length":
        i = rnd.randrange(len(raws))
        off = src.events[i][0]
        value = rnd.choice([0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 1 << 24, len(data) + 1,
                            len(data) - off + 1])
        data[off + LENGTH_AT:off + LENGTH_AT + 4] = value.to_bytes(4, "little")
        one_event_damaged(case, i, strict=i in body)
    elif kind == "small_length":
        i = rnd.randrange(len(raws))
        off, raw, _ = src.events[i]
        value = rnd.choice([0, 1, 18, 19, 22, len(raw) - 1, len(raw) - 4, len(raw) // 2])
        value = 0 if value == len(raw) else value
        data[off + LENGTH_AT:off + LENGTH_AT + 4] = value.to_bytes(4, "little")
        if value < 19 or src.crc:  # without a CRC32 a shorter event may still parse
            one_event_damaged(case, i, strict=i in body)
    elif kind == "random_bytes":  # a run of random bytes anywhere
        pos = rnd.randrange(4, len(data))
        n = rnd.choice([2, 4, 8, 40, 300])
        data[pos:pos + n] = rnd.randbytes(n)
    elif kind == "splice_bytes":  # 40 bytes from somewhere in another file
        other = rnd.choice(srcs).data
        i, j = rnd.randrange(4, len(data)), rnd.randrange(4, len(other))
        data[i:i + 40] = other[j:j + 40]
    elif kind == "insert_bytes":  # a few stray bytes between two events
        i = rnd.randrange(1, len(raws))
        off = src.events[i][0]
        n = rnd.choice([1, 2, 3, 5, 19, 23])
        data[off:off] = rnd.choice([bytes(n), b"\xff" * n, rnd.randbytes(n)])
        if src.crc:  # the stray bytes and the next event's start fail its CRC32
            case.error_at = off
            case.damaged = (off, n)
            case.others = raws
    elif kind in ("splice_event", "duplicate", "remove", "swap") and body:
        i = rnd.choice(body)
        new = list(raws)
        if kind == "splice_event":  # a whole event of another file, put between two events
            other = rnd.choice(srcs)
            j = rnd.randrange(1, len(other.events))
            at = rnd.randrange(1, len(raws) + 1)
            new.insert(at, other.events[j][1])
            # the same server writes the same layouts; the FDE of another may say otherwise
            if other.version == src.version and other.events[j][2] != "FORMAT_DESCRIPTION_EVENT":
                case.exact = new
        elif kind == "duplicate":
            new.insert(rnd.choice([i + 1, rnd.randrange(1, len(raws) + 1)]), raws[i])
            case.exact = new
        elif kind == "remove":
            del new[i]
            case.exact = new
        else:
            j = rnd.choice(body)
            new[i], new[j] = new[j], new[i]
            case.exact = new
        data = bytearray(rebuild(new))
    else:
        return mutate(rnd, "bit")
    case.data = bytes(data)
    return case


KINDS = ["bit", "byte", "truncate", "huge_length", "small_length", "random_bytes",
         "splice_bytes", "insert_bytes", "splice_event", "duplicate", "remove", "swap"]


class Hang(Exception):
    pass


def _alarm(_signum, _frame):
    raise Hang(f"a read took longer than {TIME_LIMIT} s")


def timed(fn):
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT)
    start = time.perf_counter()
    try:
        return fn(), time.perf_counter() - start
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def read_plain(path):
    out = []
    try:
        for ev in BinlogFile(path):
            out.append((ev.offset, ev.raw))
    except BinlogError as e:
        return out, e
    return out, None


def read_skipping(path):
    bf = BinlogFile(path, skip_damaged=True)
    out = [(ev.offset, ev.raw) for ev in bf]
    return out, bf.damage


def check(case, path, stats):
    data = case.data
    size = len(data)
    (plain, err), t1 = timed(lambda: read_plain(path))
    tracemalloc.start()
    try:
        (evs, dmg), t2 = timed(lambda: read_skipping(path))
        _cur, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    stats["max_seconds"] = max(stats["max_seconds"], t1, t2)
    stats["max_peak"] = max(stats["max_peak"], peak)
    where = f"{case.kind} of {case.src.path.name}"

    # without skip_damaged: events that tile the file up to a clean BinlogError, or to the end
    stop = err.offset if err is not None else size
    if err is not None:
        assert isinstance(err.offset, int) and 4 <= err.offset <= size, (where, err)
        assert err.file == str(path) and f"offset {err.offset}" in str(err), (where, err)
    pos = 4
    for off, raw in plain:
        assert off == pos, where
        pos += len(raw)
    assert pos == stop, (where, err)
    assert not (err is None and dmg), where

    # with it: never raises; events and skipped bytes tile the whole file; the same prefix
    pos = 4
    items = sorted([(off, len(raw), "event") for off, raw in evs] +
                   [(d.offset, d.skipped_bytes, d) for d in dmg], key=lambda t: t[0])
    for off, n, what in items:
        assert off == pos and n > 0, (where, items)
        if what != "event":
            assert what.resumed_at == (off + n if off + n < size else None), (where, what)
            assert what.file == str(path)
        pos += n
    assert pos == size, (where, items)
    assert evs[:len(plain)] == plain, where
    if err is not None:
        assert dmg and (dmg[0].offset, dmg[0].message) == (err.offset, err.message), (where, err)

    # memory follows the file, never a length field
    assert peak < 64 * size + (1 << 20), (where, peak)

    # and what must come out where it is known
    if case.exact is not None:
        assert err is None, (where, err)
        assert [raw for _o, raw in plain] == case.exact, where
        stats["exact"] += 1
    if case.error_at is not None:
        assert err is not None and err.offset == case.error_at, (where, err, case.error_at)
        stats["error_at"] += 1
    if case.damaged is not None:
        off, n = case.damaged
        assert [(d.offset, d.skipped_bytes) for d in dmg] == [(off, n)], (where, dmg)
        assert [raw for _o, raw in evs] == case.others, where
        stats["damage_exact"] += 1


def test_mutation_sweep(tmp_path):
    """Mutations of every good corpus file and sample, each read with and without skip_damaged.
    Checked every time: a clean BinlogError naming file and offset (or none), events that tile
    the file up to it; with skip_damaged no exception, events and skipped bytes that tile the
    whole file, the same events before the first damage; a bounded time per read; a tracemalloc
    peak below 64 bytes per file byte + 1 MiB. Checked where the answer is known: duplicated,
    removed, swapped and same-server spliced events read without error, as they now are; in a
    CRC32 file a changed byte stops the reader at that event and skip_damaged skips exactly it,
    and stray bytes between events are skipped alone; a truncation reports the rest; a bogus
    length stops the reader at that event (and, past the FDE, skips exactly it)."""
    if not sources():
        pytest.skip("no binlogs")
    rnd = random.Random(SEED)
    n = 400 * SCALE
    stats = {"max_seconds": 0.0, "max_peak": 0, "exact": 0, "error_at": 0, "damage_exact": 0}
    path = tmp_path / "mutated.000001"
    start = time.perf_counter()
    for k in range(n):
        case = mutate(rnd, KINDS[k % len(KINDS)])
        path.write_bytes(case.data)
        check(case, path, stats)
    stats["seconds"] = time.perf_counter() - start
    print(f"\n{n} mutations: {stats}")
    assert stats["exact"] and stats["damage_exact"] and stats["error_at"]


# ---------------------------------------------------------------------------------------------
# Every single-bit flip of a few small events of CRC32 files, exhaustively

FLIP_EVENTS = [  # (file, index of the event): FDE, PREVIOUS_GTIDS, GTIDs, QUERY, TABLE_MAP, XID,
    # MariaDB's GTID_LIST and GTID, a TRANSACTION_PAYLOAD
    ("json.binlog.000001", 0), ("json.binlog.000001", 1), ("json.binlog.000001", 2),
    ("json.binlog.000001", 7), ("json.binlog.000001", 8), ("json.binlog.000001", 10),
    ("mariadb-10.11-sample.000002", 1), ("mariadb-10.11-sample.000002", 3),
    ("mariadb-10.11-sample.000002", 7), ("transaction_compression.000001", 3),
    ("rpl_unfiltered_hidden_gcol.000001", 0),  # an FDE without create_timestamp
]


def flip_cases():
    out = []
    for name, i in FLIP_EVENTS:
        path = ROOT / "samples" / name if name.startswith("mariadb") else CORPUS / name
        out.append(pytest.param(path, i, id=f"{name}-{i}",
                                marks=pytest.mark.skipif(not path.exists(), reason="absent")))
    return out


@pytest.mark.parametrize("src, index", flip_cases())
def test_every_bit_flip_of_an_event_stops_the_reader_at_that_event(tmp_path, src, index):
    """Every bit of the event, header and checksum included, flipped alone: the reader stops
    with a BinlogError at that event's offset (the CRC32, or the framing when a length moves, or
    the FDE's checks when a type code becomes FORMAT_DESCRIPTION_EVENT); skip_damaged skips
    exactly that event and yields the others unchanged. The bits no reader can see: the FDE's
    LOG_EVENT_BINLOG_IN_USE_F flag, which the CRC32 leaves out on purpose (the server clears it
    when it closes the file), and, in an FDE without create_timestamp, the flip of checksum_alg
    CRC32 -> OFF (see undetectable_in_fde). To keep it quick the file is cut down to the FDE,
    the event and the one after it (events depend on the FDE only)."""
    bf = BinlogFile(src)
    evs = list(bf)
    good = [e.raw for e in evs]
    dated = bool(evs[0].header.log_pos and evs[0].data.create_timestamp)
    assert bf.state.checksum_alg == 1
    keep = [good[0], good[index]] + good[index + 1:index + 2] if index else good[:3]
    at = 1 if index else 0
    data = b"\xfebin" + b"".join(keep)
    off = 4 + sum(len(r) for r in keep[:at])
    raw = keep[at]
    fde = at == 0
    others = keep[:at] + keep[at + 1:]
    path = tmp_path / src.name
    path.write_bytes(data)
    assert [e.raw for e in BinlogFile(path)] == keep
    flips = unseen = 0
    for pos in range(off, off + len(raw)):
        for bit in range(8):
            if fde and undetectable_in_fde(raw, pos - off, raw[pos - off] ^ (1 << bit), dated):
                unseen += 1
                continue
            mutated = bytearray(data)
            mutated[pos] ^= 1 << bit
            path.write_bytes(bytes(mutated))
            with pytest.raises(BinlogError) as info:
                for _ev in BinlogFile(path):
                    pass
            assert info.value.offset == off, (pos - off, bit, info.value)
            flips += 1
            if (pos - off) % 2 == 0 or pos - off < 19:
                skip = BinlogFile(path, skip_damaged=True)
                rest = [e.raw for e in skip]
                assert [(d.offset, d.skipped_bytes) for d in skip.damage] == [(off, len(raw))], (
                    pos - off, bit)
                assert rest == others, (pos - off, bit)
    assert flips + unseen == 8 * len(raw) and unseen == ((1 + (not dated)) if fde else 0)


def test_in_use_flag_is_outside_the_fde_checksum(tmp_path):
    """The exception above, shown: the flag flips, the file still reads, and says so."""
    src = CORPUS / "json.binlog.000001"
    if not src.exists():
        pytest.skip("../shared/corpus is absent")
    data = bytearray(src.read_bytes())
    data[4 + FLAGS_AT] ^= 1
    path = tmp_path / src.name
    path.write_bytes(bytes(data))
    evs = list(BinlogFile(path))
    assert len(evs) == 36 and not int(evs[0].header.flags) & 1 and evs[0].checksum_ok


def test_type_code_turned_into_fde_is_refused(tmp_path):
    """A single flip can make an event's type code 15 (31 -> 15, 14 -> 15, ...): then the event has
    no footer to check, so the FDE's own checks must refuse it."""
    src = CORPUS / "json.binlog.000001"
    if not src.exists():
        pytest.skip("../shared/corpus is absent")
    good = list(BinlogFile(src))
    data = bytearray(src.read_bytes())
    ev = next(e for e in good if e.header.type_code == 31)  # UPDATE_ROWS_EVENT
    data[ev.offset + TYPE_AT] ^= 0x10
    path = tmp_path / src.name
    path.write_bytes(bytes(data))
    with pytest.raises(BinlogError) as info:
        list(BinlogFile(path))
    assert (info.value.offset, info.value.event_type) == (ev.offset, "FORMAT_DESCRIPTION_EVENT")


# ---------------------------------------------------------------------------------------------
# Every reading command, in-process and in subprocesses, on mutants of every file (tools/fuzz.py)

def _fuzz_tool():
    """tools/fuzz.py as a module (its worker processes are forked: they find it in sys.modules)."""
    import importlib.util
    import sys

    if "binlog_fuzz_tool" not in sys.modules:
        spec = importlib.util.spec_from_file_location("binlog_fuzz_tool", ROOT / "tools" / "fuzz.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules["binlog_fuzz_tool"] = mod
        spec.loader.exec_module(mod)
    return sys.modules["binlog_fuzz_tool"]


def _problems_text(figures):
    return "\n".join(f"{p['source']} ({p['kind']}: {p['what']}): {p['command']}: {p['problem']}"
                     for p in figures["problems"][:20])


COMMAND_MUTANTS = 320 * SCALE  # 10 rounds over the 32 files of the corpus and samples/


def test_every_reading_command_on_mutants():
    """tools/fuzz.py's rules, on a bounded seeded sample (about a minute on 2 cores): every file
    mutated by bit flips, truncation, huge event lengths, events spliced in from other files,
    zeroed regions and random bytes, read by verify, dump (text and JSON lines), stats, sql,
    flashback and dump --flashback, each with and without --skip-damaged: no traceback, no
    exception name in stderr, no hang (a time limit per run), exit status 0 or 1, worker
    processes under an address-space limit and a bounded peak RSS, and with --skip-damaged
    dump's output reaches the file's last event that the mutation left whole. BINLOG_GRAMMAR_FUZZ_SCALE and _SEED apply; the tool runs
    more (`python tools/fuzz.py --mutants 20000`)."""
    fuzz = _fuzz_tool()
    figures = fuzz.fuzz(mutants=COMMAND_MUTANTS, seed=SEED, jobs=2, timeout=3 * TIME_LIMIT,
                        rss_mib=2048)
    print(f"\n{ {k: v for k, v in figures.items() if k != 'problems'} }")
    assert not figures["problems"], _problems_text(figures)
    assert figures["mutants"] == COMMAND_MUTANTS
    assert figures["runs"] == COMMAND_MUTANTS * 13  # verify + 6 commands x (with, without)
    if CORPUS.is_dir():
        # every file, each kind of mutation about once per file
        assert figures["files"] >= 30 and all(n >= 30 for n in figures["kinds"].values())
    assert figures["reach_checks"] >= COMMAND_MUTANTS  # most mutants leave a last event whole
    assert figures["peak_rss_mib_in_process"] < 512


def test_every_reading_command_on_mutants_in_subprocesses():
    """A sample of the same through `python -m binlog_grammar`: what a user runs (a real
    interpreter exit, stderr as printed), each run's own peak RSS measured."""
    fuzz = _fuzz_tool()
    figures = fuzz.fuzz(mutants=5, seed=SEED + 1, jobs=1, timeout=3 * TIME_LIMIT, rss_mib=2048,
                        subprocess_sample=5)
    assert not figures["problems"], _problems_text(figures)
    assert figures["subprocess_mutants"] == 5 and figures["peak_rss_mib_subprocess"] < 512


def test_fuzz_tool_sees_a_traceback_a_hang_and_a_missed_event(monkeypatch):
    """The checks themselves: a command that raises, one that never returns and one that drops
    the last event are each reported."""
    fuzz = _fuzz_tool()
    import binlog_grammar.cli as cli

    m = fuzz.Mutant("x", "bit_flip", "test", b"", last_valid=123, last_valid_name="XID_EVENT")
    monkeypatch.setattr(cli, "main", lambda argv: {}["boom"])
    code, out, err, _s, problem = fuzz.run_in_process(["dump", "--format", "text", "x"], 5)
    assert problem.startswith("traceback: KeyError")

    def forever(argv):
        while True:
            pass
    monkeypatch.setattr(cli, "main", forever)
    assert fuzz.run_in_process(["dump", "--format", "text", "x"], 0.5)[4].startswith("hang")
    assert "did not reach the last valid event" in fuzz.check_run(
        "dump", True, 1, "# at 4\n# at 99\n", "", None, m, None)
    assert fuzz.check_run("dump", True, 1, "# at 4\n# at 123\n", "", None, m, None) is None
    assert "exception name in stderr" in fuzz.check_run(
        "stats", False, 1, "", "binlog-grammar: x: TypeError: bad\n", None, m, None)
    assert "exit status 2" in fuzz.check_run("sql", False, 2, "", "usage\n", None, m, None)


# ---------------------------------------------------------------------------------------------
# What the commands' fuzz found, each kept as a case (they failed before the fix)

def _corpus(name):
    path = CORPUS / name
    if not path.exists():
        pytest.skip("../shared/corpus is absent")
    return bytearray(path.read_bytes())


def _read(tmp_path, data, name="fuzzed.000001", **kw):
    path = tmp_path / name
    path.write_bytes(bytes(data))
    bf = BinlogFile(path, skip_damaged=True, **kw)
    return [(e.offset, e.name) for e in bf], [(d.offset, d.skipped_bytes, d.message) for d in bf.damage]


def test_fde_saying_checksums_off_without_a_crc_of_its_own_is_checked(tmp_path):
    """Zeros over the end of a MySQL 5.6 FDE (checksum_alg CRC32 -> OFF, its CRC32 -> 0, which a
    dump thread may write) and the head of the next event: the FDE passed, and the rest of the
    file, read without footers, was lost. The next events end with their CRC32s: the FDE is the
    damage, and skip_damaged finds the events, footers and all."""
    good = _corpus("binlog_transaction_with_GTID.000001")
    data = bytearray(good)
    data[115:120] = bytes(5)  # checksum_alg and the FDE's CRC32
    events, damage = _read(tmp_path, data)
    assert damage[0][:2] == (4, 116) and "the FORMAT_DESCRIPTION_EVENT is damaged" in damage[0][2]
    assert events[-1] == (766, "STOP_EVENT") and len(events) == 10
    data[96:160] = bytes(64)  # and the next event's head: the check cannot see past it, but
    events, damage = _read(tmp_path, data)  # after that damage the footers are found again
    assert damage[0][0] == 120 and events[-1] == (766, "STOP_EVENT")


def test_one_event_with_a_footer_spliced_after_an_old_fde_does_not_condemn_it(tmp_path):
    """An event of a CRC32 file put in right after the FDE of a MySQL 5.0 file: one event ending
    with its CRC32 made the FDE's version string 'damaged' and the whole file unreadable; now the
    next two must, and only the foreign event is skipped."""
    data = _corpus("bug16266.000001")
    other = (CORPUS / "json.binlog.000001").read_bytes()
    data[98:98] = other[156:235]  # an ANONYMOUS_GTID_LOG_EVENT, 79 bytes
    events, damage = _read(tmp_path, data)
    assert [d[:2] for d in damage] == [(98, 79)]
    assert events[0] == (4, "FORMAT_DESCRIPTION_EVENT") and events[-1] == (513 + 79, "STOP_EVENT")


def test_fde_header_length_must_be_its_own(tmp_path):
    """common_header_len 20 in an FDE read with a 19-byte header (a flip in a file without
    CRC32s): every event after it was framed wrong; now the FDE is the damage."""
    data = _corpus("bug16266.000001")
    data[4 + 19 + 2 + 50 + 4] = 20
    events, damage = _read(tmp_path, data)
    assert damage[0][0] == 4 and "common_header_len 20" in damage[0][2]
    assert events[-1] == (513, "STOP_EVENT")


def test_a_length_that_swallows_the_next_event_is_seen_by_its_log_pos(tmp_path):
    """A WRITE_ROWS_EVENT_V1 of a MySQL 5.1 file (no CRC32s) whose event_length gained 128: it
    parsed, with the next events' bytes as more rows, and the ROTATE_EVENT at the end was lost.
    Its log_pos says where it ends, and an event begins there."""
    data = _corpus("write-partial-row.binlog")
    data[415 + 9] ^= 0x80
    events, damage = _read(tmp_path, data)
    assert [d[:2] for d in damage] == [(415, 38)] and "past its log_pos 453" in damage[0][2]
    assert events[-1] == (552, "ROTATE_EVENT")


def test_damaged_fde_that_says_crc32_is_believed_after_damage(tmp_path):
    """The FDE of a MySQL 8 file fails its CRC32 and the last event's footer is damaged too: the
    PREVIOUS_GTIDS_LOG_EVENT between them, whose CRC32 matches, was refused because no second
    event confirmed the footers; the damaged FDE still says CRC32, which is enough."""
    data = _corpus("binlog_transaction_previous_GTID_no_tag.000001")
    data[102] ^= 0x80
    data[238] ^= 0x02
    events, damage = _read(tmp_path, data)
    assert (126, "PREVIOUS_GTIDS_LOG_EVENT") in events


def test_a_payload_that_does_not_decompress_is_skipped_by_the_commands(tmp_path):
    """A TRANSACTION_PAYLOAD_EVENT spliced into a MySQL 5.6 file without CRC32s reads (its
    footer taken as payload) but does not decompress: `dump --skip-damaged` stopped there with
    an error; now it is damage, and the rest of the file is read."""
    import contextlib
    import io

    from binlog_grammar import cli

    data = _corpus("bug11747887-bin.000003")
    other = (CORPUS / "transaction_compression.000001").read_bytes()
    data[347:347] = other[274:431]
    path = tmp_path / "spliced.000003"
    path.write_bytes(bytes(data))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert cli.main(["dump", "--format", "text", "--skip-damaged", str(path)]) == 1
    assert f"# at {729 - 19 + 157}\n" in out.getvalue()  # the STOP_EVENT, the file's last
    assert "skipped 157 damaged bytes" in err.getvalue() and "decompress" in err.getvalue()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert cli.main(["dump", "--format", "text", str(path)]) == 1  # without the option, still one clean error


def test_rotate_without_position_prints(tmp_path):
    """Zeros over the FDE's post-header lengths of a MySQL 5.1 file (no CRC32 to tell) give the
    ROTATE_EVENT no position, as in binlog v1: dump printed a TypeError traceback."""
    import contextlib
    import io

    from binlog_grammar import cli

    data = _corpus("update-full-row.binlog")
    data[83:102] = bytes(19)
    path = tmp_path / "zeroed.binlog"
    path.write_bytes(bytes(data))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["dump", "--format", "text", "--skip-damaged", str(path)])
    assert code in (0, 1) and "Rotate to" in out.getvalue() and "pos: 4" in out.getvalue()


def test_fde_damage_is_seen_past_one_damaged_event_with_a_footer(tmp_path):
    """Two flips in the version string of a MySQL 5.6 FDE (it now predates checksums) and one
    in the GTID_LOG_EVENT two events on: the next event ended with its CRC32 but the one after
    did not, and the FDE passed; every event was then read without its footer. Two of the next
    three ending with their CRC32s tell that the FDE is what was damaged."""
    data = _corpus("binlog_transaction_with_GTID.000001")
    data[29] ^= 1 << 5
    data[39] ^= 1
    data[175] ^= 1 << 2
    events, damage = _read(tmp_path, data)
    assert damage[0][0] == 4 and "version string is damaged" in damage[0][2]
    assert events[-1] == (766, "STOP_EVENT")


def test_lost_fde_and_a_damaged_event_before_one_with_a_footer(tmp_path):
    """A MySQL 5.7 file whose FDE and next events are wiped, and the event before the last has a
    type code that reads whole without a footer (160, MariaDB's ANNOTATE_ROWS_EVENT): taken as an
    event, it made the file one without footers, and the last event, whose CRC32 matches, was
    skipped as damaged. With the FDE lost, an event without a CRC32 followed by one with it is
    the damage."""
    data = _corpus("rpl_atomic_ddl_rollback_table.000001")
    data[23] ^= 0xFF  # binlog_version of the FDE
    data[90:390] = bytes(300)
    data[381 + TYPE_AT] = 160
    events, damage = _read(tmp_path, data)
    assert events[-1] == (501, "STOP_EVENT") and (381, "ANNOTATE_ROWS_EVENT") not in events
