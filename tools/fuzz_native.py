#!/usr/bin/env python3
"""Sanitizer fuzzing of the compiled backend (issue 26): the generated framing walk
(generated/native/framing.c) and the hand-written CRC32 (binlog_grammar/native/crc32.c), built
with gcc's AddressSanitizer and UndefinedBehaviorSanitizer (-fno-sanitize-recover: the first
report stops the run) and -fsanitize-coverage=trace-pc into the standalone driver
tools/fuzz_native.c, a coverage-guided mutation campaign (bit flips, bytes, length fields set to
interesting values or to what is left, truncations, appended bytes, splices) seeded with the
shared corpus and the samples (the first SEED_BYTES of each file).

    python3 tools/fuzz_native.py [--execs N] [--seed S] [--findings DIR]

It prints the executions, the queue the coverage kept, the edges reached and the findings. A
finding (an input that made a sanitizer report or broke a promise of the walk) is written to
--findings (default tests/native/regressions/), where tests/native/test_native_regressions.py
runs each file through both backends. tests/native/test_fuzz_native.py is its bounded run.

--rows fuzzes the row images instead: the generated readers and forms (generated/native/rows.c,
binlog_grammar/native/decimal.h, forms_vv.h, forms_jsonl.h) in the libFuzzer target
tools/fuzz_rows.c (its docstring gives the input: a table's plan, then row bytes), built with
clang -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all (Debian: apt-get install
clang libclang-rt-dev), every input through bg_rows() with BG_SINK_COUNT, BG_SINK_VV and
BG_SINK_JSONL (bg_rows_jsonl) when rows.h has it. Seeds: every rows event of the samples and
the corpus (its row bytes, RowDecoder.rows_bytes, and its table's columns as
output/vv_native.py plans them) and --drawn tables and rows drawn from the specs
(tests/helpers/rows.py). Findings go to
tests/native/regressions/rows/, replayed under the sanitizers by test_native_regressions.py.
The long campaign (issue 26: at least 10 million executions):

    python3 tools/fuzz_native.py --rows --execs 10000000 --seed 26

--lane fuzzes the C core of `dump`'s compiled text lane (generated/native/lane.c without its
Python module: its tables, ids and plans are C data) in the libFuzzer target tools/fuzz_lane.c
(its docstring gives the input: a lane state, then a binlog's events), built as --rows is with
rows.c and crc32.c. Seeds: every sample, corpus file and tests/native/regressions/lane/*.bin
(their first LANE_MAX_LEN bytes, whole events) with the state the Python path would give them
(each table's columns as output/vv_native.py plans them) and a bench-like file. Findings go to
tests/native/regressions/lane/ as .lane files, which tests/native/test_fuzz_native.py replays
under the sanitizers. The long campaign (issue 26: at least 10 million executions, on one core):

    nice -n 10 python3 tools/fuzz_native.py --lane --execs 10000000 --seed 26

--lane-python runs tools/fuzz_lane.py instead: the three extensions built under the sanitizers,
mutated binlogs dumped in process by both backends and compared (its docstring says how;
--execs counts mutants there; findings are tests/native/regressions/lane/*.bin).
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated" / "native"
NATIVE = ROOT / "binlog_grammar" / "native"
DRIVER = ROOT / "tools" / "fuzz_native.c"
FINDINGS = ROOT / "tests" / "native" / "regressions"
CORPUS = ROOT.parent / "shared" / "corpus"
SEED_BYTES = 16 << 10
# BG_NO_ZLIB: lanes.h's CRC32 by crc32.c, instrumented, not by zlib (whose reads ASan cannot see)
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g", "-O1",
            "-fno-omit-frame-pointer", "-DBG_NO_ZLIB"]


def build(out: Path) -> Path:
    """The driver, the walk and the CRC32 under the sanitizers (coverage on the last two)."""
    cc = os.environ.get("CC", "gcc")
    inc = ["-I", str(GENERATED), "-I", str(NATIVE)]
    objs = []
    for src, cov in ((GENERATED / "framing.c", True), (NATIVE / "crc32.c", True), (DRIVER, False)):
        obj = out / (src.stem + ".o")
        flags = SANITIZE + (["-fsanitize-coverage=trace-pc"] if cov else [])
        subprocess.run([cc, *flags, *inc, "-c", str(src), "-o", str(obj)], check=True)
        objs.append(str(obj))
    exe = out / "fuzz_native"
    subprocess.run([cc, *SANITIZE, *objs, "-o", str(exe)], check=True)
    return exe


def seeds(out: Path) -> list:
    """The first SEED_BYTES of every corpus file and sample, as files for the driver."""
    files = sorted(p for p in (ROOT / "samples").iterdir() if p.is_file())
    if CORPUS.is_dir():
        files += sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix != ".md")
    if FINDINGS.is_dir():
        files += sorted(p for p in FINDINGS.iterdir() if p.is_file())
    paths = []
    for i, p in enumerate(files):
        with open(p, "rb") as fh:
            data = fh.read(SEED_BYTES)
        if not data.startswith(b"\xfebin"):
            continue
        s = out / f"seed-{i:04d}"
        s.write_bytes(data)
        paths.append(str(s))
    return paths


def campaign(execs: int, seed: int = 1, findings: Path = FINDINGS) -> dict:
    """Build, seed and run; {execs, queue, edges, findings, seconds, seeds, saved: [files]}."""
    with tempfile.TemporaryDirectory(prefix="fuzz-native-") as tmp:
        tmp = Path(tmp)
        exe = build(tmp)
        seed_files = seeds(tmp)
        found = tmp / "findings"
        found.mkdir()
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0",
                   UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
        t0 = time.perf_counter()
        proc = subprocess.run([str(exe), str(execs), str(seed), str(found), *seed_files],
                              capture_output=True, text=True, env=env)
        seconds = time.perf_counter() - t0
        out = {"execs": 0, "queue": 0, "edges": 0, "findings": 0}
        words = proc.stdout.split()
        for k in out:
            if k in words:
                out[k] = int(words[words.index(k) + 1])
        saved = []
        for f in sorted(found.iterdir()):
            findings.mkdir(parents=True, exist_ok=True)
            dest = findings / f"{f.stem}-seed{seed}.bin"
            shutil.copyfile(f, dest)
            saved.append(str(dest.relative_to(ROOT)) if dest.is_relative_to(ROOT) else str(dest))
        if proc.returncode != 0 and not saved:  # a crash that wrote nothing: keep its report
            out["findings"] = max(out["findings"], 1)
        out.update(seconds=round(seconds, 1), seeds=len(seed_files), saved=saved,
                   returncode=proc.returncode, stderr_tail=proc.stderr[-3000:] if saved or
                   proc.returncode else "")
        out["findings"] = max(out["findings"], len(saved))
        return out


# -- the row images (--rows) --------------------------------------------------------------------

ROWS_DRIVER = ROOT / "tools" / "fuzz_rows.c"
ROWS_FINDINGS = FINDINGS / "rows"
ROWS_SEED_BYTES = 4 << 10  # row bytes kept of an event for a seed
ROWS_MAX_LEN = 8 << 10     # the longest input libFuzzer makes
MAX_COLS = 32              # tools/fuzz_rows.c reads 1 to 32 columns
NO_FORM = 0xFF


def rows_header_names(gen: Path = None) -> tuple:
    """(COLUMN_INPUTS, VV_FORMS, has BG_SINK_JSONL) as the rows.h the target is built with says."""
    text = ((gen or GENERATED) / "rows.h").read_text()

    def names(macro):
        for line in text.splitlines():
            if line.startswith(f"#define {macro} "):
                return tuple(x.strip().strip('"') for x in line.split(" ", 2)[2].split(","))
        raise ValueError(f"rows.h defines no {macro}")
    return names("BG_COLIN_NAMES"), names("BG_VV_NAMES"), "BG_SINK_JSONL" in text


def _jsonl_form(col) -> int:
    """The BG_JL_ index of the column's JSON lines form (output/forms.py), 31 for none."""
    text = (GENERATED / "rows.h").read_text()
    if "#define BG_JL_NAMES " not in text:
        return 31
    from binlog_grammar.output.forms import form_name

    line = text.split("#define BG_JL_NAMES ", 1)[1].splitlines()[0]
    names = [x.strip().strip('"') for x in line.split(",")]
    try:
        return names.index(form_name("jsonl", col.get("real_type", col.get("type"))))
    except Exception:  # noqa: BLE001 - a type without a form: none
        return 31


