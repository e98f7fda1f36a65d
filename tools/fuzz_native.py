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
"""
from __future__ import annotations

import argparse
import os
import shutil
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
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g", "-O1",
            "-fno-omit-frame-pointer"]


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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--execs", type=int, default=1_000_000, help="executions (default 1,000,000)")
    ap.add_argument("--seed", type=int, default=1, help="the mutations' random seed")
    ap.add_argument("--findings", type=Path, default=FINDINGS,
                    help="where findings are written (default tests/native/regressions/)")
    args = ap.parse_args(argv)
    r = campaign(args.execs, args.seed, args.findings)
    print(f"executions {r['execs']:,} in {r['seconds']} s ({r['execs'] / max(r['seconds'], 1e-9):,.0f}/s), "
          f"seeds {r['seeds']}, queue {r['queue']}, edges {r['edges']}, findings {r['findings']}")
    for f in r["saved"]:
        print(f"  regression file: {f}")
    if r["stderr_tail"]:
        print(r["stderr_tail"], file=sys.stderr)
    return 1 if r["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
