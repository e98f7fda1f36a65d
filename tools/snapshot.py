#!/usr/bin/env python3
"""Every user-visible output over every binlog we have, written to one folder, so that two
checkouts can be compared byte for byte (a restructuring must change none of it).

    python3 tools/snapshot.py OUT            # this checkout's outputs into OUT/
    diff -r OUT_BEFORE OUT_AFTER             # empty when nothing a user sees has changed

For each binlog of ../shared/corpus (when present) and of samples/, each reading command runs as
a user runs it (`python3 -m binlog_grammar ...` in a subprocess): dump (text, -vv style), dump
--format jsonl (native, and debezium with Kafka records and transaction metadata), dump --format hexdump,
sql, flashback, stats, verify. Each run gives one file holding
its standard output, its standard error and its exit status. The rendered documentation goes to
OUT/docs/. Damaged files are read with --skip-damaged as well, so that the recovery path is
covered too.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

COMMANDS = {
    "dump": ["dump", "--format", "text", "--no-progress"],
    "dump-jsonl": ["dump", "--format", "text", "--no-progress", "--format", "jsonl"],
    "dump-debezium": ["dump", "--format", "text", "--no-progress", "--format", "jsonl", "--envelope", "debezium",
                      "--skip-damaged", "--debezium-option", "kafka.records=true",
                      "--debezium-option", "provide.transaction.metadata=true"],
    "dump-hexdump": ["dump", "--no-progress", "--format", "hexdump"],
    "dump-skip-damaged": ["dump", "--format", "text", "--no-progress", "--skip-damaged"],
    "sql": ["sql", "--no-progress"],
    "flashback": ["flashback", "--no-progress"],
    "stats": ["stats", "--no-progress"],
    "verify": ["verify"],
}


def binlogs(corpus: Path) -> list:
    """(label, path) of every binlog to read: the shared corpus, then the bundled samples."""
    out = []
    if corpus.is_dir():
        out += [(f"corpus/{p.relative_to(corpus)}", p) for p in sorted(corpus.rglob("*"))
                if p.is_file() and p.suffix != ".md"]
    out += [(f"samples/{p.name}", p) for p in sorted((ROOT / "samples").iterdir())
            if p.is_file() and not p.name.endswith((".md", ".json", ".yaml", ".sql"))]
    return out


def run(args: list, cwd: Path) -> str:
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", *args], cwd=cwd,
                       capture_output=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    out = r.stdout.decode("utf-8", "backslashreplace")
    err = r.stderr.decode("utf-8", "backslashreplace")
    # the file names in messages are the ones given on the command line (relative to cwd)
    return f"{out}\n--- stderr ---\n{err}\n--- exit {r.returncode} ---\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="folder to write the outputs into (created)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus",
                    help="the shared corpus (default: ../shared/corpus beside the checkout; a git "
                         "worktree elsewhere must name it)")
    a = ap.parse_args(argv)
    if not a.corpus.is_dir():  # said, not silently left out: a snapshot without it compares little
        print(f"snapshot: no corpus at {a.corpus}: only the samples are read (--corpus DIR)",
              file=sys.stderr)
    a.out.mkdir(parents=True, exist_ok=True)
    jobs = []
    for label, path in binlogs(a.corpus):
        # run from the file's folder with a relative name, so that no machine folder is printed
        for name, args in COMMANDS.items():
            jobs.append((a.out / f"{label}.{name}.txt", [*args, path.name], path.parent))
    with ThreadPoolExecutor(a.jobs) as pool:
        for target, text in zip((j[0] for j in jobs),
                                pool.map(lambda j: run(j[1], j[2]), jobs)):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    docs = a.out / "docs"
    print(run(["docs", "--output", str(docs.resolve())], ROOT), end="", file=sys.stderr)
    print(f"{len(jobs)} outputs and the docs written to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