def rows_build(out: Path, replay: bool = False, cc: str = None, sanitize: str = None,
               exe: Path = None) -> Path:
    """The rows target under ASan and UBSan (or `sanitize`): a libFuzzer program (clang), or
    with replay=True a program that runs the files it is given once each (any compiler)."""
    cc = cc or os.environ.get("FUZZ_CC", "clang" if not replay else os.environ.get("CC", "gcc"))
    flags = SANITIZE + ["-fsanitize=fuzzer" if not replay else "-DBG_FUZZ_REPLAY"]
    if sanitize:
        flags[0] = f"-fsanitize={sanitize}"
    if rows_header_names()[2]:
        flags.append("-DBG_FUZZ_JSONL")
    exe = exe or out / ("fuzz_rows" if not replay else "replay_rows")
    subprocess.run([cc, *flags, "-I", str(GENERATED), "-I", str(NATIVE), str(ROWS_DRIVER),
                    str(GENERATED / "rows.c"), "-o", str(exe), "-lm"], check=True)
    return exe


def _slot(v) -> bytes:
    """An int or None as tools/fuzz_rows.c reads a slot (values past 16 bits are clamped)."""
    if v is None:
        return b"\0\0\0"
    if v < 0:
        return bytes([6]) + (max(v, -32768) & 0xFFFF).to_bytes(2, "little")
    return bytes([1]) + min(v, 0xFFFF).to_bytes(2, "little")


