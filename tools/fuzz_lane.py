#!/usr/bin/env python3
"""Sanitizer fuzzing of `dump`'s compiled text lane (issue 26): the three extensions (`_framing`,
`_rows`, `_lane`: generated/native/lane.c, rows.c, framing.c, binlog_grammar/native/crc32.c) built
by setup.py with gcc's AddressSanitizer and UndefinedBehaviorSanitizer (-fno-sanitize-recover=all:
the first report ends the run) into a temporary folder, from a copy of the files `git ls-files`
names (as they are in the working tree), and a Python driver run on them under
LD_PRELOAD=libasan.so:libubsan.so with PYTHONMALLOC=malloc (so every object's bytes, the file's
included, sit in a heap block of their own size: a read one byte past is a report). The driver
imports the package from a copy of its tree that holds the sanitized extensions.

The lane's C core alone (no Python object) is a libFuzzer target too (tools/fuzz_lane.c,
tools/fuzz_native.py --lane); this driver checks the whole lane as `dump` runs it, its Python
module and output/text_lane.py included, against the Python path: it mutates whole binlogs and
runs `binlog-grammar --backend c dump --no-progress [--no-checksum] FILE` in process
(cli.main, stdout and stderr captured) and the same with `--backend python`; the exit status,
stdout and stderr must be equal. A sanitizer report or any difference is a finding: the mutant
is written to --findings (default tests/native/regressions/lane/), which
tests/native/test_native_regressions.py replays.

Seeds: samples/, ../shared/corpus/*, and bench-like files made of the first sample's transactions
repeated. Mutations (one to four per mutant): bit flips, interesting bytes, inserted, repeated and
deleted runs, truncations, events duplicated, dropped or spliced from another seed, a type code
changed to one the lane writes, and fields of an event rewritten with interesting values (table
ids, rows flags, extra_data and column counts, bitmaps, event lengths including what is left of
the file and one more); then, mostly, every event's end_log_pos and CRC32 made right again so the
mutation reaches the lane's parsing (the lane checks both). Half the runs verify CRC32s, the rest
pass --no-checksum; a quarter map the file in windows of 8 to 64 KiB (output/text_lane.WINDOW)
and cut the lane's text at 256 or 4,096 bytes (MAX_TEXT), so events cross a window's end and
runs stop full.

Coverage-aware, cheaply (not compiler coverage): the driver wraps the lane's text() and keeps a
mutant in its queue when a run shows a new (why the lane stopped, the type code it stopped at,
events it wrote up to 8) or a new (exit status, stderr's last line without its numbers).

    python3 tools/fuzz_lane.py [--execs N] [--seed S] [--findings DIR] [--seconds T]
                               [--form text|replay]
    python3 tools/fuzz_native.py --lane-python ...      (the same)

--form api fuzzes the reading API's batches instead (binlog/batch.py, _rows.frame_events and
payload_events): open_stream(FILE).events() on both backends, each event (its repr, header,
checksum, name, end, GTID, table) and row change, the error and the damage skipped compared
(verify_checksum off half the time, skip_damaged a quarter).

MySQL 8's compressed transactions are seeded (tools/make_payload_binlog.py's files, a few
transactions each) and mutated inside too: a payload's events inflated, mutated as the file's
events are (a field, a byte, a cut, an event repeated or dropped), deflated again with the
payload header's sizes made right, so the mutants reach the compiled payload readers
(generated/native/payload.h) and not only zstd's refusal of a damaged frame.

--form replay fuzzes the replay lane instead (output/replay_lane.py, native/replay.h): `dump`'s
default replay form, each run with one of -v, -vv, -s, --skip-gtids or none, both backends
compared the same way (the window and text limit made small a quarter of the time as well).

It prints the executions, executions per second, the queue, the features seen and the findings;
exit status 1 when anything was found. tests/native/test_fuzz_native.py runs a bounded share.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FINDINGS = ROOT / "tests" / "native" / "regressions" / "lane"
CORPUS = ROOT.parent / "shared" / "corpus"
SAMPLE = ROOT / "samples" / "mariadb-10.11-sample.000001"
# BG_NO_ZLIB: the loops' CRC32 by crc32.c, instrumented, not by zlib (whose reads ASan cannot see)
SANITIZE = ("-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -O1 -g "
            "-DBG_NO_ZLIB")
EXTENSIONS = ("_framing", "_rows", "_lane")
MAGIC = b"\xfebin"
HL = 19
# type codes the lane writes (MariaDB GTID, XID, ANNOTATE_ROWS, TABLE_MAP, rows v1 and v2, MySQL's
# GTID and ANONYMOUS_GTID, QUERY)
LANE_CODES = (162, 16, 160, 19, 23, 24, 25, 30, 31, 32, 166, 167, 168, 169, 33, 34, 2)


# -- the sanitized build ------------------------------------------------------------------------

def _copy_tree(dst: Path, patch=None) -> Path:
    """The files git tracks and those it would (not ignored), as the working tree has them,
    copied into dst/src; patch(src) may change the copy (a planted bug)."""
    src = dst / "src"
    names = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for name in filter(None, names):
        p = ROOT / name
        if p.is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, src / name)
    if patch is not None:
        patch(src)
    return src


def asan_libs() -> str:
    """LD_PRELOAD for a Python that loads sanitized extensions ('' when gcc has none)."""
    cc = os.environ.get("CC", "gcc")
    libs = []
    for name in ("libasan.so", "libubsan.so"):
        try:
            p = subprocess.run([cc, f"-print-file-name={name}"], capture_output=True,
                               text=True).stdout.strip()
        except OSError:
            return ""
        if not os.path.isabs(p) or not os.path.exists(p):
            return ""
        libs.append(p)
    return ":".join(libs)


def build(tmp: Path, patch=None) -> Path:
    """The package with its three extensions built under ASan+UBSan, in tmp/pkg (for
    PYTHONPATH); nothing is written into the repository."""
    src = _copy_tree(tmp, patch)
    setup = src / "setup.py"
    setup.write_text(setup.read_text().replace('"-O3"', '"-O1"'))
    env = dict(os.environ, CFLAGS=SANITIZE, LDFLAGS="-fsanitize=address,undefined")
    lib, obj = tmp / "lib", tmp / "obj"
    r = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(lib),
                        "--build-temp", str(obj)], cwd=src, env=env, capture_output=True, text=True)
    built = {n: sorted((lib / "binlog_grammar" / "native").glob(f"{n}.*.so")) for n in EXTENSIONS}
    if r.returncode != 0 or not all(built.values()):
        raise RuntimeError(f"the sanitized build failed: {r.stdout[-2000:]}{r.stderr[-4000:]}")
    pkg = tmp / "pkg"
    shutil.copytree(src / "binlog_grammar", pkg / "binlog_grammar")
    shutil.copytree(src / "generated", pkg / "binlog_grammar" / "generated")
    shutil.copytree(src / "specs", pkg / "binlog_grammar" / "specs_data")
    for so in (lib / "binlog_grammar" / "native").glob("_*.so"):  # the three and any other
        shutil.copy(so, pkg / "binlog_grammar" / "native" / so.name)
    return pkg


def sanitized_env(pkg: Path) -> dict:
    return dict(os.environ, PYTHONPATH=str(pkg), LD_PRELOAD=asan_libs(), PYTHONMALLOC="malloc",
                ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:exitcode=86:quarantine_size_mb=64:"
                             "max_allocation_size_mb=2048:allocator_may_return_null=0",
                UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=86",
                BINLOG_GRAMMAR_BACKEND="auto")


# -- binlog bytes -------------------------------------------------------------------------------

def events(data) -> list:
    """(pos, length) of each whole event from the magic on, up to the first that does not fit."""
    out, pos = [], 4
    while pos + HL <= len(data):
        n = int.from_bytes(data[pos + 9:pos + 13], "little")
        if n < HL or pos + n > len(data):
            break
        out.append((pos, n))
        pos += n
    return out


def has_crc(data) -> bool:
    """Whether the file's first event (its FORMAT_DESCRIPTION) ends with a right CRC32."""
    ev = events(data)[:1]
    return bool(ev) and zlib.crc32(data[ev[0][0]:sum(ev[0]) - 4]) == \
        int.from_bytes(data[sum(ev[0]) - 4:sum(ev[0])], "little")


