"""Benchmark: `binlog-grammar pipeline` end to end against a plain `format("binlog")` read written
to Parquet, side by side in one run, each a whole process with its own Spark start.

    python3 tools/bench_pipeline.py --binlog FILE [--rounds 2] [--json]

Runners, each round in this order:
- parquet2: a process that starts Spark on local[2], reads FILE with format("binlog") (the map
  form, every row change) and writes it to Parquet (the rows Spark moves, and nothing else);
- pipeline2 / pipeline1: `binlog-grammar pipeline --input FILE --output TMP --master local[N]`
  into a fresh folder (change log, undecoded rows, snapshots, state).
Prints the median (best) seconds of each, the median CPU seconds of its process tree (the
processes it waited for: driver, JVM, Python workers), each pipeline run's `stages:` line (wall
and CPU seconds by stage) as it goes, and the ratios pipeline2 / parquet2 (the goal of issue
29: at most 1.3) and pipeline1 / pipeline2 (the scaling from one core to two). The cores are
shared with whatever else runs: take only ratios of one run. Not a test.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PARQUET = """
import sys
from pyspark.sql import SparkSession
from binlog_grammar.spark import register
s = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
     .config("spark.sql.session.timeZone", "UTC").config("spark.pyspark.python", sys.executable)
     .getOrCreate())
s.sparkContext.setLogLevel("FATAL")
register(s)
s.read.format("binlog").load(sys.argv[1]).write.mode("overwrite").parquet(sys.argv[2])
s.stop()
"""


def _timed(cmd, pythonpath=None) -> tuple:
    """(wall seconds, CPU seconds of the process tree, the summary's stages line or "")."""
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    # run in the tree whose package is timed: `python -m` puts its working folder first on
    # sys.path, before PYTHONPATH (so before2 ran this tree's package until it ran in TREE)
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=pythonpath or ROOT, env=env)
    secs = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"bench_pipeline: {cmd[2:4]} failed: {r.stderr[-2000:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    stages = next((ln for ln in r.stdout.splitlines() if ln.startswith("stages: ")), "")
    return secs, cpu, stages


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binlog", required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--before", metavar="TREE",
                    help="also time pipeline2 with the package of this source tree (another "
                         "commit's checkout, built): runner before2, in the same rounds")
    ap.add_argument("--no-pipeline1", action="store_true",
                    help="leave out pipeline1 (a shorter run on a loaded machine)")
    args = ap.parse_args()
    times = {"parquet2": [], "pipeline2": []}
    if not args.no_pipeline1:
        times["pipeline1"] = []
    if args.before:
        times["before2"] = []
    cpus = {k: [] for k in times}
    stages = {k: [] for k in times}
    for r in range(args.rounds):
        for name in times:
            with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as out:
                if name == "parquet2":
                    cmd = [sys.executable, "-c", PARQUET, args.binlog, out + "/p"]
                else:
                    cmd = [sys.executable, "-m", "binlog_grammar", "pipeline", "--quiet", "--input",
                           args.binlog, "--output", out + "/o", "--master", f"local[{name[-1]}]"]
                secs, cpu, line = _timed(cmd, args.before if name == "before2" else None)
            times[name].append(secs)
            cpus[name].append(cpu)
            stages[name].append(line)
            print(f"round {r + 1} {name}: {secs:.1f} s (CPU {cpu:.1f} s; load average "
                  f"{os.getloadavg()[0]:.1f})" + (f"\n  {line}" if line else ""), file=sys.stderr)
    med = {k: statistics.median(v) for k, v in times.items()}
    report = {"file_bytes": os.path.getsize(args.binlog), "rounds": args.rounds,
              "median": med, "best": {k: min(v) for k, v in times.items()},
              "cpu_median": {k: statistics.median(v) for k, v in cpus.items()},
              "stages": stages,
              "pipeline2_over_parquet2": med["pipeline2"] / med["parquet2"]}
    if "pipeline1" in med:
        report["pipeline1_over_pipeline2"] = med["pipeline1"] / med["pipeline2"]
    if args.before:
        report["before2_over_parquet2"] = med["before2"] / med["parquet2"]
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"binlog: {report['file_bytes'] / 1e6:.1f} MB; {args.rounds} rounds: median (best)")
    for k in times:
        print(f"  {k:<9} {med[k]:6.1f} s  ({report['best'][k]:.1f} s)  CPU "
              f"{report['cpu_median'][k]:.1f} s")
    print(f"  pipeline2 / parquet2 = {report['pipeline2_over_parquet2']:.2f}"
          + (f"   pipeline1 / pipeline2 = {report['pipeline1_over_pipeline2']:.2f}"
             if "pipeline1" in med else "")
          + (f"   before2 / parquet2 = {report['before2_over_parquet2']:.2f}" if args.before
             else ""))


if __name__ == "__main__":
    main()