def _debezium_forms() -> list:
    """The BG_DZ_ names in rows.h's order (FORMS["debezium"]), empty when it has none."""
    text = (GENERATED / "rows.h").read_text()
    return [ln.strip().rstrip(",")[6:] for ln in text.splitlines()
            if ln.strip().startswith("BG_DZ_") and ln.strip().endswith(",")
            and "=" not in ln and ln.strip()[6:7].islower()]


def _debezium_part(columns) -> bytes:
    """tools/fuzz_rows.c's Debezium part of a seed (bit 7): each column's FORMS["debezium"] form,
    nullable and (the first column) key flags, its members, UTF-8 text and its fraction digits
    or bits as the argument, as output/debezium_native.py plans a run of default options."""
    from binlog_grammar.output.debezium_values import form_of, fsp_of, nullable

    names, out = _debezium_forms(), bytearray()
    for c, col in enumerate(columns):
        try:
            form = form_of(col)
            flags = (1 if nullable(col) else 0) | (2 if c == 0 else 0)
            members = col.get("enum_values") or col.get("set_values")
            arg = {"micro_time": int(col.get("fsp") or 0), "zoned_timestamp": max(fsp_of(col), 0),
                   "string": 1}.get(form, 0)
            if form == "bits" and hasattr(col.get("meta"), "get"):
                arg = int(col["meta"].get("bytes", 0)) * 8 + int(col["meta"].get("bits", 0))
            pad = len(members) if form == "enum_set" and members else 0
        except Exception:  # noqa: BLE001 - metadata the forms cannot read: no form
            form, flags, members, arg, pad = None, 0, None, 0, 0
        index = names.index(form) if form in names else NO_FORM
        out += bytes([index, flags, 0xFF if members is None else min(len(members), 255), 0])
        out += _slot(arg) + _slot(pad)
    return bytes(out)