def fix(data: bytearray, crc: bool, log_pos: bool = True) -> bytearray:
    """Every whole event's end_log_pos set to where it ends and its CRC32 made again."""
    for pos, n in events(data):
        if log_pos:
            data[pos + 13:pos + 17] = (pos + n).to_bytes(4, "little")
        if crc and n >= HL + 4:
            crc32 = zlib.crc32(bytes(data[pos:pos + n - 4]))
            data[pos + n - 4:pos + n] = crc32.to_bytes(4, "little")
    return data


def bench_like(data: bytes, times: int) -> bytes:
    """The sample's transactions (from its first ANNOTATE_ROWS' GTID to its last XID) repeated."""
    evs = events(data)
    first = next(i for i, (p, n) in enumerate(evs) if data[p + 4] == 160) - 1
    last = max(i for i, (p, n) in enumerate(evs) if data[p + 4] == 16)
    head = data[:evs[first][0]]
    block = data[evs[first][0]:sum(evs[last])]
    tail = data[sum(evs[last]):]
    return bytes(fix(bytearray(head + block * times + tail), has_crc(data)))


def mysql_like(data: bytes, times: int) -> bytes:
    """A MySQL binlog's transactions (from its first GTID_LOG_EVENT or ANONYMOUS_GTID to its last
    XID: GTIDs, BEGIN and other QUERY events, rows events) repeated; b"" when it has none."""
    evs = events(data)
    gtids = [i for i, (p, n) in enumerate(evs) if data[p + 4] in (33, 34)]
    xids = [i for i, (p, n) in enumerate(evs) if data[p + 4] == 16]
    if not gtids or not xids or xids[-1] < gtids[0]:
        return b""
    first, last = gtids[0], xids[-1]
    head, block = data[:evs[first][0]], data[evs[first][0]:sum(evs[last])]
    return bytes(fix(bytearray(head + block * times + data[sum(evs[last]):]), has_crc(data)))


