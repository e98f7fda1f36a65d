#!/usr/bin/env python3
"""Benchmark: this project against python-mysql-replication and mariadb-binlog, on one binlog.

    python tools/bench.py [--binlog FILE | --make DIR --mb 120] [--repeat 3] [--only RUNNER ...]
                          [--write docs/benchmarks.md [--append]]
    python tools/bench.py --startup [--binlog FILE] [--repeat 15]   # start to end, a small file

Without --binlog it writes a deterministic benchmark binlog with a real MariaDB server
(tools/make_bench_binlog.py: a sysbench-like table and a wide table of every common type). Then it
times, alternating and repeated, each in a fresh process (so peak memory is its own):
- ours, full decode: every event parsed, every row value decoded (stream + fast readers);
- ours, construct path: the same with the construct structs only (the reference);
- ours, framing: header-only walk (framing.scan), and its baseline, a plain-Python header walk
  (read 19 bytes, seek over the rest); the walk on each backend (ours-framing-c-walk: the compiled walk
  alone, its records not unpacked; ours-framing-c: framing.scan on it; -c-crc32 with
  every CRC32 footer checked, ours-framing-python) and a plain `stats` (ours-stats: from the
  compiled walk, output/stats_fast.py; ours-stats-python: on the Python backend, every event
  parsed and every value decoded), side by side in MB/s;
- python-mysql-replication (PyPI `mysql-replication`; installed into this Python with --install):
  the file's events fed offline to its BinLogPacketWrapper, every row value read; its code is
  untouched, the harness (a stand-in for its control connection) is ours;
- `mariadb-binlog -vv --base64-output=decode-rows FILE > /dev/null`;
- cli-replay, cli-replay-v, cli-replay-vv against mariadb-binlog-replay, mariadb-binlog-replay-v,
  mariadb-binlog-replay-vv: `dump --jobs 1 FILE` (the replay form, dump's default), `dump -v` and
  `dump -vv` against `mariadb-binlog FILE`, `-v FILE` and `-vv FILE`, whole processes;
  cli-replay-jobs2, cli-replay-v-jobs2, cli-replay-vv-jobs2: the same with --jobs 2;
- cli-dump, cli-dump-jobs2, cli-jsonl, cli-jsonl-jobs2, cli-stats, cli-debezium: the whole process of
  `binlog-grammar dump -vv --base64-output=decode-rows FILE > /dev/null` (--jobs 2, --format jsonl, stats, --envelope debezium), start to end as a
  user runs it, against mariadb-binlog's whole process (issue 26's goals for dump and JSON lines).
- ours-text: `dump --format text FILE` (the compiled text lane) in process, output to /dev/null;
- --startup (issue 26: `dump` of a small file under 0.15 s, start to end): the whole process of
  `binlog-grammar dump FILE > /dev/null` (and dump -vv --base64-output=decode-rows, dump --format
  jsonl, sql, stats, verify), the command a user types, against `mariadb-binlog FILE`, on the 5 KB
  sample unless --binlog says; each command runs once untimed first (bytecode and the spec model
  cached, as after any first run). The command is the console script beside this Python (pip's,
  in a venv: what a user of it runs; not a version manager's shim such as pyenv's, which adds its
  own start) when it runs this tree, else `python -m binlog_grammar` from this tree; the report
  says which.
It reports events/s, row images/s, MB/s, peak RSS and ratios, checks on a sample that ours, the
peer and mariadb-binlog decoded the same values (and lists where they differ), and with --write
writes the figures and the machine description to a Markdown file.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# framing.scan on one backend (BINLOG_GRAMMAR_BACKEND: auto, c or python), every event counted
_SCAN = """
import os
os.environ["BINLOG_GRAMMAR_BACKEND"] = "{backend}"
from binlog_grammar.binlog.framing import scan
start = time.perf_counter()
events, rows = 0, None
for _ in scan(PATH):
    events += 1
"""

RUNNERS = {
    "ours-full": """
from binlog_grammar.binlog.stream import open_stream
start = time.perf_counter()
events = rows = 0
for se in open_stream([PATH]).events():
    events += 1
    rows += sum(1 + (c.op == "u") for c in se.changes)
