#!/usr/bin/env python3
"""libFuzzer campaigns for the compiled loops that Python drives: `stats`' loop (--target stats:
binlog_grammar.native._stats, output/stats_loop.py), dump's JSON-lines lane (--target jsonl:
native._jsonl_lane, output/jsonl_lane.py; --target debezium: the same lane with the plans of
`--envelope debezium`, output/debezium_lane.py) and the API's batches (--target batch: _framing's walk
and _rows.frame_events, binlog/batch.py, with the events inside each TRANSACTION_PAYLOAD_EVENT
framed by _rows.payload_events as binlog/batch.py's Inner frames them) and the Spark data
source's Arrow sink (--target arrow: _rows.arrow_rows, native/arrow_rows.h, spark/arrow_rows.py;
see below). Their cores take Python dicts (tables, ids, plans), so
instead of a C-only target (tools/fuzz_lane.c does that for the text lane) the target
tools/fuzz_embed.c embeds Python once and calls the extension's run()/lines() on each input
directly, with no Python path around it: thousands of executions a second where the differential
campaigns (tools/fuzz_stats.py, tools/fuzz_jsonl_lane.py) run tens.

The extensions are built from a copy of the tree by clang under
-fsanitize=fuzzer-no-link,address,undefined (-DBG_NO_ZLIB: the CRC32 instrumented too); the
program under -fsanitize=fuzzer,address,undefined with libpython. What the loop knows is learnt
first, in the program, from each seed file: `binlog-grammar --backend c stats` (or `dump --format
jsonl`) of it run in process, and the loop's state at its end kept (its tables, ids, plans,
actions, the statements that are BEGIN; the lane's configuration, tables, ids, plans, GTID;
the batches' plans by type code, as the API's open_stream() of the file makes them).

An input is two bytes, then a binlog (from its magic):
  byte 0  which seed's state (modulo how many were learnt)
  byte 1  bit 0: every event's end_log_pos and CRC32 made right first (into a copy, so a mutation
          reaches the parsing); bit 1 (jsonl): CRC32s not checked; bit 2 (jsonl): rows only;
          bit 3 (jsonl): runs of at most 256 bytes of text; bit 4 (stats): --top 0; bits 1 and
          2 (batch): CRC32s not checked, every event's data read
The arrow target's input is two bytes, then the row bytes of one rows event: byte 0 which
(plan, image slot) the data source's reader gave arrow_rows on the seed files (learnt by
reading them with the `binlog` source's reader, without Spark; the row bytes it gave are the
seeds), byte 1 bit 0: the other image slot; bit 1: a row Python made first (arrow_put); bit 2:
a piece of the bytes first (bits 4-7 tell how much), then all; bit 7: the emptied accumulator
takes the bytes again. Each input goes into both forms (map and json); what arrow_take gives
is checked as Arrow would check it (offsets from 0, never falling, ending at their data's
length; the validity bitmap against the null count; every key and text UTF-8, every value
and object JSON; the rows and their indexes those added) and the two forms must hold the same
pairs. A broken check is a Python exception, so a finding.
The other targets' loop runs from offset 4; where it stops at an event it does not read, that event is stepped
over by its length field (as the Python path would read it) and the loop goes on, 64 times at
most. A sanitizer's report, or an exception from the extension, is a finding (crash-* files).

    nice -n 19 python3 tools/fuzz_embed.py --target stats --execs 10000000 --seed 26

prints the executions, their rate and the findings (kept in --findings, default
tests/native/regressions/<target>/); exit status 1 when something was found.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import zlib
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
ROOT = TOOLS.parent
HL = 19
MAX_LEN = 1 << 17
MAX_STATES = 256
PAYLOAD = 40  # TRANSACTION_PAYLOAD_EVENT
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer",
            "-O1", "-g", "-DBG_NO_ZLIB"]

# -- in the fuzzing program -------------------------------------------------------------------


def _cli(args):
    from binlog_grammar import native
    from binlog_grammar.cli import main

    try:
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            try:
                main(args)
            except SystemExit:
                pass
    finally:
        native.select(None)


def _fix(data: bytearray) -> bytearray:
    """Every event's end_log_pos and CRC32 (when the first event has one) made right."""
    pos, n = 4, len(data)
    crc = None
    while pos + HL <= n:
        size = int.from_bytes(data[pos + 9:pos + 13], "little")
        if size < HL or pos + size > n:
            break
        if crc is None:  # the FORMAT_DESCRIPTION_EVENT's CRC32 tells whether events have one
            crc = zlib.crc32(data[pos:pos + size - 4]) == int.from_bytes(
                data[pos + size - 4:pos + size], "little")
        data[pos + 13:pos + 17] = (pos + size).to_bytes(4, "little")
        if crc and size >= HL + 4:
            data[pos + size - 4:pos + size] = zlib.crc32(data[pos:pos + size - 4]).to_bytes(
                4, "little")
        pos += size
    return data


