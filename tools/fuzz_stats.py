#!/usr/bin/env python3
"""Sanitizer fuzzing of `stats`' compiled loop (binlog_grammar.native._stats, codegen/c_stats.py):
the extensions built under AddressSanitizer and UndefinedBehaviorSanitizer into a temporary folder
and mutated binlogs counted in process by `binlog-grammar --backend c stats` and `--backend
python stats` (text, or --json with a small --top); the exit status, stdout (the backend's line
aside) and stderr must be equal. A sanitizer report or any difference is a finding: the mutant is
written to --findings (default: a folder the run prints).

The build, the seeds and half the mutations are tools/fuzz_lane.py's (the lane's campaign): its
seeds hold bench-like files of the first sample's transactions repeated (one more here, of 40),
where the loop counts most transactions, and its mutations mostly make every end_log_pos and
CRC32 right again, so the damage reaches the loop's reading rather than the CRC32 check. The
other half (`resize`) give one event the loop reads other data and the length to match.

    python3 tools/fuzz_stats.py [--execs N] [--seed S] [--findings DIR] [--seconds T]

It prints the executions, the transactions the compiled loop counted, and the findings; exit
status 1 when anything was found. tests/output/test_stats_loop.py runs a bounded share.
"""
from __future__ import annotations

import argparse
import io
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fuzz_lane  # noqa: E402  (tools/fuzz_lane.py: the sanitized build, seeds and mutations)

OPTIONS = ([], ["--json", "--top", "3"], ["--top", "0"])
HL, CRC = fuzz_lane.HL, 4
# the events the loop reads: MariaDB GTID, XID, ANNOTATE_ROWS, TABLE_MAP, rows v1 and v2, MySQL's
# GTID and ANONYMOUS_GTID, QUERY (its BEGIN)
LOOP_CODES = (162, 16, 160, 19, 23, 24, 25, 30, 31, 32, 33, 34, 2)


def resize(data: bytes, rnd: random.Random) -> bytes:
    """One event the loop reads given other data (bits flipped, bytes cut or added, see
    tests/helpers/native.py's damage), its length, then every end_log_pos and CRC32 made again:
    data of another size than its fields say (an XID with bytes after its xid, a GTID whose
    flags announce more than it holds, row images cut) that the CRC32 check does not stop."""
    evs = [(p, n) for p, n in fuzz_lane.events(data) if data[p + 4] in LOOP_CODES and n >= HL + CRC]
    if not evs:
        return data
    pos, n = rnd.choice(evs)
    body = bytearray(data[pos + HL:pos + n - CRC])
    for _ in range(rnd.randint(1, 3)):
        how, at = rnd.randrange(3), rnd.randrange(len(body) + 1)
        if how == 0 and body:
            body[min(at, len(body) - 1)] ^= 1 << rnd.randrange(8)
        elif how == 1:
            del body[at:at + rnd.randint(1, 8)]
        else:
            body[at:at] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 4)))
    head = bytearray(data[pos:pos + HL])
    head[9:13] = (HL + len(body) + CRC).to_bytes(4, "little")
    out = bytearray(data[:pos]) + head + body + bytes(CRC) + data[pos + n:]
    return bytes(fuzz_lane.fix(out, fuzz_lane.has_crc(data)))


def _stats(path, backend, opts):
    from binlog_grammar import native
    from binlog_grammar.cli import main

    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(["--backend", backend, "stats", *opts, str(path)])
            except SystemExit as e:
                code = e.code
            except Exception as e:  # noqa: BLE001 - a traceback is an outcome to compare
                code = f"raised {type(e).__name__}: {e}"
    finally:
        native.select(None)
    lines = [ln for ln in out.getvalue().splitlines()
             if not ln.startswith(("backend: ", '  "backend": '))]
    return code, lines, err.getvalue()