# binlogs the tests keep (tests/native/data: MariaDB's compressed events, written by a server
# with --log-bin-compress)
TEST_DATA = ROOT / "tests" / "native" / "data"


def seed_files() -> list:
    files = sorted(p for p in (ROOT / "samples").iterdir() if p.is_file())
    if TEST_DATA.is_dir():
        files += sorted(p for p in TEST_DATA.iterdir() if p.is_file())
    if CORPUS.is_dir():
        files += sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix != ".md")
    if FINDINGS.is_dir():
        files += sorted(FINDINGS.glob("*.bin"))
    return files


def seeds(out: Path) -> list:
    """Seed files in out: the samples, the corpus, earlier findings, two bench-like files and
    each MySQL corpus file's transactions repeated."""
    paths = []
    for i, p in enumerate(seed_files()):
        data = p.read_bytes()
        if data.startswith(MAGIC) and len(data) <= 1 << 20:
            paths.append(out / f"seed-{i:03d}.bin")
            paths[-1].write_bytes(data)
    for k in (3, 12):
        paths.append(out / f"bench-{k}.bin")
        paths[-1].write_bytes(bench_like(SAMPLE.read_bytes(), k))
    mysql = CORPUS / "mysql"
    for i, p in enumerate(sorted(mysql.iterdir()) if mysql.is_dir() else []):
        like = mysql_like(p.read_bytes(), 12)  # MySQL's GTIDs, BEGINs and XIDs, repeated
        if like:
            paths.append(out / f"mysql-like-{i:03d}.bin")
            paths[-1].write_bytes(like)
    for k, (n, rows) in enumerate(((3, 1), (8, 3), (24, 2))):  # MySQL 8's compressed transactions
        paths.append(out / f"payload-{k}.bin")
        paths[-1].write_bytes(payload_like(n, rows))
    return [str(p) for p in paths]


