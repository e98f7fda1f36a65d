#!/usr/bin/env python3
"""Fuzz every reading command with mutated binlogs.

Every file of the corpus (../shared/corpus/mysql, when present) and of samples/ is mutated -- bit
flips, truncations, huge lengths in event headers, whole events spliced in from other files,
zeroed regions, runs of random bytes -- and each mutant goes through every reading command:
`verify`, `dump` (text), `dump --format jsonl`, `stats`, `sql` and `flashback`, each of the last
five with and without `--skip-damaged`. What must hold, for every run:

- no Python traceback: the command returns (or exits through argparse); nothing raises out of
  `cli.main`, and no exception class name (`...Error:`, `Traceback`) is in stderr;
- no hang: each run has a time limit (--timeout, seconds);
- bounded memory: the worker processes run with an address-space limit (--rss-mib) and their
  peak RSS is reported;
- exit status 0 or 1, never another;
- with `--skip-damaged`, `dump` reaches the file's last valid event: the last event of the
  unmutated file whose bytes the mutation did not touch has its `# at POS` line in the text
  output and its `"pos": POS` in the JSON lines (POS in the mutated file).

Runs are in-process (`cli.main(argv)` with stdout and stderr captured) in `--jobs` worker
processes; `--subprocess N` also runs N mutants through `python -m binlog_grammar` (each run's
RSS measured with wait4). Mutants are drawn from `--seed`, so a run is reproducible; `--keep DIR`
writes the mutants that showed a problem there, with a line each in DIR/problems.txt.

Mutations never splice in a FORMAT_DESCRIPTION_EVENT or a START_ENCRYPTION_EVENT of another file:
such an event legitimately changes how everything after it is read, so "the last valid event"
would not be the file's any more.

Usage (from the repository root):

    python tools/fuzz.py                          # 400 mutants, 2 jobs, about a minute
    python tools/fuzz.py --mutants 20000 --jobs 4 --seed 7 --keep /tmp/fuzz-problems
    python tools/fuzz.py --mutants 300 --subprocess 30 --files 'json*'

tests/cli/test_fuzz.py runs a bounded sample of the same (test_every_reading_command_on_mutants).
Exit status: 0 when nothing was found, 1 when a run broke one of the rules above.
"""
from __future__ import annotations

import argparse
import contextlib
import fnmatch
import io
import json
import os
import random
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "mysql"
sys.path.insert(0, str(ROOT))

# (name, argv before the file, takes --skip-damaged)
COMMANDS = [
    ("verify", ["verify"], False),
    ("dump", ["dump", "--format", "text"], True),
    ("dump jsonl", ["dump", "--format", "jsonl"], True),
    ("stats", ["stats"], True),
    ("sql", ["sql"], True),
    ("flashback", ["flashback"], True),
    ("flashback binlog", ["dump", "--flashback"], True),
]
KINDS = ["bit_flip", "truncate", "huge_length", "splice_event", "zero_region", "random_bytes"]
NOT_SPLICED = {"FORMAT_DESCRIPTION_EVENT", "START_ENCRYPTION_EVENT", "START_EVENT_V3"}
# an exception's class name at the start of a line or after ': ' (a traceback's last line), or
# a traceback itself; a clean error names the file and says what is wrong in words
EXCEPTION_RE = re.compile(r"Traceback \(most recent call last\)|(^|\n)\w*(Error|Exception)\b[^\n]*:|"
                          r"\b(KeyError|TypeError|AttributeError|IndexError|ValueError|"
                          r"struct\.error|RecursionError|MemoryError|ZeroDivisionError|"
                          r"UnboundLocalError|NameError|AssertionError|OverflowError)\b")


REACH_CHECKS = [0]  # how many times a dump's output was checked for the last valid event


class Hang(BaseException):
    """A run over its time limit (a BaseException: no `except Exception` in the code swallows it)."""


# ---------------------------------------------------------------------------------------------
# sources and mutants