def rows_input(columns, images, data: bytes, debezium: bool = False) -> bytes:
    """An input of tools/fuzz_rows.c: the plan vv_native makes of these columns (rows.Column),
    the present flags of one or two images, (with debezium, the Debezium part of bit 7,) and
    the row bytes."""
    from types import SimpleNamespace

    from binlog_grammar.output import vv_native

    inputs_names, forms, _ = rows_header_names()
    mod = SimpleNamespace(COLUMN_INPUTS=inputs_names, VV_FORMS=forms)
    out = bytearray([(len(columns) - 1) | (len(images) == 2) << 5])
    for c, col in enumerate(columns):
        try:
            inputs, form, arg, strip = vv_native._column(mod, col)[:4]
        except Exception:  # noqa: BLE001 - metadata the forms cannot read: no form, as vv_native
            inputs = tuple(vv_native._input(col, path) for path in inputs_names)
            form, arg, strip = -1, 0, False
        flags = sum(bool(img[c]) << k for k, img in enumerate(images)) | bool(strip) << 2
        flags |= min(_jsonl_form(col), 31) << 3
        out += bytes([flags, form if form >= 0 else NO_FORM]) + _slot(arg)
        out += b"".join(_slot(v) for v in inputs)
    if debezium and _debezium_forms():
        out[0] |= 0x80
        out += _debezium_part(columns)
    return bytes(out) + data[:ROWS_SEED_BYTES]


def _corpus_row_inputs():
    from binlog_grammar.binlog.stream import open_stream

    files = sorted(p for p in (ROOT / "samples").iterdir() if p.is_file())
    if CORPUS.is_dir():
        files += sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix != ".md")
    for path in files:
        try:
            for se in open_stream([path], verify_checksum=False, skip_damaged=True).events():
                ev, t = se.event, se.table
                if ev.type is None or not ev.type.row_op or t is None or se._decoder is None:
                    continue
                cols = ev.data["columns"]
                images = [cols["columns_present"]]
                if ev.type.row_op == "update":
                    images.append(cols.get("columns_present_after") or images[0])
                if not 0 < len(t.columns) <= MAX_COLS or \
                        any(len(i) != len(t.columns) for i in images):
                    continue
                try:
                    for dz in (False, True):
                        yield rows_input(t.columns, images, se._decoder.rows_bytes(ev), dz)
                except Exception:  # noqa: BLE001 - bytes the Python path refuses: not a seed
                    continue
        except Exception:  # noqa: BLE001 - a file the reader gives up on: its events so far
            continue