def payload_like(n: int, rows: int) -> bytes:
    """n compressed transactions of `rows` rows (tools/make_payload_binlog.py's); b"" without the
    corpus."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from helpers.payload_binlog import repeated
    finally:
        sys.path.pop(0)
    try:
        return repeated(n, rows=rows)
    except OSError:
        return b""


PAYLOAD = 40


def _packed(v: int) -> bytes:
    if v < 251:
        return bytes([v])
    if v < 1 << 16:
        return b"\xfc" + v.to_bytes(2, "little")
    if v < 1 << 24:
        return b"\xfd" + v.to_bytes(3, "little")
    return b"\xfe" + v.to_bytes(8, "little")


def _inner(d: bytearray, rnd, pos: int, n: int) -> None:
    """A payload event's inner events mutated (see the module's docstring), in place; nothing
    when its data is not a ZSTD header and one frame zstd inflates."""
    import zstandard

    crc = 4 if has_crc(d) else 0
    body = bytes(d[pos + HL:pos + n - crc])
    at = 0
    try:
        while body[at] != 0:  # the header's (tag, length, value) entries up to the end mark
            at += 1
            at += 1 + body[at]
        inner = zstandard.ZstdDecompressor().decompress(body[at + 1:], max_output_size=1 << 22)
    except (IndexError, zstandard.ZstdError):
        return
    evs = bytearray(b"\xfebin" + inner)  # framed as a file's events, from offset 4
    for _ in range(rnd.choice((1, 1, 2))):
        ins = events(evs)
        op = rnd.randrange(6)
        if op <= 2 and ins:
            _field(evs, rnd, *rnd.choice(ins))
        elif op == 3 and len(evs) > 4:
            evs[rnd.randrange(4, len(evs))] = rnd.choice(INTERESTING + (rnd.randrange(256),))
        elif op == 4 and ins:  # an inner event repeated or dropped
            p, k = rnd.choice(ins)
            if rnd.random() < 0.5:
                evs[p + k:p + k] = evs[p:p + k]
            elif len(ins) > 1:
                del evs[p:p + k]
        elif len(evs) > 5:  # cut short
            del evs[rnd.randrange(4, len(evs)):]
    inner = bytes(evs[4:])
    frame = zstandard.ZstdCompressor(level=1).compress(inner)
    head = b"".join(_packed(t) + _packed(len(_packed(v))) + _packed(v)
                    for t, v in ((2, 0), (3, len(inner)), (1, len(frame)))) + b"\x00"
    if rnd.random() < 0.1:  # a size that lies
        head = head.replace(_packed(len(inner)), _packed(max(0, len(inner) + rnd.choice((-1, 1)))), 1)
    new = d[pos:pos + HL] + head + frame + bytes(crc)
    new[9:13] = len(new).to_bytes(4, "little")
    d[pos:pos + n] = new


# -- mutations ----------------------------------------------------------------------------------

INTERESTING = (0, 1, 2, 0x7f, 0x80, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff)


def _int(rnd, width, room=None):
    top = (1 << 8 * width) - 1
    pool = [0, 1, 2, 7, 8, 9, 250, 251, 252, 253, 254, 255, 256, 0x7fff, 0x8000, 0xffff, 1 << 20,
            top, top - 1, top >> 1, (top >> 1) + 1, rnd.randrange(top + 1)]
    if room is not None:
        pool += [room + d for d in range(-3, 4)]
    return rnd.choice(pool) & top


def _put(d, at, width, value):
    if 0 <= at and at + width <= len(d):
        d[at:at + width] = value.to_bytes(width, "little")


def _field(d, rnd, pos, n):
    """An event's field rewritten: a header field, the table id, rows flags, extra_data's length,
    the column count, a bitmap byte, or any byte or word of its body."""
    code = d[pos + 4]
    body = pos + HL
    choice = rnd.randrange(12)
    if choice == 0:  # the event length (what is left of the file, one more, anything), and
        n = _int(rnd, 4, len(d) - pos)  # mostly end_log_pos with it, as a writer would
        _put(d, pos + 9, 4, n)
        if rnd.random() < 0.7:
            _put(d, pos + 13, 4, (pos + n) & 0xFFFFFFFF)
    elif choice == 1:
        _put(d, pos + 4, 1, rnd.choice(LANE_CODES))
    elif choice == 2:
        _put(d, pos, 4, _int(rnd, 4))  # timestamp
    elif choice == 3:
        _put(d, pos + 5, 4, _int(rnd, 4))  # server id
    elif choice == 4:
        _put(d, body, 6, _int(rnd, 6))  # table id (TABLE_MAP, rows)
    elif choice == 5:
        _put(d, body + 6, 2, _int(rnd, 2))  # rows flags
    elif choice == 6:
        _put(d, body + 8, 2, _int(rnd, 2, n - HL))  # rows v2's extra_data length
    elif choice == 7:  # the column count (packed) after a v1 or v2 post-header
        at = body + (10 if code in (30, 31, 32) else 8)
        _put(d, at, 1, rnd.choice(INTERESTING + (rnd.randrange(256),)))
    elif choice == 8:  # a bitmap byte
        _put(d, body + rnd.choice((9, 10, 11, 12)), 1, rnd.choice((0, 0xff, rnd.randrange(256))))
    else:
        width = rnd.choice((1, 2, 4, 8))
        at = pos + rnd.randrange(max(1, n))
        _put(d, at, width, _int(rnd, width, n))


def mutate(data: bytes, rnd: random.Random, pool: list) -> bytes:
    d = bytearray(data)
    for _ in range(rnd.choice((1, 1, 2, 2, 3, 4))):
        evs = [e for e in events(d) if e[0] > 4] or events(d)
        payloads = [e for e in evs if d[e[0] + 4] == PAYLOAD]
        op = rnd.randrange(14)
        if payloads and rnd.random() < 0.4:  # mostly inside a payload, when there is one
            _inner(d, rnd, *rnd.choice(payloads))
        elif op <= 4 and evs:  # most mutations go to a field of an event, the lane's first
            lane = [e for e in evs if d[e[0] + 4] in LANE_CODES]
            pos, n = rnd.choice(lane if lane and rnd.random() < 0.8 else evs)
            _field(d, rnd, pos, n)
        elif op == 5 and len(d) > 4:
            at = rnd.randrange(4, len(d))
            d[at] ^= 1 << rnd.randrange(8)
        elif op == 6 and len(d) > 4:
            d[rnd.randrange(4, len(d))] = rnd.choice(INTERESTING)
        elif op == 7:
            at = rnd.randrange(4, len(d) + 1)
            k = rnd.choice((1, 2, 4, rnd.randrange(1, 64)))
            run = bytes(rnd.randrange(256) for _ in range(k)) if rnd.random() < 0.5 else \
                bytes(d[at:at + k])
            d[at:at] = run
        elif op == 8 and len(d) > 5:
            at = rnd.randrange(4, len(d))
            del d[at:at + rnd.choice((1, 2, 4, rnd.randrange(1, 64)))]
        elif op == 9 and len(d) > 5:  # the file cut anywhere, or its last event dropped and
            if rnd.random() < 0.5:    # a few bytes of the one before it
                del d[rnd.randrange(4, len(d)):]
            elif len(evs) > 1:
                del d[evs[-1][0]:]
                del d[len(d) - rnd.randrange(1, 5):]
        elif op == 10 and evs:  # an event repeated
            pos, n = rnd.choice(evs)
            d[pos + n:pos + n] = d[pos:pos + n]
        elif op == 11 and len(evs) > 1:  # an event dropped
            pos, n = rnd.choice(evs)
            del d[pos:pos + n]
        elif op == 12 and pool and evs:  # an event of another seed (not its FORMAT_DESCRIPTION)
            other = rnd.choice(pool)
            oevs = [e for e in events(other) if e[0] > 4 and other[e[0] + 4] != 15]
            if oevs:
                opos, on = rnd.choice(oevs)
                pos, n = rnd.choice(evs)
                d[pos + n:pos + n] = other[opos:opos + on]
        elif op == 13 and evs:  # an event's body cut short or grown, its length following
            pos, n = rnd.choice(evs)
            k = rnd.randrange(1, 9)
            if rnd.random() < 0.5 and n - k >= HL:
                del d[pos + n - k - 4:pos + n - 4]
                _put(d, pos + 9, 4, n - k)
            else:
                d[pos + n - 4:pos + n - 4] = bytes(rnd.randrange(256) for _ in range(k))
                _put(d, pos + 9, 4, n + k)
    r = rnd.random()
    if r < 0.85:  # the CRC32s (and end_log_pos) made right: the lane reads on
        fix(d, has_crc(data), log_pos=r < 0.75)
    return bytes(d)


# -- the driver (runs under the sanitizers) -----------------------------------------------------

class _Probe:
    """The lane module with the text() of its Lane objects watched: why each run stopped and
    where."""

    def __init__(self, mod):
        self.mod, self.hits = mod, set()
        self.CODES, self.ROWS, self.HEADER_LEN = mod.CODES, mod.ROWS, mod.HEADER_LEN
        self.shape_key, self.query_key = mod.shape_key, mod.query_key
        self.written = 0

    def Lane(self, *args):  # noqa: N802 - the module's name for it
        return _ProbedLane(self, self.mod.Lane(*args))

    def __getattr__(self, name):  # the replay lane's constants and base64_lines
        return getattr(self.mod, name)


class _ProbedLane:
    def __init__(self, probe, lane):
        self.probe, self.lane = probe, lane
        self.add_table, self.set_id, self.add_plan = lane.add_table, lane.set_id, lane.add_plan
        self.add_statement = lane.add_statement

    def __getattr__(self, name):  # replay_setup, replay_stamps, replay_statement, forget_ids
        return getattr(self.lane, name)

    def replay(self, buf, base, pos, stop, *rest):
        r = self.lane.replay(buf, base, pos, stop, *rest)
        end, why = r[1], r[2]
        at = end - base + 4
        code = buf[at] if end < stop and at < len(buf) else -1
        n = r[0].count(b"# at ")
        self.probe.written += n
        self.probe.hits.add(("replay", why, code, min(n, 8)))
        return r

    def text(self, buf, base, pos, stop, *rest):
        r = self.lane.text(buf, base, pos, stop, *rest)
        end, why = r[1], r[5]
        at = end - base + 4
        code = buf[at] if end < stop and at < len(buf) else -1
        n = r[0].count("# at ")
        self.probe.written += n
        self.probe.hits.add(("lane", why, code, min(n, 8)))
        return r


def _heap_map(path, pos, window):
    """output/lanes.map_window's window as a heap block of exactly its size (PYTHONMALLOC=malloc:
    ASan sees a read past it), not a mapping whose page ends past the file's last byte."""
    import ctypes
    import mmap

    base = pos - pos % mmap.ALLOCATIONGRANULARITY
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        fh.seek(base)
        data = fh.read(max(0, min(window, size - base)))
    if not data:
        return None, 0
    buf = (ctypes.c_char * len(data)).from_buffer_copy(data)
    return memoryview(buf).cast("B"), base