def _next(buf, at, n):
    """The offset after the event at `at` by its length field, or None."""
    if at + HL > n:
        return None
    size = int.from_bytes(buf[at + 9:at + 13], "little")
    return at + size if size >= HL and at + size <= n else None


def _stats_states(files):
    from binlog_grammar.output import stats_loop

    got, real = [], stats_loop.Loop.run

    def run(self, mm, pos, size):
        got.append(self)
        return real(self, mm, pos, size)

    stats_loop.Loop.run = run
    states = []
    for p in files:
        got.clear()
        _cli(["--backend", "c", "stats", "--top", "3", p])
        states.append(None)
        if got:
            lp = got[-1]
            states[-1] = (lp.mod, lp.state.header_len, bytes(lp.act), lp.phl, lp.begins,
                           dict(lp.reg_of), dict(lp.ids), dict(lp.plans), len(lp.tables))
    stats_loop.Loop.run = real
    from binlog_grammar.binlog.gtid import FL_STANDALONE
    from binlog_grammar.output.stats_loop import _LIMITS

    def one(mv):
        if len(mv) < 2:
            return None
        mod, hl, act, phl, begins, reg_of, ids, plans, ntables = states[mv[0] % len(states)]
        opts, buf = mv[1], mv[2:]
        if opts & 1:
            buf = _fix(bytearray(buf))
        cfg = (act, phl, FL_STANDALONE, _LIMITS, 0 if opts & 16 else 3, begins)
        ids, counts, tables = dict(ids), bytearray(256 * 16), bytearray(ntables)
        n, pos = len(buf), 4
        for _ in range(64):
            if pos >= n:
                break
            pos, reason, *_rest = mod.run(buf, pos, n, hl, cfg, reg_of, ids, plans, counts,
                                          tables, 0)
            if reason != mod.EVENT or (pos := _next(buf, pos, n)) is None:
                break
        return None
    return states, one


def _jsonl_states(files, envelope=()):
    """The JSON-lines lane's states, learnt by `dump --format jsonl` (with envelope: the
    Debezium envelope's lane, output/debezium_lane.py, whose plans write FORMS["debezium"])."""
    from binlog_grammar.output import jsonl_lane

    got, real = [], jsonl_lane.JsonlLane.go_on

    def go_on(self, f, pos, stop=None):
        got.append(self)
        return real(self, f, pos, stop)

    jsonl_lane.JsonlLane.go_on = go_on
    states = []
    for p in files:
        got.clear()
        _cli(["--backend", "c", "dump", "--no-progress", "--format", "jsonl", *envelope, p])
        lane = got[-1] if got else None
        states.append(None)
        if lane is not None and lane.cfg is not None and jsonl_lane._gtid_json(lane.gtid):
            states[-1] = (lane.mod, lane.cfg, jsonl_lane._gtid_json(lane.gtid), lane.tx_seq,
                           dict(lane.tables), dict(lane.ids), dict(lane.plans))
    jsonl_lane.JsonlLane.go_on = real

    def one(mv):
        if len(mv) < 2:
            return None
        mod, cfg, gtid, tx_seq, tables, ids, plans = states[mv[0] % len(states)]
        opts, buf = mv[1], mv[2:]
        if opts & 1:
            buf = _fix(bytearray(buf))
        cfg = cfg[:3] + (bool(cfg[3]) and not opts & 2, bool(opts & 4)) + cfg[5:]
        limit = 256 if opts & 8 else jsonl_lane.MAX_BYTES
        ids, n, pos = dict(ids), len(buf), 4
        for _ in range(64):
            if pos >= n:
                break
            _text, end, _g, _n, _assigned, _why = mod.lines(buf, 0, pos, n, cfg, gtid, tx_seq,
                                                            tables, ids, dict(plans), limit)
            pos = _next(buf, pos, n) if end == pos else end
            if pos is None:
                break
        return None
    return states, one