def _drawn_row_inputs(n: int, seed: int):
    """Tables and rows drawn from the specs (every column type), derandomized by seed."""
    if n <= 0:
        return []
    sys.path.insert(0, str(ROOT / "tests"))
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from binlog_grammar.generated import types as T
    from helpers.rows import tables_and_rows

    found = []

    @settings(max_examples=n, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(tables_and_rows(), st.just(seed))
    def draw(case, _seed):
        ctx, value = case
        try:
            data = T.row_images.build(value, **ctx)
        except Exception:  # noqa: BLE001 - a value that does not fit its column: drawn again
            return
        for dz in (False, True):
            found.append(rows_input(ctx["columns"], ctx["images"], data, dz))
    draw()
    return found


def rows_seeds(out: Path, drawn: int = 150, seed: int = 1) -> int:
    """Seed files for the rows target in out; how many (the same input once)."""
    seen = set()
    for data in [*_corpus_row_inputs(), *_drawn_row_inputs(drawn, seed)]:
        if data not in seen and len(data) <= ROWS_MAX_LEN:
            seen.add(data)
            (out / f"seed-{len(seen):05d}").write_bytes(data)
    if ROWS_FINDINGS.is_dir():
        for f in sorted(ROWS_FINDINGS.glob("*.bin")):
            shutil.copyfile(f, out / f"finding-{f.name}")
            seen.add(f.name)
    return len(seen)


def _stat(text: str, name: str) -> int:
    for line in text.splitlines():
        if line.startswith(f"stat::{name}:"):
            return int(line.split(":")[-1])
    return 0


def run_to_end(cmd, **kw) -> subprocess.CompletedProcess:
    """subprocess.run for a libFuzzer program, through a Ctrl-C: libFuzzer prints its figures and
    stops on SIGINT, so this waits for that (a terminal's Ctrl-C reaches it too; a SIGINT to
    this process alone is passed on) and gives what it printed."""
    proc = subprocess.Popen(cmd, **kw)
    try:
        out, err = proc.communicate()
    except KeyboardInterrupt:
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _run_libfuzzer(tmp: Path, exe: Path, seeds, max_len: int, execs: int, seed: int,
                   findings: Path, suffix: str, extra: tuple) -> dict:
    """Seed (seeds(dir) writes the seed files and says how many) and run the libFuzzer program
    exe in tmp; the figures, and the findings copied into `findings` as NAME-seedN<suffix>."""
    seed_dir, work, found = tmp / "seeds", tmp / "corpus", tmp / "findings"
    for d in (seed_dir, work, found):
        d.mkdir()
    nseeds = seeds(seed_dir)
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    t0 = time.perf_counter()
    proc = run_to_end([str(exe), f"-runs={execs}", f"-seed={seed}", f"-max_len={max_len}",
                       f"-artifact_prefix={found}/", "-print_final_stats=1", "-timeout=30",
                       *extra, str(work), str(seed_dir)],
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    seconds = time.perf_counter() - t0
    out = {"execs": _stat(proc.stderr, "number_of_executed_units"),
           "corpus": len(list(work.iterdir())), "seeds": nseeds, "seconds": round(seconds, 1),
           "returncode": proc.returncode}
    done = [ln for ln in proc.stderr.splitlines() if " cov: " in ln]
    out["edges"] = int(done[-1].split(" cov: ")[1].split()[0]) if done else 0
    saved = []
    for f in sorted(found.iterdir()):
        findings.mkdir(parents=True, exist_ok=True)
        dest = findings / f"{f.name}-seed{seed}{suffix}"
        shutil.copyfile(f, dest)
        saved.append(str(dest.relative_to(ROOT)) if dest.is_relative_to(ROOT) else str(dest))
    # a run stopped by SIGINT (libFuzzer prints its figures and exits 72) found nothing by that
    stopped = proc.returncode != 0 and "libFuzzer: run interrupted" in proc.stderr
    out.update(findings=max(len(saved), int(proc.returncode != 0 and not stopped)), saved=saved,
               interrupted=stopped, stderr_tail=proc.stderr[-4000:] if proc.returncode else "")
    return out


def rows_campaign(execs: int, seed: int = 1, findings: Path = ROWS_FINDINGS, drawn: int = 150,
                  extra: tuple = ()) -> dict:
    """Build, seed and run libFuzzer on the rows target; the figures and the findings kept."""
    with tempfile.TemporaryDirectory(prefix="fuzz-rows-") as tmp:
        tmp = Path(tmp)
        return _run_libfuzzer(tmp, rows_build(tmp), lambda d: rows_seeds(d, drawn, seed),
                              ROWS_MAX_LEN, execs, seed, findings, ".bin", extra)


# -- the text lane's core (--lane) ----------------------------------------------------------------

LANE_DRIVER = ROOT / "tools" / "fuzz_lane.c"
LANE_FINDINGS = FINDINGS / "lane"
LANE_MAX_LEN = 16 << 10  # the longest input libFuzzer makes (the state's bytes and the events)
LANE_TABLES = 8          # tools/fuzz_lane.c knows 8 tables' bodies and columns


def lane_build(out: Path, replay: bool = False, cc: str = None, exe: Path = None) -> Path:
    """The lane's core under ASan and UBSan: a libFuzzer program (clang), or with replay=True a
    program that runs the files it is given once each (any compiler)."""
    cc = cc or os.environ.get("FUZZ_CC", "clang" if not replay else os.environ.get("CC", "gcc"))
    flags = SANITIZE + ["-fsanitize=fuzzer" if not replay else "-DBG_FUZZ_REPLAY"]
    exe = exe or out / ("fuzz_lane" if not replay else "replay_lane")
    subprocess.run([cc, *flags, "-I", str(GENERATED), "-I", str(NATIVE), str(LANE_DRIVER),
                    str(GENERATED / "rows.c"), str(NATIVE / "crc32.c"), "-o", str(exe), "-lm",
                    "-lz"],  # lanes.h's CRC32 is zlib's
                   check=True)
    return exe


def _lane_tables(path: Path) -> list:
    """Each distinct TABLE_MAP body's columns as tools/fuzz_lane.c reads a table's description
    (the count, then fuzz_rows.c's column bytes as vv_native plans them), in the file's order."""
    from binlog_grammar.binlog.stream import open_stream

    bodies, out = set(), []
    try:
        for se in open_stream([path], verify_checksum=False, skip_damaged=True).events():
            ev = getattr(se, "event", None)
            if ev is None or ev.inner or ev.type is None or ev.type.name != "TABLE_MAP_EVENT":
                continue
            hl, phl = ev.context.get("header_len"), ev.context.get("post_header_len", 0)
            body = bytes(ev.raw[hl + phl:len(ev.raw) - (4 if ev.footer else 0)])
            if body in bodies:
                continue
            bodies.add(body)
            t = se._decoder.tables.get(int(ev.data["table_id"])) if se._decoder else None
            cols = list(t.columns[:MAX_COLS]) if t is not None else []
            try:
                desc = rows_input(cols, [[True] * len(cols)], b"")[1:] if cols else b""
            except Exception:  # noqa: BLE001 - columns the plan cannot read: none
                cols, desc = [], b""
            out.append(bytes([len(cols)]) + desc)
            if len(out) == LANE_TABLES:
                break
    except Exception:  # noqa: BLE001 - a file the reader gives up on: its tables so far
        pass
    return out


def lane_input(path: Path, options: int, ids: int, data: bytes = None) -> bytes:
    """An input of tools/fuzz_lane.c: the state the Python path would give the file (every table
    known; the ids of `ids`), then its events (whole ones, within LANE_MAX_LEN)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import fuzz_lane

    data = path.read_bytes() if data is None else data
    tables = _lane_tables(path)
    crc = 2 if fuzz_lane.has_crc(data) else 0
    head = bytes([options | crc, 0xFF, ids, 0, 0, 0, len(tables)]) + b"".join(tables)
    end = 4
    for pos, n in fuzz_lane.events(data):
        if len(head) + pos + n - 4 > LANE_MAX_LEN:
            break
        end = pos + n
    return head + data[4:end]


def lane_seeds(out: Path) -> int:
    """Seed files for the lane's target in out: each file three ways (CRC32s checked, no id
    known; ids known, runs of 4,096 bytes; ids known, end_log_pos and CRC32 made right, runs of
    256 bytes); how many."""
    sys.path.insert(0, str(ROOT / "tools"))
    import fuzz_lane

    files = [p for p in fuzz_lane.seed_files() if p.read_bytes()[:4] == MAGIC_BYTES]
    bench = out / "bench-like.000001"
    bench.write_bytes(fuzz_lane.bench_like(fuzz_lane.SAMPLE.read_bytes(), 3))
    mysql = []  # MySQL's transactions repeated: GTIDs and QUERY events the lane writes
    for k, p in enumerate(f for f in files if f.parent.name == "mysql"):
        like = fuzz_lane.mysql_like(p.read_bytes(), 3)
        if like:
            mysql.append(out / f"mysql-like-{k}.000001")
            mysql[-1].write_bytes(like)
    seen = set()
    for path in [*files, bench, *mysql]:
        for options, ids in ((1, 0), (8, 0xFF), (4 | 16, 0xFF)):
            data = lane_input(path, options, ids)
            if data not in seen:
                seen.add(data)
                (out / f"seed-{len(seen):04d}").write_bytes(data)
    for path in [bench, *mysql]:
        path.unlink()
    for f in sorted(LANE_FINDINGS.glob("*.lane")) if LANE_FINDINGS.is_dir() else []:
        shutil.copyfile(f, out / f"finding-{f.name}")
        seen.add(f.name)
    return len(seen)


MAGIC_BYTES = b"\xfebin"


def lane_campaign(execs: int, seed: int = 1, findings: Path = LANE_FINDINGS,
                  extra: tuple = (), exe: Path = None) -> dict:
    """Build (or take exe), seed and run libFuzzer on the lane's target; the figures and the
    findings kept (as .lane files)."""
    with tempfile.TemporaryDirectory(prefix="fuzz-lane-") as tmp:
        tmp = Path(tmp)
        return _run_libfuzzer(tmp, exe or lane_build(tmp), lane_seeds, LANE_MAX_LEN, execs, seed,
                              findings, ".lane", extra)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--execs", type=int, default=1_000_000, help="executions (default 1,000,000)")
    ap.add_argument("--seed", type=int, default=1, help="the mutations' random seed")
    ap.add_argument("--findings", type=Path, default=FINDINGS,
                    help="where findings are written (default tests/native/regressions/)")
    ap.add_argument("--rows", action="store_true",
                    help="the row images (tools/fuzz_rows.c, libFuzzer) instead of the framing walk")
    ap.add_argument("--drawn", type=int, default=150,
                    help="--rows: tables and rows drawn from the specs as seeds (default 150)")
    ap.add_argument("--lane", action="store_true",
                    help="the C core of dump's text lane (tools/fuzz_lane.c, libFuzzer)")
    ap.add_argument("--lane-python", action="store_true",
                    help="dump's text lane through Python (tools/fuzz_lane.py: the extensions "
                    "under the sanitizers, both backends compared)")
    args = ap.parse_args(argv)
    if args.lane_python:
        sys.path.insert(0, str(ROOT / "tools"))
        import fuzz_lane

        findings = args.findings if args.findings != FINDINGS else fuzz_lane.FINDINGS
        return fuzz_lane.main(["--execs", str(args.execs), "--seed", str(args.seed),
                               "--findings", str(findings)])
    if args.lane:
        findings = args.findings if args.findings != FINDINGS else LANE_FINDINGS
        r = lane_campaign(args.execs, args.seed, findings)
        print(f"executions {r['execs']:,} in {r['seconds']} s "
              f"({r['execs'] / max(r['seconds'], 1e-9):,.0f}/s), seeds {r['seeds']}, "
              f"corpus {r['corpus']}, edges {r['edges']}, findings {r['findings']}")
    elif args.rows:
        findings = args.findings if args.findings != FINDINGS else ROWS_FINDINGS
        r = rows_campaign(args.execs, args.seed, findings, args.drawn)
        print(f"executions {r['execs']:,} in {r['seconds']} s "
              f"({r['execs'] / max(r['seconds'], 1e-9):,.0f}/s), seeds {r['seeds']}, "
              f"corpus {r['corpus']}, edges {r['edges']}, findings {r['findings']}")
    else:
        r = campaign(args.execs, args.seed, args.findings)
        print(f"executions {r['execs']:,} in {r['seconds']} s "
              f"({r['execs'] / max(r['seconds'], 1e-9):,.0f}/s), seeds {r['seeds']}, "
              f"queue {r['queue']}, edges {r['edges']}, findings {r['findings']}")
    for f in r["saved"]:
        print(f"  regression file: {f}")
    if r.get("interrupted"):
        print("  stopped by SIGINT before its executions were done")
    elif r["stderr_tail"]:
        print(r["stderr_tail"], file=sys.stderr)
    return 1 if r["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