@dataclass
class Source:
    path: Path
    data: bytes
    events: list  # (offset, length, name) of every event BinlogFile(skip_damaged=True) yields
    # the first FORMAT_DESCRIPTION_EVENT's end, and whether a CRC32 vouches for it (its own, or
    # the footers it announces): damage to an FDE nothing vouches for cannot be seen, and the
    # events after it are read with what the damaged FDE says
    fde_end: int = 4
    fde_vouched: bool = True


@dataclass
class Mutant:
    source: str  # file name
    kind: str
    what: str  # the mutation, in words (where, how)
    data: bytes
    last_valid: Optional[int] = None  # offset, in the mutant, of the last untouched event
    last_valid_name: Optional[str] = None
    unseen_fde: bool = False  # it changed an FDE nothing vouches for: no last valid event to reach


def corpus_paths(pattern="*") -> list:
    paths = sorted((ROOT / "samples").glob("mariadb-*"))
    if CORPUS.is_dir():
        paths += sorted(p for p in CORPUS.iterdir() if p.is_file())
    return [p for p in paths if fnmatch.fnmatch(p.name, pattern)]


def load_sources(paths) -> list:
    from binlog_grammar.errors import BinlogError
    from binlog_grammar.binlog.reader import BinlogFile

    out = []
    for p in paths:
        events = []
        src = Source(p, p.read_bytes(), events)
        bf = BinlogFile(p, skip_damaged=True)
        try:
            for ev in bf:
                events.append((ev.offset, len(ev.raw), ev.name))
                if ev.name == "FORMAT_DESCRIPTION_EVENT" and len(events) == 1:
                    src.fde_end = ev.end
                    src.fde_vouched = ev.checksum_ok is not None or bf.state.checksum_alg == 1
        except BinlogError:  # not even the magic number
            pass
        out.append(src)
    return out


def _last_untouched(src: Source, touched, cut=None, shift_at=None, shift=0):
    """(offset in the mutant, name) of the last event of `src` none of whose bytes lie in the
    `touched` ranges [a, b) and which ends before `cut`; events at or after `shift_at` moved by
    `shift` bytes. None when there is none."""
    for off, n, name in reversed(src.events):
        end = off + n
        if cut is not None and end > cut:
            continue
        if any(a < end and off < b for a, b in touched):
            continue
        return (off + shift if shift_at is not None and off >= shift_at else off), name
    return None


def make_mutant(rnd: random.Random, src: Source, sources: list, kind: str) -> Mutant:
    """One mutation of `src` (`sources`: where spliced events come from)."""
    from binlog_grammar.binlog.reader import LENGTH_AT

    data = bytearray(src.data)
    size = len(data)
    name = src.path.name
    if size <= 4:
        return Mutant(name, kind, "too short to mutate", bytes(data))
    touched, cut, shift_at, shift = [], None, None, 0
    if kind == "bit_flip":
        n = rnd.choice([1, 1, 1, 2, 3])
        where = []
        for _ in range(n):
            pos, bit = rnd.randrange(4, size), rnd.randrange(8)
            data[pos] ^= 1 << bit
            touched.append((pos, pos + 1))
            where.append(f"{pos}.{bit}")
        what = "bit flip at " + ", ".join(where)
    elif kind == "truncate":
        cut = rnd.randrange(4, size)
        del data[cut:]
        what = f"cut at {cut} of {size}"
    elif kind == "huge_length" and src.events:
        off, n, ename = rnd.choice(src.events)
        # lengths that do not fit in the file (a length that fits, in a file without CRC32s,
        # may make an event whose rest-of-event field takes the next event's bytes: undetectable)
        value = rnd.choice([0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, size + (1 << 24), size - off + 1,
                            size + (1 << 20)])
        data[off + LENGTH_AT:off + LENGTH_AT + 4] = value.to_bytes(4, "little")
        touched.append((off, off + n))
        what = f"event_length {value} in the {ename} at {off}"
    elif kind == "splice_event" and src.events:
        other = rnd.choice(sources)
        candidates = [e for e in other.events if e[2] not in NOT_SPLICED]
        if not candidates:
            return make_mutant(rnd, src, sources, "bit_flip")
        o_off, o_n, o_name = rnd.choice(candidates)
        at = rnd.choice([e[0] for e in src.events[1:]] + [src.events[-1][0] + src.events[-1][1]])
        data[at:at] = other.data[o_off:o_off + o_n]
        shift_at, shift = at, o_n
        what = f"the {o_name} at {o_off} of {other.path.name} put in at {at}"
    elif kind == "zero_region":
        pos = rnd.randrange(4, size)
        n = rnd.choice([4, 19, 64, 512, 4096])
        data[pos:pos + n] = bytes(min(n, size - pos))
        touched.append((pos, pos + n))
        what = f"{n} zero bytes at {pos}"
    else:  # random_bytes, or a kind the file has no events for
        pos = rnd.randrange(4, size)
        n = rnd.choice([2, 8, 40, 300])
        data[pos:pos + n] = rnd.randbytes(min(n, size - pos))
        touched.append((pos, pos + n))
        kind = "random_bytes"
        what = f"{n} random bytes at {pos}"
    unseen = not src.fde_vouched and any(a < src.fde_end and 4 < b for a, b in touched)
    last = None if unseen else _last_untouched(src, touched, cut, shift_at, shift)
    return Mutant(name, kind, what, bytes(data), last[0] if last else None,
                  last[1] if last else None, unseen)