def _batch_states(files):
    from binlog_grammar import native
    from binlog_grammar.binlog import batch
    from binlog_grammar.binlog.stream import open_stream

    got, real = [], batch.Batches.__init__

    def init(self, bf, mod, mm):
        real(self, bf, mod, mm)
        got.append(self)

    batch.Batches.__init__ = init
    states = []
    for p in files:
        got.clear()
        native.select("c")
        try:
            for _ev in open_stream([p]).events():  # the payloads' events too: their kinds
                pass
        except Exception:  # noqa: BLE001 - a damaged seed: what was learnt before it stays
            pass
        finally:
            native.select(None)
        states.append(None)
        b = got[-1] if got else None
        if b is not None and b.frame is not None:
            bf, st = b.bf, b.bf.state
            hl, checks = st.header_len, bool(bf.verify_checksum and st.checksum_alg == 1)
            kinds = st._kinds
            plans = tuple(batch._c_plan(b._plan(kinds[c], hl, checks)) if c in kinds else None
                          for c in range(256))
            share = bf.share_data

            def read(kind, code, data, st=st, share=share):
                return batch.read_data(st, kind, code, data, share)
            inner = batch.Inner.of(bf)  # a payload's events: plans as Inner makes them
            payload = None if inner is None else (
                inner.frame, tuple(inner._plan(kinds[c], hl) if c in kinds else None
                                   for c in range(256)), inner.make, inner.make_lazy)
            states[-1] = (b.mod, b.frame, b.fields, hl, checks, plans, read, b.make, b.make_lazy,
                          bf.path, bf._positions_agree, payload)
    batch.Batches.__init__ = real

    def one(mv):
        if len(mv) < 2:
            return None
        mod, frame, fields, hl, checks, plans, read, make, lazy, path, agree, payload = \
            states[mv[0] % len(states)]
        opts, buf = mv[1], mv[2:]
        if opts & 1:
            buf = _fix(bytearray(buf))
        checks = checks and not opts & 2
        n, pos = len(buf), 4
        for _ in range(64):
            if pos >= n:
                break
            recs, nxt, status, _code, _len = mod.walk(buf, n, pos, n, hl, checks, batch.SMALL)
            evs, stop = frame(recs, fields, buf, hl, plans, read, make, lazy, path, agree)
            for ev in evs if payload is not None else ():  # a payload's events, framed in C
                if ev.raw[4] == PAYLOAD:
                    inner = payload[0](ev.raw, hl, 4 if ev.footer else 0, payload[1], read,
                                       payload[2], payload[3], path, ev.offset)
                    for e in inner if inner is not None and opts & 4 else ():
                        e.data
            if opts & 4:  # the events' data read (the lazy ones' rows heads included)
                for ev in evs:
                    ev.data
            del evs
            pos = _next(buf, stop, n) if stop >= 0 else nxt if status == mod.FULL else None
            if pos is None:
                break
        return None
    return states, one