def drive(argv) -> int:
    """The driver: python3 fuzz_stats.py --driver WORK SEEDS_JSON EXECS SEED FINDINGS SECONDS"""
    work, names, execs, seed, findings = Path(argv[0]), json.loads(Path(argv[1]).read_text()), \
        int(argv[2]), int(argv[3]), Path(argv[4])
    seconds = float(argv[5])
    from binlog_grammar import native
    from binlog_grammar.output import stats_loop

    mod = native._extension("_stats")[0]
    if mod is None or str(work.parent / "pkg") not in mod.__file__:
        print(f"driver: not the sanitized loop: {mod and mod.__file__}")
        return 3
    counted = [0]
    real = stats_loop.Loop.run

    def run(self, mm, pos, size):
        before = self.st.tx_count
        got = real(self, mm, pos, size)
        counted[0] += self.st.tx_count - before
        return got

    stats_loop.Loop.run = run
    pool = [Path(p).read_bytes() for p in names]
    # two mutants in three from the bench-like seeds: the loop counts their transactions
    bench = [d for p, d in zip(names, pool) if Path(p).name.startswith("bench-")] or pool
    rnd, found, done, t0 = random.Random(seed), 0, 0, time.perf_counter()
    current = work / "current.000001"
    for i in range(execs):
        if seconds and time.perf_counter() - t0 > seconds:
            break
        base = rnd.choice(bench if rnd.random() < 2 / 3 else pool)
        mutate = resize if rnd.random() < 0.5 else lambda d, r: fuzz_lane.mutate(d, r, pool)
        data = pool[i] if i < len(pool) else mutate(base, rnd)
        opts = rnd.choice(OPTIONS)
        current.write_bytes(data)
        c, py = _stats(current, "c", opts), _stats(current, "python", opts)
        done += 1
        if c != py:
            found += 1
            findings.mkdir(parents=True, exist_ok=True)
            name = f"stats-diff-seed{seed}-{i}.bin"
            (findings / name).write_bytes(data)
            print(f"finding {name} {' '.join(opts)}: c {c[0]!r} python {py[0]!r}", flush=True)
    print(f"execs {done} seconds {time.perf_counter() - t0:.1f} loop_transactions {counted[0]} "
          f"findings {found}", flush=True)
    return 0


def campaign(execs: int, seed: int = 1, findings: Path = None, seconds: float = 0.0,
             patch=None) -> dict:
    """Build, seed and run the driver: {execs, loop_transactions, findings, saved, report}. A
    sanitizer report ends the run; the mutant it was on is saved. patch(src) may change the
    copy of the tree before the build (a planted bug: the campaign must find it)."""
    tmp = Path(tempfile.mkdtemp(prefix="fuzz-stats-"))
    findings = findings or Path(tempfile.mkdtemp(prefix="fuzz-stats-findings-"))
    try:
        pkg = fuzz_lane.build(tmp, patch)
        work = tmp / "work"
        work.mkdir()
        seed_list = tmp / "seeds.json"
        names = fuzz_lane.seeds(work)
        names.append(str(work / "bench-40.bin"))
        Path(names[-1]).write_bytes(fuzz_lane.bench_like(fuzz_lane.SAMPLE.read_bytes(), 40))
        seed_list.write_text(json.dumps(names))
        found = tmp / "findings"
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--driver",
                               str(work), str(seed_list), str(execs), str(seed), str(found),
                               str(seconds)], cwd=tmp, env=fuzz_lane.sanitized_env(pkg),
                              capture_output=True, text=True)
        words = (proc.stdout.strip().splitlines() or [""])[-1].split()
        out = {k: int(words[words.index(k) + 1]) if k in words else 0
               for k in ("execs", "loop_transactions", "findings")}
        if proc.returncode != 0 and (work / "current.000001").exists():
            found.mkdir(exist_ok=True)
            shutil.copyfile(work / "current.000001", found / f"stats-crash-seed{seed}.bin")
        saved = []
        for f in sorted(found.glob("*.bin")) if found.is_dir() else []:
            findings.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, findings / f.name)
            saved.append(str(findings / f.name))
        out.update(saved=saved, returncode=proc.returncode,
                   findings=max(len(saved), int(proc.returncode != 0)),
                   report=(fuzz_lane._report(proc.stderr) if proc.returncode else "")
                   + "".join(ln + "\n" for ln in proc.stdout.splitlines()
                             if ln.startswith("finding"))[-2000:])
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--driver"]:
        return drive(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--execs", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=0.0, help="stop after this long (0: never)")
    ap.add_argument("--findings", type=Path, default=None)
    args = ap.parse_args(argv)
    out = campaign(args.execs, args.seed, args.findings, args.seconds)
    print(json.dumps(out, indent=2))
    return 1 if out["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