FORM = os.environ.get("BG_FUZZ_FORM", "text")  # the driver's: text, or replay (--form)
REPLAY_FLAGS = ([], ["-v"], ["-vv"], ["-s"], ["--skip-gtids"])


def _api(path, backend, opts):
    """--form api: what open_stream gives on `backend`, as (error, one line per event and
    change, damage) to compare as _dump's outcomes are; API_HITS gets the inner events the
    batches framed and how the read ended."""
    from binlog_grammar import native
    from binlog_grammar.binlog.batch import FramedEvent
    from binlog_grammar.binlog.stream import open_stream
    from binlog_grammar.errors import BinlogError

    native.select(backend)
    lines, err, framed, s = [], None, 0, None
    try:
        s = open_stream([str(path)], verify_checksum="--no-checksum" not in opts,
                        skip_damaged="--skip-damaged" in opts, raw_rows=True)
        for se in s.events():
            ev = se.event
            framed += ev.inner and type(ev) is FramedEvent
            lines.append(repr((repr(ev), ev.header, ev.checksum, ev.checksum_ok, ev.name, ev.end,
                               se.gtid, repr(se.table))))
            lines += [repr(c) for c in se.changes]
    except BinlogError as e:
        err = (type(e).__name__, e.message, e.offset, e.event_type)
    except Exception as e:  # noqa: BLE001 - a traceback is an outcome to compare
        err = f"raised {type(e).__name__}: {e}"
    finally:
        native.select(None)
    if backend == "c":
        API_HITS.add(("api", min(framed, 8), str(err)[:40]))
    return str(err), "\n".join(lines), repr([repr(d) for d in s.damage] if s else [])