def _arrow_states(files):
    """The Spark data source's Arrow sink (native/arrow_rows.h through _rows.arrow_rows): each
    distinct (plan, single) the data source's reader gives arrow_rows on the seed files, with
    the table's column names; the row bytes it gave are the seed inputs (FUZZ_EMBED_CORPUS)."""
    from array import array

    from binlog_grammar import native
    from binlog_grammar.spark import batch
    from binlog_grammar.spark.datasource import BinlogDataSource

    mod, seen, states, inputs = native.rows(), {}, [], []
    real = batch.native_rows

    class Watch:  # the module, its arrow_rows calls noted
        def __getattr__(self, name):
            return getattr(mod, name)

        def arrow_rows(self, acc, plan, data, single, keys):
            k = seen.setdefault((id(plan), single), len(seen))
            if k == len(states) and k < MAX_STATES:
                states.append((plan, single, keys))
            if k < MAX_STATES and sum(i[0] == k for i in inputs) < 4 and len(inputs) < 2048:
                inputs.append((k, bytes(data)))
            return mod.arrow_rows(acc, plan, data, single, keys)

    batch.native_rows = lambda: Watch() if real() is not None else None
    native.select("c")
    for p in files:
        try:
            ds = BinlogDataSource({"path": p, "split_bytes": str(1 << 20)})
            reader = ds.reader(ds.schema())
            with redirect_stderr(io.StringIO()):  # the reader's notes on undecoded rows
                for part in reader.partitions():
                    for _b in reader.read(part):
                        pass
        except Exception:  # noqa: BLE001 - a damaged seed: what was learnt before it stays
            pass
    native.select(None)
    batch.native_rows = real
    corpus = os.environ.get("FUZZ_EMBED_CORPUS")
    for n, (k, data) in enumerate(inputs if corpus else ()):
        for opts in (0, 1, 2 | 4 | 0x80):
            Path(corpus, f"a{n:04d}-{opts}").write_bytes(bytes([k, opts]) + data)
    constant = {"parse_constant": str}  # NaN and Infinity as their text: equal to themselves

    def image(part, form, rows):
        """An image's arrays as arrow_take gives them, checked as Arrow would: each row's
        pairs (key, value parsed) or None."""
        nulls, valid, off = part[:3]
        offs = array("i", off)
        if len(offs) != rows + 1 or offs[0] != 0 or any(a > b for a, b in zip(offs, offs[1:])):
            raise AssertionError(f"{form}: bad offsets {list(offs)[:8]}")
        bits = [1] * rows if valid is None else [valid[r >> 3] >> (r & 7) & 1 for r in range(rows)]
        if (valid is None) != (nulls == 0) or bits.count(0) != nulls or (
                valid is not None and len(valid) != (rows + 7) // 8):
            raise AssertionError(f"{form}: validity and null count disagree")
        out = []
        if form == "json":
            data = part[3]
            if offs[-1] != len(data):
                raise AssertionError("json: the last offset is not the texts' length")
            for r in range(rows):
                text = bytes(data[offs[r]:offs[r + 1]]).decode("utf-8")
                if not bits[r]:
                    if text:
                        raise AssertionError("json: text in a null image")
                    out.append(None)
                    continue
                obj = json.loads(text, object_pairs_hook=list, **constant)
                out.append([tuple(kv) for kv in obj])
            return out
        entries, koff, keys, voff, values = part[3:]
        ko, vo = array("i", koff), array("i", voff)
        for o, d in ((ko, keys), (vo, values)):
            if len(o) != entries + 1 or o[0] != 0 or o[-1] != len(d) or any(
                    a > b for a, b in zip(o, o[1:])):
                raise AssertionError("map: bad entry offsets")
        if offs[-1] != entries:
            raise AssertionError("map: the last offset is not the entries")
        for r in range(rows):
            if not bits[r]:
                if offs[r] != offs[r + 1]:
                    raise AssertionError("map: entries in a null image")
                out.append(None)
                continue
            out.append([(bytes(keys[ko[e]:ko[e + 1]]).decode("utf-8"),
                         json.loads(bytes(values[vo[e]:vo[e + 1]]).decode("utf-8"), **constant))
                        for e in range(offs[r], offs[r + 1])])
        return out

    def one(mv):
        if len(mv) < 2:
            return None
        plan, single, keys = states[mv[0] % len(states)]
        opts, data = mv[1], mv[2:]
        single ^= opts & 1  # the other image of an insert or a delete
        got = []
        for form in ("map", "json"):
            acc, index, ks = mod.arrow_new(form == "json"), [], None if form == "json" else keys
            if opts & 2:  # a row Python made, first
                made = '{"k":1}' if form == "json" else (("k",), ("1",))
                mod.arrow_put(acc, made, None, 7)
                index.append(7)
            cuts = (len(data) * ((opts >> 4) + 1) // 17,) if opts & 4 else ()
            for cut in (*cuts, len(data)):  # a piece first (taken or refused), then all
                r = mod.arrow_rows(acc, plan, data[:cut], single, ks)
                if r > 0:
                    index.extend(range(r))
                elif r not in (0, mod.SHORT, mod.REFUSE, mod.ARROW_FULL):
                    raise AssertionError(f"arrow_rows: an unknown status {r}")
            rows, row, before, after = mod.arrow_take(acc)
            if rows != len(index) or list(array("i", row)) != index:
                raise AssertionError(f"{form}: rows {rows} and their indexes are not those added")
            got.append((image(before, form, rows), image(after, form, rows)))
            if opts & 0x80:  # the emptied accumulator takes the same again
                mod.arrow_rows(acc, plan, data, single, ks)
                mod.arrow_take(acc)
        if got[0] != got[1]:
            raise AssertionError("the map and json forms give other values")
        return None
    return states, one


def setup(target):
    """The function the program calls on each input (FUZZ_EMBED_SEEDS: a JSON list of files)."""
    files = json.loads(Path(os.environ["FUZZ_EMBED_SEEDS"]).read_text())
    states, one = {"stats": _stats_states, "jsonl": _jsonl_states,
                   "debezium": lambda f: _jsonl_states(f, ("--envelope", "debezium")),
                   "batch": _batch_states, "arrow": _arrow_states}[target](files)
    learnt = [s for s in states if s is not None]
    if not learnt:
        raise RuntimeError(f"no seed file gave the {target} loop a state")
    # input byte 0 = k: file k's state (the seeds put file k under it), or the next one learnt
    for k in range(len(states) - 1, -1, -1):
        states[k] = states[k] or (states[k + 1] if k + 1 < len(states) else learnt[0])
    print(f"fuzz_embed: {len(learnt)} states learnt for {target} from {len(files)} files",
          file=sys.stderr, flush=True)
    return one

# -- the campaign -------------------------------------------------------------------------------


def build(tmp: Path, patch=None) -> tuple:
    """(the program, the package folder): the extensions by clang with coverage, sanitized;
    patch(src) may change the copy of the tree first (a planted bug the campaign must find)."""
    sys.path.insert(0, str(TOOLS))
    import fuzz_lane

    src = fuzz_lane._copy_tree(tmp, patch)
    setup_py = src / "setup.py"
    setup_py.write_text(setup_py.read_text().replace('"-O3"', '"-O1"'))
    flags = " ".join(SANITIZE + ["-fsanitize=fuzzer-no-link"])
    env = dict(os.environ, CC="clang", LDSHARED="clang -shared", CFLAGS=flags,
               LDFLAGS="-fsanitize=address,undefined")
    lib, obj = tmp / "lib", tmp / "obj"
    r = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(lib),
                        "--build-temp", str(obj)], cwd=src, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"the sanitized build failed: {r.stdout[-2000:]}{r.stderr[-4000:]}")
    pkg = tmp / "pkg"
    shutil.copytree(src / "binlog_grammar", pkg / "binlog_grammar")
    shutil.copytree(src / "generated", pkg / "binlog_grammar" / "generated")
    shutil.copytree(src / "specs", pkg / "binlog_grammar" / "specs_data")
    for so in (lib / "binlog_grammar" / "native").glob("_*.so"):
        shutil.copy(so, pkg / "binlog_grammar" / "native" / so.name)
    inc = sysconfig.get_paths()["include"]
    libdir = sysconfig.get_config_var("LIBDIR")
    ver = sysconfig.get_config_var("LDVERSION")
    exe = tmp / "fuzz_embed"
    r = subprocess.run(["clang", *SANITIZE, "-fsanitize=fuzzer", f"-I{inc}", str(TOOLS / "fuzz_embed.c"),
                        "-o", str(exe), f"-L{libdir}", f"-Wl,-rpath,{libdir}", f"-lpython{ver}",
                        "-ldl", "-lm", "-rdynamic"], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"the program's build failed: {r.stderr[-4000:]}")
    return exe, pkg