""",
    "ours-construct": """
from binlog_grammar.binlog.reader import BinlogFile
from binlog_grammar.binlog.rows import RowDecoder
start = time.perf_counter()
dec = RowDecoder(fast=False)
events = rows = 0
for ev in BinlogFile(PATH, fast=False):
    events += 1
    if ev.type is None:
        continue
    if ev.type.name == "TABLE_MAP_EVENT":
        dec.table_map(ev)
    elif ev.type.row_op:
        rows += sum(1 + (c.op == "u") for c in dec.changes(ev))
""",
    "ours-framing": _SCAN.format(backend="auto"),
    # framing on each backend (binlog_grammar.native), and a plain `stats` over the same file
    "ours-framing-c": _SCAN.format(backend="c"),
    "ours-framing-c-walk": """
import mmap, os
os.environ["BINLOG_GRAMMAR_BACKEND"] = "c"
from binlog_grammar.binlog.framing import compiled, give_back
from binlog_grammar.binlog.header import V4_HEADER_LEN
mod = compiled()
start = time.perf_counter()
events, rows = 0, None  # the compiled walk with every CRC32 checked, its records not unpacked
with open(PATH, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
    pos, dropped = 4, 0
    while True:
        recs, pos, status, _c, _l = mod.walk(mm, len(mm), pos, len(mm), V4_HEADER_LEN, True,
                                             1 << 16)
        events += len(recs) // mod.RECORD_SIZE
        dropped = give_back(mm, dropped, pos)  # the pages passed, as the commands' walks do
        if status != mod.FULL:
            break
""",
    "ours-framing-c-crc32": """
import os
os.environ["BINLOG_GRAMMAR_BACKEND"] = "c"
from binlog_grammar.binlog.framing import frames
start = time.perf_counter()
events, rows = 0, None
for f in frames(PATH, checksums=True):
    events += 1
""",
    "ours-framing-python": _SCAN.format(backend="python"),
    "ours-stats": """
import contextlib, io
from binlog_grammar.cli import main
start = time.perf_counter()
events, rows = None, None
with contextlib.redirect_stdout(io.StringIO()):
    main(["stats", PATH])
""",
    # stats on the Python backend: every event parsed and every row value decoded (the path
    # stats took before output/stats_fast.py, and still takes without the compiled backend)
    "ours-stats-python": """
import contextlib, io, os
os.environ["BINLOG_GRAMMAR_BACKEND"] = "python"
from binlog_grammar.cli import main
start = time.perf_counter()
events, rows = None, None
with contextlib.redirect_stdout(io.StringIO()):
    main(["stats", PATH])
""",
    "python-header-walk": """
events, rows = 0, None  # the baseline of header-only framing: plain Python, buffered reads
with open(PATH, "rb") as fh:
    fh.seek(4)
    while True:
        head = fh.read(19)
        if len(head) < 19:
            break
        fh.seek(int.from_bytes(head[9:13], "little") - 19, 1)
        events += 1
""",
    "python-mysql-replication": """
from pymysql.protocol import MysqlPacket
from pymysqlreplication import event as E, row_event as R
from pymysqlreplication.packet import BinLogPacketWrapper

class Ctl:  # stand-in for the control connection: the binlog's own metadata is used
    charset = "utf8mb4"
    def _get_dbms(self): return "mariadb"
    def _get_table_information(self, *a, **k): return None

allowed = {E.FormatDescriptionEvent, E.RotateEvent, E.XidEvent, E.QueryEvent, E.GtidEvent,
           E.MariadbGtidEvent, E.MariadbAnnotateRowsEvent, E.MariadbBinLogCheckPointEvent,
           E.MariadbGtidListEvent, R.TableMapEvent, R.WriteRowsEvent, R.UpdateRowsEvent,
           R.DeleteRowsEvent}
start = time.perf_counter()
table_map, ctl = {}, Ctl()
events = rows = 0
with open(PATH, "rb") as fh:
    fh.read(4)
    while True:
        head = fh.read(19)
        if len(head) < 19:
            break
        raw = head + fh.read(int.from_bytes(head[9:13], "little") - 19)
        events += 1
        pkt = BinLogPacketWrapper(MysqlPacket(b"\\x00" + raw, "utf8"), table_map, ctl, (10, 11, 0),
                                  True, allowed, None, None, None, None, False, False, False, True,
                                  False)
        ev = pkt.event
        if isinstance(ev, R.TableMapEvent):
            table_map[ev.table_id] = ev.get_table()
        elif isinstance(ev, R.RowsEvent):
            for r in ev.rows:
                rows += 2 if "before_values" in r else 1
""",
}


# --jobs N (issue 26, item 4): dump, dump --format jsonl, sql and stats on 1 and 2 processes,
# output to /dev/null; the time includes starting the worker pool and planning the splits
def _jobs_runner(argv, jobs):
    return f"""
import contextlib, os
from binlog_grammar.cli import main
start = time.perf_counter()
events, rows = None, None
with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
    main({argv!r} + ["--jobs", "{jobs}", PATH])
"""


JOBS_COMMANDS = {"dump": ["dump", "-vv", "--base64-output=decode-rows"], "jsonl": ["dump", "-vv", "--base64-output=decode-rows", "--format", "jsonl"], "sql": ["sql"],
                 "stats": ["stats"]}
for _name, _argv in JOBS_COMMANDS.items():
    for _jobs in (1, 2):
        RUNNERS[f"jobs-{_name}-{_jobs}"] = _jobs_runner(_argv, _jobs)
# dump --format text (the compiled text lane) in process, the work after imports: on a MySQL 8
# binlog of compressed transactions (tools/make_payload_binlog.py) beside ours-full, the API
RUNNERS["ours-text"] = _jobs_runner(["dump", "--format", "text"], 1)


# the commands a user types on the big file, the whole process each, against mariadb-binlog -vv
# on the same file in the same run (issue 26's goals: dump text and JSON lines at most 1.0x its
# wall time with --jobs 1, dump text at most 0.6x with --jobs 2)
WHOLE = {"cli-dump": ["dump", "-vv", "--base64-output=decode-rows", "--jobs", "1"], "cli-dump-jobs2": ["dump", "-vv", "--base64-output=decode-rows", "--jobs", "2"],
         "cli-jsonl": ["dump", "--format", "jsonl", "--jobs", "1"],
         "cli-jsonl-jobs2": ["dump", "--format", "jsonl", "--jobs", "2"], "cli-stats": ["stats"],
         "cli-debezium": ["dump", "--format", "jsonl", "--envelope", "debezium"]}
WHOLE_GOALS = {"cli-dump": 1.0, "cli-dump-jobs2": 0.6, "cli-jsonl": 1.0}
# dump --flashback against mariadb-binlog --flashback, both whole processes (issue 28)
FLASHBACK = {"cli-flashback": ["dump", "--flashback"],
             "mariadb-binlog-flashback": ["--flashback"]}
# dump's default replay form (and -v) against mariadb-binlog FILE (and -v), both whole processes
# (issue 28: BINLOG blocks of the events' bytes, byte-identical output)
# (--jobs 1: one process, as before --jobs split these forms; the -jobs2 runners on two: issue 26)
REPLAY = {"cli-replay": ["dump", "--base64-output=auto", "--jobs", "1"],
          "cli-replay-v": ["dump", "--base64-output=auto", "-v", "--jobs", "1"],
          "cli-replay-vv": ["dump", "--base64-output=auto", "-vv", "--jobs", "1"],
          "cli-replay-jobs2": ["dump", "--base64-output=auto", "--jobs", "2"],
          "cli-replay-v-jobs2": ["dump", "--base64-output=auto", "-v", "--jobs", "2"],
          "cli-replay-vv-jobs2": ["dump", "--base64-output=auto", "-vv", "--jobs", "2"],
          "mariadb-binlog-replay": [], "mariadb-binlog-replay-v": ["-v"],
          "mariadb-binlog-replay-vv": ["-vv"]}

# start to end of the command a user types (issue 26): the whole process, imports included
STARTUP = {"startup-dump": ["dump"],
           "startup-dump-vv": ["dump", "-vv", "--base64-output=decode-rows"],
           "startup-jsonl": ["dump", "--format", "jsonl"],
           "startup-sql": ["sql"], "startup-stats": ["stats"], "startup-verify": ["verify"]}
SAMPLE = ROOT / "samples" / "mariadb-10.11-sample.000001"


_COMMAND = []


def command_line() -> list:
    """binlog-grammar as installed beside this Python: its console script, what a user of that
    environment runs (a version manager's shim on PATH, such as pyenv's, adds its own start and
    is not the project's), when that script runs this tree's package; else python -m
    binlog_grammar run from this tree (a Python whose install is another tree's, a clone's)."""
    if not _COMMAND:
        script = Path(sys.executable).parent / "binlog-grammar"
        _COMMAND.extend([sys.executable, "-m", "binlog_grammar"])
        if script.exists():
            # what the script imports: its folder first on sys.path, then the installed package
            where = subprocess.run([sys.executable, "-c", "import binlog_grammar\n"
                                    "print(binlog_grammar.__file__)"], cwd=script.parent,
                                   env=RUN_ENV, capture_output=True, text=True).stdout.strip()
            if where and Path(where).resolve().parent.parent == ROOT:
                _COMMAND[:] = [str(script)]
    return _COMMAND


def run_whole(argv) -> dict:
    """Time one process start to end, stdout to /dev/null; its own peak RSS."""
    with open(os.devnull, "wb") as null:
        start = time.perf_counter()
        p = subprocess.Popen(argv, stdout=null, stderr=subprocess.PIPE, cwd=ROOT, env=RUN_ENV)
        err = p.stderr.read()
        _pid, status, usage = os.wait4(p.pid, 0)
        secs = time.perf_counter() - start
    p.stderr.close()
    # 1: the input had problems (flashback notes, damage): still a whole run of the command
    ok = os.waitstatus_to_exitcode(status) in (0, 1)
    return {"seconds": secs, "events": None, "rows": None, "maxrss_kb": usage.ru_maxrss, "ok": ok,
            "cpu": usage.ru_utime + usage.ru_stime,  # the process's own: less moved by a shared machine's load
            "error": err.decode(errors="replace").strip().splitlines()[-1:] or ["?"]}


# Python runners import byte-compiled modules, as on a normal installation (some environments set
# PYTHONDONTWRITEBYTECODE, which would make every run compile every module it imports again)
RUN_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


HEADER = """# Benchmarks

Written by `tools/bench.py` (see its docstring); the binlogs by `tools/make_bench_binlog.py`,
which runs a deterministic workload on a throwaway MariaDB server. Only same-run ratios mean
much: the machines are shared, so absolute times move with the load.
"""


def file_shape(path) -> str:
    """Events, row images and the busiest event types of the file (a header walk + row count)."""
    from collections import Counter

    from binlog_grammar.binlog.framing import scan
    from binlog_grammar.generated import enums

    kinds = Counter(enums.EVENT_TYPE.get(code, str(code)) for _pos, code, _len in scan(path))
    top = ", ".join(f"{n} {k}" for k, n in kinds.most_common(5))
    return f"{sum(kinds.values()):,} events ({top})"


def warm_up():
    """Write the bytecode caches of every module the runners import, before any timing."""
    subprocess.run([sys.executable, "-c", "import binlog_grammar.binlog.stream, binlog_grammar.binlog.framing, "
                    "binlog_grammar.codegen.table, binlog_grammar.generated.fast\n"
                    "try:\n    import pymysqlreplication.packet\nexcept ImportError:\n    pass"],
                   cwd=ROOT, env=RUN_ENV, check=False)


def run_one(name, path) -> dict:
    """Time one runner in a fresh process; its peak RSS comes from the process itself."""
    if name in STARTUP:
        return run_whole(command_line() + STARTUP[name] + [str(path)])
    if name in WHOLE:
        return run_whole(command_line() + WHOLE[name] + [str(path)])
    if name == "startup-mariadb-binlog":
        return run_whole(["mariadb-binlog", str(path)])
    if name == "cli-flashback":
        return run_whole(command_line() + FLASHBACK[name] + [str(path)])
    if name.startswith("cli-replay"):
        return run_whole(command_line() + REPLAY[name] + [str(path)])
    if name in ("mariadb-binlog-replay", "mariadb-binlog-replay-v", "mariadb-binlog-replay-vv"):
        return run_whole(["mariadb-binlog", "--no-defaults", *REPLAY[name], str(path)])
    if name == "mariadb-binlog-flashback":
        return run_whole(["mariadb-binlog", "--no-defaults", *FLASHBACK[name], str(path)])
    if name == "mariadb-binlog":
        start = time.perf_counter()
        with open(os.devnull, "wb") as null:
            r = subprocess.run(["mariadb-binlog", "-vv", "--base64-output=decode-rows", str(path)],
                               stdout=null, stderr=subprocess.PIPE)
        secs = time.perf_counter() - start
        import resource

        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        return {"seconds": secs, "events": None, "rows": None, "maxrss_kb": rss, "ok": r.returncode == 0}
    code = ("import json, resource, sys, time\nPATH = sys.argv[1]\nstart = time.perf_counter()\n"
            + RUNNERS[name] + "\nsecs = time.perf_counter() - start\n"
            "print(json.dumps({'seconds': secs, 'events': events, 'rows': rows, "
            "'maxrss_kb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, 'ok': True}))\n")
    r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                       cwd=ROOT, env=RUN_ENV)
    if r.returncode != 0:
        return {"ok": False, "error": r.stderr.strip().splitlines()[-1:] or ["?"]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def sample_check(path, limit=2000) -> dict:
    """Decode the first row images with both decoders and compare the values."""
    import datetime as dt
    import decimal

    from pymysql.protocol import MysqlPacket
    from pymysqlreplication import event as E
    from pymysqlreplication import row_event as R
    from pymysqlreplication.packet import BinLogPacketWrapper

    from binlog_grammar.binlog.rows import iter_row_changes

    ours = []
    for ch in iter_row_changes(path):
        ours += [ch.before, ch.after] if ch.op == "u" else [ch.after or ch.before]
        if len(ours) >= limit:
            break

    class Ctl:
        charset = "utf8mb4"

        def _get_dbms(self):
            return "mariadb"

        def _get_table_information(self, *a, **k):
            return None

    allowed = {E.FormatDescriptionEvent, R.TableMapEvent, R.WriteRowsEvent, R.UpdateRowsEvent,
               R.DeleteRowsEvent}
    theirs, table_map = [], {}
    with open(path, "rb") as fh:
        fh.read(4)
        while len(theirs) < limit:
            head = fh.read(19)
            if len(head) < 19:
                break
            raw = head + fh.read(int.from_bytes(head[9:13], "little") - 19)
            pkt = BinLogPacketWrapper(MysqlPacket(b"\x00" + raw, "utf8"), table_map, Ctl(), (10, 11, 0),
                                      True, allowed, None, None, None, None, False, False, False,
                                      True, False)
            ev = pkt.event
            if isinstance(ev, R.TableMapEvent):
                table_map[ev.table_id] = ev.get_table()
            elif isinstance(ev, R.RowsEvent):
                for r in ev.rows:
                    theirs += [r["before_values"], r["after_values"]] if "before_values" in r \
                        else [r["values"]]

    def norm(v):
        if isinstance(v, dt.datetime) and v.tzinfo is not None:
            return v.replace(tzinfo=None)
        if isinstance(v, (set, frozenset)):
            return frozenset(v)
        if isinstance(v, decimal.Decimal):
            return str(v)
        if isinstance(v, float):
            return round(v, 5)
        return v

    same = differ = 0
    examples = {}
    for a, b in zip(ours, theirs):
        for k, va in a.items():
            vb = b.get(k)
            if norm(va) == norm(vb) or (isinstance(va, bytes) and isinstance(vb, str)
                                        and va.decode("utf-8", "replace") == vb):
                same += 1
            else:
                differ += 1
                examples.setdefault(k, (va, vb))
    return {"rows": min(len(ours), len(theirs)), "values_same": same, "values_differ": differ,
            "examples": {k: [repr(a)[:60], repr(b)[:60]] for k, (a, b) in list(examples.items())[:8]}}


def oracle_check(path, limit=2000) -> dict:
    """Compare the values of the first transactions (at least `limit` row images) with what
    `mariadb-binlog -vv` prints for them (tests/helpers/oracle.py parses it; textfmt.vv_value prints ours
    the way it does)."""
    import os

    sys.path.insert(0, str(ROOT / "tests"))
    from helpers import oracle

    from binlog_grammar.binlog.stream import open_stream
    from binlog_grammar.output.text import vv_value

    ours, stop, images = [], None, 0
    for tx in open_stream([path]).transactions():
        ours += tx.changes
        images += sum(2 if ch.op == "u" else 1 for ch in tx.changes)
        stop = tx.end_pos
        if images >= limit:
            break
    env = dict(os.environ, TZ="UTC", LC_ALL="C")
    out = subprocess.run(["mariadb-binlog", *oracle.ARGS, f"--stop-position={stop}", str(path)],
                         capture_output=True, env=env, timeout=600)
    run = oracle.parse(out.stdout.decode("utf-8", "surrogateescape"), str(path), out.returncode)
    same = differ = 0
    examples = {}
    for ch, oc in zip(ours, run.changes):
        for mine, theirs in ((ch.before, oc.before), (ch.after, oc.after)):
            for name, value in (mine or {}).items():
                col = next(c for c in ch.columns if c.name == name)
                text = (theirs or {}).get(col.index + 1, (None,))[0]
                if vv_value(value, col) == text:
                    same += 1
                else:
                    differ += 1
                    examples.setdefault(name, (vv_value(value, col), text))
    return {"changes": min(len(ours), len(run.changes)), "counts_equal": len(ours) == len(run.changes),
            "values_same": same, "values_differ": differ,
            "examples": {k: [repr(a)[:60], repr(b)[:60]] for k, (a, b) in list(examples.items())[:8]}}


def machine() -> str:
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.system()} {platform.release()}, {os.cpu_count()} cores ({cpu}), Python {platform.python_version()}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binlog")
    ap.add_argument("--make", default="/tmp/binlog-grammar-bench")
    ap.add_argument("--mb", type=int, default=120)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--install", action="store_true", help="pip install mysql-replication first")
    ap.add_argument("--write", help="write the report (Markdown) to this file")
    ap.add_argument("--append", action="store_true", help="add the report to the --write file")
    ap.add_argument("--only", action="append", help="run only these runners")
    ap.add_argument("--startup", action="store_true",
                    help="the startup runners (whole processes) on the sample or --binlog")
    args = ap.parse_args(argv)
    if args.startup:
        args.binlog = args.binlog or str(SAMPLE)
        args.only = args.only or [*STARTUP, "startup-mariadb-binlog"]
    if args.install:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "mysql-replication==1.0.17"],
                       check=True)
    path = Path(args.binlog) if args.binlog else None
    if path is None:
        out = subprocess.run([sys.executable, str(ROOT / "tools" / "make_bench_binlog.py"), args.make,
                              "--mb", str(args.mb)], capture_output=True, text=True, check=True)
        path = Path(out.stdout.strip().splitlines()[0].split("\t")[0])
    size = path.stat().st_size
    names = args.only or ["ours-full", "ours-construct", "ours-framing", "python-header-walk",
                          "python-mysql-replication", "mariadb-binlog"]
    results = {n: [] for n in names}
    warm_up()
    for n in names:  # a first run of each command writes its bytecode and spec model caches
        if n.startswith("startup-"):
            run_one(n, path)
    for _ in range(args.repeat):
        for n in names:  # alternating, so load changes hit every runner alike
            results[n].append(run_one(n, path))
    shape = file_shape(path)
    # the report names no folder of this machine: paths in the command become FILE / DIR
    shown = [a if not os.path.isabs(a) else ("DIR" if os.path.isdir(a) else "FILE")
             for a in (argv or sys.argv[1:])]
    lines = [f"## {path.name}, {size / 1e6:.1f} MB", "",
             f"{shape}. Machine: {machine()}.",
             f"Command: `python tools/bench.py {' '.join(shown)}`; each runner in a fresh "
             f"process, {args.repeat} rounds alternating; median wall time of the work (Python "
             f"runners: after their imports; mariadb-binlog and startup-*: the whole process).", "",
             "| runner | seconds | events/s | row images/s | MB/s | peak RSS MB |", "|---|---|---|---|---|---|"]
    med = {}
    for n, rs in results.items():
        ok = [r for r in rs if r.get("ok")]
        if not ok:
            lines.append(f"| {n} | failed: {rs[0].get('error')} | | | | |")
            continue
        secs = statistics.median(r["seconds"] for r in ok)
        med[n] = (secs, ok[0])
        ev, rows = ok[0]["events"], ok[0]["rows"]
        cells = [f"{secs:.2f}", f"{ev / secs:,.0f}" if ev is not None else "",
                 f"{rows / secs:,.0f}" if rows is not None else "", f"{size / secs / 1e6:.1f}",
                 f"{max(r['maxrss_kb'] for r in ok) / 1024:.0f}"]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    lines += ["", "Ratios (same run):"]
    if "ours-full" in med and "python-mysql-replication" in med:
        a, b = med["ours-full"], med["python-mysql-replication"]
        lines.append(f"- row images/s, ours full decode / python-mysql-replication: "
                     f"{(a[1]['rows'] / a[0]) / (b[1]['rows'] / b[0]):.2f}x (goal at least 15x)")
    if "ours-full" in med and "mariadb-binlog" in med:
        lines.append(f"- wall time, ours full decode / mariadb-binlog -vv: "
                     f"{med['ours-full'][0] / med['mariadb-binlog'][0]:.2f}x (goal at most 3x)")
    if "ours-full" in med and "ours-construct" in med:
        lines.append(f"- fast readers vs the construct path: "
                     f"{med['ours-construct'][0] / med['ours-full'][0]:.2f}x faster")
    if "ours-framing" in med:
        lines.append(f"- header-only framing: {size / med['ours-framing'][0] / 1e9:.2f} GB/s" + (
            f", {med['python-header-walk'][0] / med['ours-framing'][0]:.2f}x the plain Python header "
            f"walk (goal at least 1x)" if "python-header-walk" in med else ""))
    walks = [n for n in ("ours-framing-c-walk", "ours-framing-c", "ours-framing-c-crc32", "ours-framing-python",
                         "python-header-walk", "ours-stats", "ours-stats-python") if n in med]
    if walks:
        base = med.get("ours-framing-python", med[walks[0]])[0]
        lines.append("- framing, MB/s side by side (x: speed over ours-framing-python): " + ", ".join(
            f"{n} {size / med[n][0] / 1e6:,.0f} ({base / med[n][0]:.1f}x)" for n in walks)
            + "; goal for the header walk and stats: at least 1,000 MB/s")
    if "ours-stats" in med and "ours-stats-python" in med:
        lines.append(f"- stats from the compiled walk: {size / med['ours-stats'][0] / 1e6:,.0f} MB/s, "
                     f"{med['ours-stats-python'][0] / med['ours-stats'][0]:.1f}x stats on the Python "
                     f"backend (goal: at least 1,000 MB/s)")
    starts = [n for n in STARTUP if n in med]
    if starts:
        base = med.get("startup-mariadb-binlog")
        cmd = "binlog-grammar" if len(command_line()) == 1 else "python -m binlog_grammar"
        cpu = {n: statistics.median(r["cpu"] for r in results[n] if r.get("ok")) for n in starts}
        lines.append(f"- start to end on this {size:,}-byte file, `{cmd} COMMAND FILE > /dev/null`: "
                     + ", ".join(
                         f"{' '.join(STARTUP[n])} {med[n][0]:.3f} s"
                         + (f" ({med[n][0] / base[0]:.0f}x mariadb-binlog)" if base else "")
                         for n in starts)
                     + (f"; mariadb-binlog FILE {base[0]:.3f} s" if base else "")
                     + "; goal for dump: under 0.15 s")
        lines.append("- their CPU time (user + system, median; what the load average moves least): "
                     + ", ".join(f"{' '.join(STARTUP[n])} {cpu[n]:.3f} s" for n in starts)
                     + (f"; load average {os.getloadavg()[0]:.1f} at the end on "
                        f"{os.cpu_count()} cores"))
    whole = [n for n in WHOLE if n in med]
    if whole and "mariadb-binlog" in med:
        mb = med["mariadb-binlog"][0]
        cmd = "binlog-grammar" if len(command_line()) == 1 else "python -m binlog_grammar"
        lines.append(f"- start to end, `{cmd} COMMAND FILE > /dev/null` / mariadb-binlog -vv "
                     "--base64-output=decode-rows on the same file: " + ", ".join(
                         f"{' '.join(WHOLE[n])} {med[n][0]:.2f} s ({med[n][0] / mb:.2f}x"
                         + (f", goal at most {WHOLE_GOALS[n]}x" if n in WHOLE_GOALS else "") + ")"
                         for n in whole) + f"; mariadb-binlog {mb:.2f} s")
    if "cli-flashback" in med and "mariadb-binlog-flashback" in med:
        a, b = med["cli-flashback"][0], med["mariadb-binlog-flashback"][0]
        lines.append(f"- start to end, dump --flashback FILE / mariadb-binlog --flashback FILE: "
                     f"{a:.2f} s / {b:.2f} s ({a / b:.2f}x)")
    for ours, theirs in (("cli-replay", "mariadb-binlog-replay"),
                         ("cli-replay-v", "mariadb-binlog-replay-v"),
                         ("cli-replay-vv", "mariadb-binlog-replay-vv"),
                         ("cli-replay-jobs2", "mariadb-binlog-replay"),
                         ("cli-replay-v-jobs2", "mariadb-binlog-replay-v"),
                         ("cli-replay-vv-jobs2", "mariadb-binlog-replay-vv")):
        if ours in med and theirs in med:
            a, b = med[ours][0], med[theirs][0]
            flags = " ".join(REPLAY[theirs])
            jobs = " ".join(REPLAY[ours][REPLAY[ours].index("--jobs"):])
            lines.append(f"- start to end, dump {flags + ' ' if flags else ''}{jobs} FILE / "
                         f"mariadb-binlog {flags + ' ' if flags else ''}FILE: {a:.2f} s / {b:.2f} s "
                         f"({a / b:.2f}x)")
    pairs = [(n, med[f"jobs-{n}-1"][0], med[f"jobs-{n}-2"][0]) for n in JOBS_COMMANDS
             if f"jobs-{n}-1" in med and f"jobs-{n}-2" in med]
    if pairs:
        lines.append("- --jobs 1 / --jobs 2, wall time (x: speed-up): " + ", ".join(
            f"{n} {a:.2f} s / {b:.2f} s ({a / b:.2f}x)" for n, a, b in pairs))
    peak = [max(r["maxrss_kb"] for r in results[n] if r.get("ok")) / 1024 for n in med
            if n.startswith(("ours", "cli-"))]
    if peak:
        lines.append(f"- peak RSS of this project's runners: at most {max(peak):.0f} MB (goal under 100 MB)")
    if "python-mysql-replication" in med:
        chk = sample_check(path)
        lines += ["", f"Sample check against python-mysql-replication ({chk['rows']} row images): "
                      f"{chk['values_same']} values the same, "
                      f"{chk['values_differ']} differ" + (":" if chk["examples"] else ".")]
        for k, (a, b) in chk["examples"].items():
            lines.append(f"- `{k}`: ours `{a}`, python-mysql-replication `{b}`")
    if "mariadb-binlog" in med:
        chk = oracle_check(path)
        lines += ["", f"Sample check against mariadb-binlog -vv ({chk['changes']} row changes, "
                      f"{'the same count' if chk['counts_equal'] else 'counts differ'}): "
                      f"{chk['values_same']} values print the same, {chk['values_differ']} differ"
                      + (":" if chk["examples"] else ".")]
        for k, (a, b) in chk["examples"].items():
            lines.append(f"- `{k}`: ours `{a}`, mariadb-binlog `{b}`")
        if not chk["values_differ"] and "python-mysql-replication" in med:
            lines.append("So where python-mysql-replication differs from ours above, it differs from "
                         "mariadb-binlog too.")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        out = Path(args.write)
        out.parent.mkdir(parents=True, exist_ok=True)
        if args.append and out.exists():
            out.write_text(out.read_text() + "\n" + text)
        else:
            out.write_text(HEADER + "\n" + text)


if __name__ == "__main__":
    main()