def make_mutants(n: int, seed: int, pattern="*") -> list:
    """n mutants: round after round over every file, each round one kind of mutation."""
    sources = load_sources(corpus_paths(pattern))
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        src = sources[i % len(sources)]
        kind = KINDS[(i // len(sources)) % len(KINDS)]
        out.append(make_mutant(random.Random(rnd.getrandbits(64)), src, sources, kind))
    return out


# ---------------------------------------------------------------------------------------------
# running the commands

@dataclass
class Run:
    command: str
    skip: bool
    code: object
    seconds: float
    problem: Optional[str] = None


def _alarm(_signum, _frame):
    raise Hang()


def run_in_process(argv, timeout: float):
    """cli.main(argv) in this process: (exit status, stdout, stderr, seconds, problem)."""
    from binlog_grammar import cli

    out, err = io.StringIO(), io.StringIO()
    problem = None
    code = None
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(list(argv))
            except SystemExit as e:
                code = e.code
    except Hang:
        problem = f"hang: more than {timeout} s"
    except MemoryError:
        problem = "memory: MemoryError under the address-space limit"
    except Exception as e:  # noqa: BLE001 - exactly what must never happen
        import traceback

        tb = traceback.extract_tb(e.__traceback__)[-1]
        problem = (f"traceback: {type(e).__name__}: {' '.join(str(e).split())[:200]} "
                   f"({Path(tb.filename).name}:{tb.lineno})")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return code, out.getvalue(), err.getvalue(), time.perf_counter() - start, problem


def check_run(name, skip, code, out, err, problem, mutant: Mutant, path) -> Optional[str]:
    if problem:
        return problem
    m = EXCEPTION_RE.search(err)
    if m:
        line = next((ln for ln in err.splitlines() if m.group(0).strip() in ln), m.group(0))
        return f"exception name in stderr: {line.strip()[:240]}"
    if code not in (0, 1):
        return f"exit status {code!r}: {err.strip().splitlines()[-1][:200] if err.strip() else ''}"
    if skip and name.startswith("dump") and mutant.last_valid is not None:
        REACH_CHECKS[0] += 1
        pos = mutant.last_valid
        seen = (f"# at {pos}\n" in out) if name == "dump" else bool(
            re.search(rf'"pos": {pos}[,}}]', out))
        if not seen:
            return (f"did not reach the last valid event ({mutant.last_valid_name} at {pos}); "
                    f"stderr: {' | '.join(err.strip().splitlines()[-3:])[:300]}")
    return None


def run_mutant(args) -> dict:
    """Every command on one mutant (in a worker): {problems: [...], runs, seconds}."""
    index, mutant, timeout, tmpdir = args
    REACH_CHECKS[0] = 0
    path = Path(tmpdir) / f"m{os.getpid()}-{mutant.source}"
    path.write_bytes(mutant.data)
    problems, runs, slowest = [], 0, 0.0
    try:
        for name, argv, takes_skip in COMMANDS:
            for skip in ((False, True) if takes_skip else (False,)):
                full = [*argv, *(["--skip-damaged"] if skip else []), str(path)]
                code, out, err, secs, problem = run_in_process(full, timeout)
                runs += 1
                slowest = max(slowest, secs)
                bad = check_run(name, skip, code, out, err, problem, mutant, path)
                if bad:
                    problems.append({"mutant": index, "source": mutant.source, "kind": mutant.kind,
                                     "what": mutant.what, "command": " ".join(full[:-1]),
                                     "problem": bad})
    finally:
        path.unlink(missing_ok=True)
    return {"problems": problems, "runs": runs, "slowest": slowest, "reach_checks": REACH_CHECKS[0]}


def _worker_init(rss_mib):
    limit = rss_mib << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import binlog_grammar.cli  # noqa: F401 - imports before the first timed run
    import binlog_grammar.output.dump
    import binlog_grammar.output.sql


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _worker_peak(_):
    time.sleep(0.05)  # let every worker take one
    return os.getpid(), _peak_rss_mib()


def run_subprocess(mutant: Mutant, tmpdir, timeout: float, rss_mib: int) -> tuple:
    """The commands on one mutant through `python -m binlog_grammar`: (problems, peak RSS MiB)."""
    path = Path(tmpdir) / f"s-{mutant.source}"
    path.write_bytes(mutant.data)
    problems, peak = [], 0.0
    limit = rss_mib << 20

    def limits():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    for name, argv, takes_skip in COMMANDS:
        for skip in ((False, True) if takes_skip else (False,)):
            full = [*argv, *(["--skip-damaged"] if skip else []), str(path)]
            with tempfile.TemporaryFile() as o, tempfile.TemporaryFile() as e:
                p = subprocess.Popen([sys.executable, "-m", "binlog_grammar", *full], stdout=o,
                                     stderr=e, preexec_fn=limits, cwd=str(ROOT))
                deadline = time.monotonic() + timeout + 5
                problem = None
                while True:
                    pid, status, usage = os.wait4(p.pid, os.WNOHANG)
                    if pid:
                        break
                    if time.monotonic() > deadline:
                        p.kill()
                        pid, status, usage = os.wait4(p.pid, 0)
                        problem = f"hang: more than {timeout} s (subprocess)"
                        break
                    time.sleep(0.01)
                p.returncode = os.waitstatus_to_exitcode(status)
                peak = max(peak, usage.ru_maxrss / 1024)
                o.seek(0)
                e.seek(0)
                out = o.read().decode("utf-8", "replace")
                err = e.read().decode("utf-8", "replace")
            bad = check_run(name, skip, p.returncode, out, err, problem, mutant, path)
            if bad:
                problems.append({"source": mutant.source, "kind": mutant.kind, "what": mutant.what,
                                 "command": "python -m binlog_grammar " + " ".join(full[:-1]),
                                 "problem": bad})
    path.unlink(missing_ok=True)
    return problems, peak


def fuzz(mutants=400, seed=20240611, jobs=2, timeout=20.0, rss_mib=2048, subprocess_sample=0,
         pattern="*", keep=None, quiet=True) -> dict:
    """Run the fuzz; the figures and every problem found."""
    import multiprocessing

    started = time.perf_counter()
    cases = make_mutants(mutants, seed, pattern)
    figures = {"mutants": len(cases), "runs": 0, "reach_checks": 0, "problems": [],
               "slowest_run_seconds": 0.0,
               "kinds": {k: sum(1 for c in cases if c.kind == k) for k in KINDS},
               "files": len({c.source for c in cases}), "seed": seed,
               "unseen_fde_damage": sum(c.unseen_fde for c in cases),
               "commands": [n + (" (and --skip-damaged)" if s else "") for n, _a, s in COMMANDS]}
    with tempfile.TemporaryDirectory() as tmpdir:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(jobs, initializer=_worker_init, initargs=(rss_mib,)) as pool:
            tasks = [(i, m, timeout, tmpdir) for i, m in enumerate(cases)]
            for k, res in enumerate(pool.imap_unordered(run_mutant, tasks, chunksize=4)):
                figures["runs"] += res["runs"]
                figures["reach_checks"] += res["reach_checks"]
                figures["problems"] += res["problems"]
                figures["slowest_run_seconds"] = max(figures["slowest_run_seconds"], res["slowest"])
                if not quiet and (k + 1) % 100 == 0:
                    print(f"  {k + 1}/{len(cases)} mutants, {len(figures['problems'])} problems",
                          file=sys.stderr, flush=True)
            peaks = dict(pool.map(_worker_peak, range(jobs * 4)))
        figures["peak_rss_mib_in_process"] = round(max(peaks.values()), 1)
        if subprocess_sample:
            rnd = random.Random(seed ^ 0x5EED)
            sample = rnd.sample(cases, min(subprocess_sample, len(cases)))
            peak = 0.0
            for m in sample:
                problems, p = run_subprocess(m, tmpdir, timeout, rss_mib)
                figures["problems"] += problems
                figures["runs"] += sum(2 if s else 1 for _n, _a, s in COMMANDS)
                peak = max(peak, p)
            figures["subprocess_mutants"] = len(sample)
            figures["peak_rss_mib_subprocess"] = round(peak, 1)
    if keep and figures["problems"]:
        keep = Path(keep)
        keep.mkdir(parents=True, exist_ok=True)
        with open(keep / "problems.txt", "a", encoding="utf-8") as fh:
            for p in figures["problems"]:
                if "mutant" in p:
                    name = f"mutant-{seed}-{p['mutant']}-{p['source']}"
                    (keep / name).write_bytes(cases[p["mutant"]].data)
                    p["kept"] = str(keep / name)
                fh.write(json.dumps(p) + "\n")
    figures["seconds"] = round(time.perf_counter() - started, 1)
    return figures


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mutants", type=int, default=400, help="how many mutants (default 400)")
    ap.add_argument("--seed", type=int, default=20240611, help="seed of the mutations")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds one run may take")
    ap.add_argument("--rss-mib", type=int, default=2048,
                    help="address-space limit of each worker and subprocess, MiB (default 2048)")
    ap.add_argument("--subprocess", type=int, default=0, metavar="N",
                    help="also run N of the mutants through python -m binlog_grammar")
    ap.add_argument("--files", default="*", help="only files whose name matches this pattern")
    ap.add_argument("--keep", metavar="DIR", help="write the mutants that showed a problem here")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    figures = fuzz(args.mutants, args.seed, args.jobs, args.timeout, args.rss_mib, args.subprocess,
                   args.files, args.keep, quiet=args.json)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for p in figures["problems"]:
            print(f"PROBLEM {p['source']} ({p['what']}): {p['command']}: {p['problem']}")
        f = {k: v for k, v in figures.items() if k != "problems"}
        print(f"{f['mutants']} mutants of {f['files']} files ({f['kinds']}), {f['runs']} runs "
              f"of {', '.join(f['commands'])} ({f['reach_checks']} checked for the last valid "
              f"event; {f['unseen_fde_damage']} mutants changed an FDE without CRC32, not "
              f"checked): {len(figures['problems'])} problems; slowest run "
              f"{f['slowest_run_seconds']:.2f} s; peak RSS {f['peak_rss_mib_in_process']} MiB "
              f"in-process" + (f", {f['peak_rss_mib_subprocess']} MiB in {f['subprocess_mutants']} "
                               f"mutants' subprocesses" if "subprocess_mutants" in f else "")
              + f"; {f['seconds']} s (seed {f['seed']})")
    return 1 if figures["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