def _payload_seeds(work: Path) -> list:
    """MySQL 8's compressed transactions (TRANSACTION_PAYLOAD_EVENT) repeated, each its own values
    (tests/helpers/payload_binlog.py), with ANONYMOUS_GTIDs and with GTIDs, and MySQL 8.4's
    tagged GTIDs (tests/helpers/tagged_binlog.py); none without the corpus or zstandard."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from helpers.payload_binlog import COMPRESSED, repeated
    except ImportError:
        return []
    if not COMPRESSED.is_file():
        return []
    from helpers.mysql_binlog import mysql_file
    from helpers.tagged_binlog import as_84, tagged_body

    out = []
    for code in (34, 33):
        out.append(work / f"payload-{code}.bin")
        out[-1].write_bytes(repeated(12, rows=3, gtid_code=code))
    out.append(work / "tagged.bin")  # MySQL 8.4's tagged GTIDs
    out[-1].write_bytes(as_84(mysql_file(repeat=12), (tagged_body(g, b"t" * (g % 9 + 1))
                                                     for g in range(1, 100))))
    return [str(p) for p in out]


def seed_inputs(tmp: Path, target: str) -> tuple:
    """(the seed files learnt from, the folder of the program's seed inputs)."""
    sys.path.insert(0, str(TOOLS))
    import fuzz_lane

    work = tmp / "files"
    work.mkdir()
    files = [p for p in fuzz_lane.seeds(work) + _payload_seeds(work)
             if Path(p).stat().st_size <= MAX_LEN - 2]
    files = files[:MAX_STATES]
    (tmp / "seeds.json").write_text(json.dumps(files))
    return files


def campaign(target: str, execs: int, seed: int, findings: Path, log=None, patch=None) -> dict:
    """Build, learn, seed and run libFuzzer: {target, execs, seconds, per_second, returncode,
    findings (the inputs kept), report (the sanitizer's or the exception's lines)}."""
    tmp = Path(tempfile.mkdtemp(prefix=f"fuzz-embed-{target}-"))
    try:
        return run(build(tmp, patch), target, execs, seed, findings, log)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(built: tuple, target: str, execs: int, seed: int, findings: Path, log=None,
        env=None) -> dict:
    """Learn, seed and run libFuzzer with a program build() made (one build serves every
    target: the program reads FUZZ_EMBED_TARGET), as campaign() says; env: more of the
    program's environment."""
    exe, pkg = built
    tmp = Path(tempfile.mkdtemp(prefix=f"fuzz-embed-{target}-"))
    log = log or tmp / "libfuzzer.log"
    try:
        files = seed_inputs(tmp, target)
        env = dict(os.environ, PYTHONPATH=f"{pkg}{os.pathsep}{TOOLS}", PYTHONMALLOC="malloc",
                   FUZZ_EMBED_TARGET=target, FUZZ_EMBED_SEEDS=str(tmp / "seeds.json"),
                   ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1",
                   UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1", **(env or {}))
        corpus, art = tmp / "corpus", tmp / "artifacts"
        env["FUZZ_EMBED_CORPUS"] = str(corpus)
        corpus.mkdir()
        art.mkdir()
        # every seed file under every state would be too many: file k under its own state (the
        # arrow target's inputs are row bytes: its setup writes them, FUZZ_EMBED_CORPUS)
        for k, p in enumerate(files if target != "arrow" else ()):
            data = Path(p).read_bytes()
            for opts in (0, 1, 2 | 1, 4 | 8 | 16 | 1):
                (corpus / f"s{k:03d}-{opts}").write_bytes(bytes([k % 256, opts]) + data)
        for f in sorted(findings.glob("*.bin")) if findings.is_dir() else []:
            shutil.copy(f, corpus / f.name)
        t0 = time.monotonic()
        cmd = [str(exe), str(corpus), f"-runs={execs}", f"-seed={seed}", f"-max_len={MAX_LEN}",
               f"-artifact_prefix={art}/", "-print_final_stats=1", "-detect_leaks=0",
               "-rss_limit_mb=4096", "-timeout=60"]
        sys.path.insert(0, str(TOOLS))
        from fuzz_native import run_to_end

        with open(log, "w") as out:
            rc = run_to_end(cmd, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
        secs = time.monotonic() - t0
        text = Path(log).read_text(errors="replace")
        m = re.search(r"stat::number_of_executed_units:\s*(\d+)", text)
        done = int(m.group(1)) if m else 0
        saved = []
        for f in sorted(art.iterdir()):
            findings.mkdir(parents=True, exist_ok=True)
            shutil.copy(f, findings / (f.name + ".bin"))
            saved.append(str(findings / (f.name + ".bin")))
        # stopped by SIGINT: libFuzzer prints its figures and exits 72, having found nothing
        stopped = rc != 0 and not saved and "libFuzzer: run interrupted" in text
        return {"target": target, "execs": done, "seconds": round(secs, 1),
                "per_second": round(done / secs) if secs else 0, "returncode": rc,
                "interrupted": stopped, "findings": saved,
                "report": _report(text) if rc and not stopped else ""}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _report(text: str) -> str:
    """The first sanitizer or Python report in libFuzzer's output, 4,000 characters."""
    for mark in ("==ERROR", "runtime error", "Traceback", "fuzz_embed:"):
        at = text.find(mark)
        if at >= 0:
            return text[max(0, text.rfind("\n", 0, at) + 1):][:4000]
    return text[-4000:]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", choices=("stats", "jsonl", "debezium", "batch", "arrow"),
                    required=True)
    ap.add_argument("--execs", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--findings", type=Path, default=None)
    ap.add_argument("--log", default=None, help="libFuzzer's output here (default: a temporary file)")
    args = ap.parse_args(argv)
    findings = args.findings or ROOT / "tests" / "native" / "regressions" / f"embed_{args.target}"
    out = campaign(args.target, args.execs, args.seed, findings, args.log)
    print(json.dumps(out))
    return 1 if out["findings"] or (out["returncode"] and not out["interrupted"]) else 0


if __name__ == "__main__":
    sys.exit(main())
