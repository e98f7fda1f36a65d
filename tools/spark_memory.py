"""Benchmark: the peak memory of the Spark `binlog` data source's executors as the file grows
(issue 29: on a 1 GB binlog it stays flat).

    python3 tools/spark_memory.py --binlog SMALL --binlog LARGE [--master local[2]]
                                  [--split-mb 4] [--image-format map|json] [--json]

For each binlog, in a fresh process: Spark starts on --master, `spark.read.format("binlog")`
reads every row change of the file and the `noop` sink materialises every column (as
tools/bench_spark.py's spark runs do). Meanwhile this process samples, every 50 ms, the memory
of that process's descendants from /proc: the peak resident set (VmHWM, what the kernel says the
process held at its most) of each Python worker (the executors' side of the data source: the
split readers and their Arrow batches) and of the JVM (driver and executor in one on a local
master; its heap is capped by spark.driver.memory, 1 GB by default, and it keeps what it took).
Prints per file: its size, the row changes read, the seconds, the largest Python worker's peak
and the sum over workers alive at once, and the JVM's peak. "Flat" means the workers' peak does
not follow the file's size: each worker holds one split and one batch at a time.

Linux only (/proc). Not a test; memory is not moved by the load the way time is, so one run
says it.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import sys, time
from pyspark.sql import SparkSession
s = (SparkSession.builder.master(sys.argv[2]).appName("spark_memory")
     .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
     .config("spark.pyspark.python", sys.executable).getOrCreate())
s.sparkContext.setLogLevel("FATAL")
from binlog_grammar.spark import register
register(s)
df = (s.read.format("binlog").option("split_bytes", sys.argv[3])
      .option("image_format", sys.argv[4]).load(sys.argv[1]))
t = time.perf_counter()
df.write.format("noop").mode("overwrite").save()
seconds = time.perf_counter() - t
rows = df.count()
print("RESULT", rows, seconds, flush=True)
s.stop()
"""


def _status(pid: int) -> tuple:
    """(VmHWM kB, VmRSS kB, command line) of a process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            fields = dict(line.split(":", 1) for line in fh if ":" in line)
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    kb = lambda k: int(fields.get(k, "0 kB").split()[0])  # noqa: E731
    return kb("VmHWM"), kb("VmRSS"), cmd


def _descendants(root: int) -> list:
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                text = fh.read()
        except OSError:
            continue
        ppid = int(text[text.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], list(kids.get(root, []))
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += kids.get(pid, [])
    return out


class Sampler(threading.Thread):
    """Polls the descendants of `root` until stopped: each Python worker's and the JVM's peak."""

    def __init__(self, root: int):
        super().__init__(daemon=True)
        self.root = root
        self.done = threading.Event()
        self.worker_peak = {}  # pid -> VmHWM kB of a pyspark worker
        self.jvm_peak = 0
        self.together = 0  # the largest sum of the workers' current RSS at one sample

    def run(self):
        while not self.done.is_set():
            now = 0
            for pid in _descendants(self.root):
                st = _status(pid)
                if st is None:
                    continue
                hwm, rss, cmd = st
                if "java" in cmd.split(" ", 1)[0]:
                    self.jvm_peak = max(self.jvm_peak, hwm)
                elif "pyspark" in cmd and "worker" in cmd:
                    self.worker_peak[pid] = max(self.worker_peak.get(pid, 0), hwm)
                    now += rss
            self.together = max(self.together, now)
            time.sleep(0.05)


def measure(path: str, master: str, split_bytes: int, image_format: str) -> dict:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    p = subprocess.Popen([sys.executable, "-c", CHILD, path, master, str(split_bytes), image_format],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    sampler = Sampler(p.pid)
    sampler.start()
    out, err = p.communicate()
    sampler.done.set()
    sampler.join()
    if p.returncode != 0:
        sys.exit(f"spark_memory: the read of {path} failed:\n{err[-3000:]}")
    _, rows, seconds = next(ln for ln in out.splitlines() if ln.startswith("RESULT")).split()
    peaks = sorted(sampler.worker_peak.values())
    return {"bytes": os.path.getsize(path), "rows": int(rows), "seconds": float(seconds),
            "workers": len(peaks), "worker_peak_mb": (peaks[-1] if peaks else 0) / 1024,
            "workers_together_mb": sampler.together / 1024, "jvm_peak_mb": sampler.jvm_peak / 1024}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binlog", action="append", required=True, help="a binlog (repeatable)")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--split-mb", type=float, default=4.0)
    ap.add_argument("--image-format", choices=["map", "json"], default="map")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    results = [measure(b, args.master, int(args.split_mb * (1 << 20)), args.image_format)
               for b in args.binlog]
    if args.json:
        print(json.dumps(results, indent=1))
        return
    print(f"format(\"binlog\") on {args.master}, split_bytes {args.split_mb:g} MiB, "
          f"image_format {args.image_format}:")
    print("| binlog MB | row changes | seconds | Python workers | largest worker's peak MB "
          "| workers at once, MB | JVM peak MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['bytes'] / 1e6:,.1f} | {r['rows']:,} | {r['seconds']:.1f} | {r['workers']} "
              f"| {r['worker_peak_mb']:.0f} | {r['workers_together_mb']:.0f} | {r['jvm_peak_mb']:.0f} |")


if __name__ == "__main__":
    main()