API_HITS = set()


def _dump(path, backend, opts):
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from binlog_grammar import native
    from binlog_grammar.cli import main

    if FORM == "api":
        return _api(path, backend, opts)

    if FORM == "replay":  # stdout over bytes, as a pipe's: the lane's runs go to its buffer
        load = Path(path).parent / "load"  # LOAD DATA's files: the same first free name each run
        shutil.rmtree(load, ignore_errors=True)
        load.mkdir()
        opts = [*opts, "-l", str(load)]
        buf = io.BytesIO()
        out = io.TextIOWrapper(buf, encoding="utf-8", errors="surrogateescape", newline="\n")
        err = io.StringIO()
        saved = sys.stdout
        sys.stdout = out
        try:
            with redirect_stderr(err):
                try:
                    code = main(["--backend", backend, "dump", "--no-progress", *opts, str(path)])
                except SystemExit as e:
                    code = e.code
                except Exception as e:  # noqa: BLE001 - a traceback is an outcome to compare
                    code = f"raised {type(e).__name__}: {e}"
            out.flush()
        finally:
            sys.stdout = saved
            native.select(None)
        return code, buf.getvalue().decode("utf-8", "surrogateescape"), err.getvalue()
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(["--backend", backend, "dump", "--no-progress", "--format", "text",
                             *opts, str(path)])
            except SystemExit as e:
                code = e.code
            except Exception as e:  # noqa: BLE001 - a traceback is an outcome to compare
                code = f"raised {type(e).__name__}: {e}"
    finally:
        native.select(None)
    return code, out.getvalue(), err.getvalue()


def _diff(a, b) -> str:
    for name, x, y in zip(("exit status", "stdout", "stderr"), a, b):
        if x != y:
            if isinstance(x, str) and isinstance(y, str):
                i = next((k for k in range(min(len(x), len(y))) if x[k] != y[k]),
                         min(len(x), len(y)))
                a, b = x[max(0, i - 80):i + 80], y[max(0, i - 80):i + 80]
                return f"{name} differs at {i}: c {a!r} python {b!r}"
            return f"{name}: c {x!r} python {y!r}"
    return ""


