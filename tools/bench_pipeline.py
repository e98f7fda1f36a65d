"""Benchmark: `binlog-grammar pipeline` end to end against a plain `format("binlog")` read written
to Parquet, side by side in one run, each a whole process with its own Spark start.

    python3 tools/bench_pipeline.py --binlog FILE [--rounds 2] [--json] [--before TREE]
        [--no-pipeline1] [--no-archive-too] [--conf KEY=VALUE ...] [--event-log DIR] [--keep DIR]

Runners, each round in this order:
- parquet2: a process that starts Spark on local[2], reads FILE with format("binlog") (the map
  form, every row change) and writes it to Parquet (the rows Spark moves, and nothing else);
- pipeline2 / pipeline1: `binlog-grammar pipeline --input FILE --output TMP --master local[N]`
  into a fresh folder (change log, undecoded rows, snapshots, state), its driver JVM started from
  the class archive (spark/jvm_archive.py) that an untimed run over the sample binlogs writes
  before the rounds, in a folder of the benchmark's own: a machine that ran the pipeline before;
- nocds2 (with --no-archive-too): pipeline2 without the class archive (BINLOG_GRAMMAR_JVM_ARCHIVE
  off), as a first run on a machine starts, less the archive's writing.
Prints the median (best) seconds of each, the median CPU seconds of its process tree (driver,
JVM, Python workers, sampled every 0.2 s from /proc: Linux only), each pipeline run's `stages:`
line (wall and CPU seconds by stage) as it goes, and the ratios pipeline2 / parquet2 (the goal of issue
29: at most 1.3) and pipeline1 / pipeline2 (the scaling from one core to two). The cores are
shared with whatever else runs: take only ratios of one run. Not a test.
"""
from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
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


def _timed(cmd, pythonpath=None, submit_args=None, archive="off") -> tuple:
    """(wall seconds, CPU seconds of the process tree, the summary's stages line or "")."""
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, BINLOG_GRAMMAR_JVM_ARCHIVE=archive)
    if submit_args:  # --conf and --event-log: given to every runner's Spark the same way
        env["PYSPARK_SUBMIT_ARGS"] = " ".join(submit_args + ["pyspark-shell"])
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    t = time.perf_counter()
    # run in the tree whose package is timed: `python -m` puts its working folder first on
    # sys.path, before PYTHONPATH (so before2 ran this tree's package until it ran in TREE)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, cwd=pythonpath or ROOT,
                             env=env)
        cpu = {}
        while p.poll() is None:
            cpu.update(_tree_ticks(p.pid))
            time.sleep(0.2)
        secs = time.perf_counter() - t
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if p.returncode != 0:
        sys.exit(f"bench_pipeline: {cmd[2:4]} failed: {stderr[-2000:]}")
    stages = next((ln for ln in stdout.splitlines() if ln.startswith("stages: ")), "")
    return secs, sum(cpu.values()) / os.sysconf("SC_CLK_TCK"), stages


def _tree_ticks(root: int) -> dict:
    """pid -> user and system clock ticks of `root` and every process below it, now (the JVM
    is not waited for by the driver, so the children's rusage would miss it; a process's last
    0.2 s are missed)."""
    parent, ticks = {}, {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as fh:
                    f = fh.read().rpartition(b")")[2].split()
            except OSError:
                continue
            parent[int(name)] = int(f[1])
            ticks[int(name)] = int(f[11]) + int(f[12])
    out = {}
    for pid, n in ticks.items():
        p = pid
        while p in parent and p not in (root, 0, 1):
            p = parent[p]
        if p == root:
            out[pid] = n
    return out


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
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a Spark setting for every runner (spark-submit's --conf)")
    ap.add_argument("--event-log", metavar="DIR",
                    help="write each runner's Spark event log under DIR/RUNNER-rROUND "
                         "(uncompressed; read them with tools/spark_eventlog.py)")
    ap.add_argument("--keep", metavar="DIR",
                    help="keep each runner's output under DIR/RUNNER-rROUND (to compare them)")
    ap.add_argument("--no-archive-too", action="store_true",
                    help="also time pipeline2 without the JVM class archive: runner nocds2")
    args = ap.parse_args()
    times = {"parquet2": [], "pipeline2": []}
    if not args.no_pipeline1:
        times["pipeline1"] = []
    if args.before:
        times["before2"] = []
    if args.no_archive_too:
        times["nocds2"] = []
    # the pipeline's JVM class archive, written once before the rounds (untimed)
    archive = tempfile.mkdtemp(prefix="bench-jvm-archive-")
    atexit.register(shutil.rmtree, archive, True)  # about 190 MB: gone however the run ends
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as out:
        _timed([sys.executable, "-m", "binlog_grammar", "pipeline", "--quiet", "--input",
                *map(str, sorted((ROOT / "samples").glob("mariadb-*"))), "--output", out + "/o"],
               archive=archive)
    if not any(f.endswith(".jsa") for f in os.listdir(archive)):
        print("note: no JVM class archive was written", file=sys.stderr)
    cpus = {k: [] for k in times}
    stages = {k: [] for k in times}
    for r in range(args.rounds):
        for name in times:
            submit = [f"--conf {c}" for c in args.conf]
            if args.event_log:
                log = Path(args.event_log, f"{name}-r{r + 1}").resolve()
                log.mkdir(parents=True, exist_ok=True)
                submit += ["--conf spark.eventLog.enabled=true",
                           f"--conf spark.eventLog.dir=file://{log}",
                           "--conf spark.eventLog.compress=false"]
            with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as out:
                if args.keep:
                    out = str(Path(args.keep, f"{name}-r{r + 1}").resolve())
                    Path(out).mkdir(parents=True, exist_ok=True)
                if name == "parquet2":
                    cmd = [sys.executable, "-c", PARQUET, args.binlog, out + "/p"]
                else:
                    cmd = [sys.executable, "-m", "binlog_grammar", "pipeline", "--quiet", "--input",
                           args.binlog, "--output", out + "/o", "--master", f"local[{name[-1]}]"]
                secs, cpu, line = _timed(cmd, args.before if name == "before2" else None, submit,
                                         archive if name.startswith("pipeline") else "off")
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
    if args.no_archive_too:
        report["nocds2_over_parquet2"] = med["nocds2"] / med["parquet2"]
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
             else "")
          + (f"   nocds2 / parquet2 = {report['nocds2_over_parquet2']:.2f}"
             if args.no_archive_too else ""))


if __name__ == "__main__":
    main()