def drive(argv) -> int:
    """The driver: python3 fuzz_lane.py --driver WORK SEEDS_JSON EXECS SEED FINDINGS [SECONDS]"""
    work, seed_list, execs, seed, findings = Path(argv[0]), argv[1], int(argv[2]), int(argv[3]), \
        Path(argv[4])
    seconds = float(argv[5]) if len(argv) > 5 else 0.0
    from binlog_grammar import native
    from binlog_grammar.output import replay_lane, text_lane

    mod = native._load_lane()[0]
    pkg = os.environ.get("PYTHONPATH") or str(work.parent / "pkg")  # sanitized_env's
    if mod is None or pkg not in mod.__file__:
        print(f"driver: not the sanitized lane: {mod and mod.__file__} {native.unavailable()}")
        return 3
    probe = _Probe(mod)
    text_lane.lane_module = lambda: probe if native.backend() == "c" else None
    text_lane.map_window = _heap_map
    replay_lane.lane_module = text_lane.lane_module
    replay_lane.map_window = _heap_map
    window, max_text = text_lane.WINDOW, text_lane.MAX_TEXT
    replay_max = replay_lane.MAX_TEXT
    import functools

    from binlog_grammar import cli  # one parser for every run (building it is a fifth of a run)
    cli.build_parser = functools.lru_cache(maxsize=1)(cli.build_parser)
    names = json.loads(Path(seed_list).read_text())
    pool = [Path(p).read_bytes() for p in names]
    if execs < 0:  # replay: each file as it is, with and without CRC32 checks
        bad = 0
        for name in names:
            for opts in ([], ["--no-checksum"]):
                why = _diff(_dump(name, "c", opts), _dump(name, "python", opts))
                bad += bool(why)
                print(f"{'finding' if why else 'ok'} {Path(name).name} {' '.join(opts)} {why}",
                      flush=True)
        print(f"execs {2 * len(names)} findings {bad}", flush=True)
        return 0
    queue = list(pool)
    rnd = random.Random(seed)
    features, found, t0 = set(), 0, time.perf_counter()
    current = work / "current.000001"
    done = 0
    for i in range(execs):
        if seconds and time.perf_counter() - t0 > seconds:
            break
        data = queue[rnd.randrange(len(queue))] if i >= len(pool) else pool[i]
        mutant = mutate(data, rnd, pool) if i >= len(pool) else data
        opts = ["--no-checksum"] if rnd.random() < 0.5 else []
        if FORM == "replay":
            opts += rnd.choice(REPLAY_FLAGS)
        if FORM == "api" and rnd.random() < 0.25:
            opts.append("--skip-damaged")
        # a quarter of the runs with a small window and text limit: events across the window's
        # end, runs cut by the text's size
        small = rnd.random() < 0.25
        text_lane.WINDOW = rnd.choice((8192, 16384, 65536)) if small else window
        text_lane.MAX_TEXT = rnd.choice((256, 4096)) if small else max_text
        replay_lane.WINDOW = text_lane.WINDOW
        replay_lane.MAX_TEXT = text_lane.MAX_TEXT if small else replay_max
        current.write_bytes(mutant)
        (work / "current.opts").write_text(" ".join(opts))
        probe.hits = set()
        API_HITS.clear()
        c = _dump(current, "c", opts)
        py = _dump(current, "python", opts)
        done += 1
        why = _diff(c, py)
        if why:
            found += 1
            findings.mkdir(parents=True, exist_ok=True)
            name = f"diff-seed{seed}-{i}{'-nocrc' if '--no-checksum' in opts else ''}.bin"
            (findings / name).write_bytes(mutant)
            print(f"finding {name}: {why}", flush=True)
        said = (c[2].strip().splitlines() or [""])[-1].replace(str(current), "")
        said = re.sub(r"\d+", "N", said)
        hits = probe.hits | API_HITS | {("exit", str(c[0]), said[:80])}  # the error's kind, not its numbers
        if not hits <= features:
            features |= hits
            if i >= len(pool) and len(queue) < 4000:
                queue.append(mutant)
        if done % 500 == 0:
            dt = time.perf_counter() - t0
            print(f"progress execs {done} execs/s {done / dt:.1f} queue {len(queue)} "
                  f"features {len(features)} lane_events {probe.written} findings {found}",
                  flush=True)
    dt = time.perf_counter() - t0
    print(f"execs {done} seconds {dt:.1f} queue {len(queue)} features {len(features)} "
          f"lane_events {probe.written} findings {found}", flush=True)
    return 0


# -- the campaign -------------------------------------------------------------------------------

def _report(stderr: str) -> str:
    """The sanitizer's report from its first line (else the end of stderr), 4,000 characters."""
    marks = [i for i in (stderr.find("ERROR: AddressSanitizer"), stderr.find("runtime error:"))
             if i >= 0]
    return stderr[max(0, min(marks) - 200):][:4000] if marks else stderr[-4000:]


def campaign(execs: int, seed: int = 1, findings: Path = FINDINGS, seconds: float = 0.0,
             patch=None, tmp: Path = None, log=None, pkg: Path = None, env=None) -> dict:
    """Build, seed and run the driver; {execs, seconds, queue, features, lane_events, findings,
    saved, stderr_tail}. A sanitizer report ends the run; the mutant it was on is saved. pkg:
    a build() made already (then patch is not used); env: more of the driver's environment."""
    own = tmp is None
    tmp = Path(tempfile.mkdtemp(prefix="fuzz-lane-")) if own else tmp
    try:
        pkg = pkg or build(tmp, patch)
        work = tmp / "work"
        work.mkdir(parents=True)
        seed_list = tmp / "seeds.json"
        seed_list.write_text(json.dumps(seeds(work)))
        found = tmp / "findings"
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--driver",
                                 str(work), str(seed_list), str(execs), str(seed), str(found),
                                 str(seconds)], cwd=tmp, env={**sanitized_env(pkg), **(env or {})},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if log is not None:
                log.write(line)
                log.flush()
        stderr = proc.stderr.read()
        proc.wait()
        elapsed = time.perf_counter() - t0
        out = {"execs": 0, "queue": 0, "features": 0, "lane_events": 0, "findings": 0}
        last = next((ln for ln in reversed(lines) if ln.startswith(("execs ", "progress "))), "")
        words = last.split()
        for k in out:
            if k in words:
                out[k] = int(words[words.index(k) + 1])
        crashed = proc.returncode != 0
        if crashed and (work / "current.000001").exists():
            found.mkdir(exist_ok=True)
            tag = "-nocrc" if "--no-checksum" in (work / "current.opts").read_text() else ""
            shutil.copyfile(work / "current.000001", found / f"crash-seed{seed}{tag}.bin")
        saved = []
        for f in sorted(found.glob("*.bin")) if found.is_dir() else []:
            findings.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, findings / f.name)
            saved.append(str(findings / f.name))
        out.update(seconds=round(elapsed, 1), saved=saved, returncode=proc.returncode,
                   findings=max(len(saved), int(crashed)),
                   stderr_tail=(_report(stderr) + "".join(ln for ln in lines if
                                                          ln.startswith("finding"))[-2000:])
                   if crashed or saved else "")
        return out
    finally:
        if own:
            shutil.rmtree(tmp, ignore_errors=True)


def replay(files, tmp: Path) -> dict:
    """Each file dumped by both backends (with and without CRC32 checks) on the sanitized build:
    {returncode, lines (ok or finding, per file and option), findings, stderr_tail}."""
    pkg = build(tmp)
    work = tmp / "work"
    work.mkdir()
    seed_list = tmp / "seeds.json"
    seed_list.write_text(json.dumps([str(Path(f).resolve()) for f in files]))
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--driver", str(work),
                           str(seed_list), "-1", "0", str(tmp / "findings")], cwd=tmp,
                          env=sanitized_env(pkg), capture_output=True, text=True)
    lines = proc.stdout.splitlines()
    return {"returncode": proc.returncode, "lines": lines,
            "findings": sum(ln.startswith("finding") for ln in lines),
            "stderr_tail": proc.stderr[-4000:]}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--driver"]:
        return drive(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--execs", type=int, default=10_000, help="mutants (default 10,000)")
    ap.add_argument("--seed", type=int, default=1, help="the mutations' random seed")
    ap.add_argument("--findings", type=Path, default=FINDINGS,
                    help="where findings are written (default tests/native/regressions/lane/)")
    ap.add_argument("--seconds", type=float, default=0.0, help="stop after this long (0: no limit)")
    ap.add_argument("--lane", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--form", choices=("text", "replay", "api"), default="text",
                    help="the text lane's text (default), the replay lane's replay form, or the "
                         "reading API's batches")
    args = ap.parse_args(argv)
    if not asan_libs():
        print("no libasan.so/libubsan.so from gcc (-print-file-name)", file=sys.stderr)
        return 2
    r = campaign(args.execs, args.seed, args.findings, args.seconds, log=sys.stdout,
                 env={"BG_FUZZ_FORM": args.form})
    print(f"executions {r['execs']:,} in {r['seconds']} s "
          f"({r['execs'] / max(r['seconds'], 1e-9):,.1f}/s), queue {r['queue']}, "
          f"features {r['features']}, lane events {r['lane_events']:,}, findings {r['findings']}")
    for f in r["saved"]:
        print(f"  regression file: {f}")
    if r["stderr_tail"]:
        print(r["stderr_tail"], file=sys.stderr)
    return 1 if r["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
