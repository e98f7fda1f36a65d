"""Benchmark: the plain reader on one core against the Spark `binlog` data source on 1 and 2 cores.

    python tools/bench_spark.py [--binlog FILE] [--keep DIR] [--size-mb 100] [--rounds 5]
                                [--split-mb 4] [--image-format map|json] [--warmup 0.25]
                                [--conf KEY=VALUE ...] [--pipeline] [--json] [--workers]

1. The binlog: unless --binlog names one, a throwaway MariaDB server (binlog_grammar.testing.mariadb,
   binlog_row_metadata=FULL, binlog_row_image=FULL, max_binlog_size=1G) runs a deterministic
   sysbench-like workload (seeded random values) on `sbtest1 (id INT AUTO_INCREMENT PRIMARY KEY,
   k INT, c CHAR(120), pad CHAR(60), KEY (k))`: multi-row INSERTs (500 rows, 5 per transaction),
   range UPDATEs of the indexed column (4 x 100 rows per transaction), point UPDATEs of `c`, range
   and point DELETEs, in rounds of 50,000 new rows until the one binlog file is at least
   --size-mb MB. The file is copied out (to --keep DIR when given, where a later run can reuse it
   with --binlog).
2. The timings, alternating and repeated --rounds times, each in a fresh Python process:
   - plain: `stream.open_stream([file]).events()` and every RowChange of every rows event,
     decoded in one process (one core);
   - spark1 / spark2: `spark.read.format("binlog").option("split_bytes", ...)` of the file on
     `local[1]` / `local[2]`, every column materialised by the `noop` sink
     (`df.write.format("noop")`); the images in the default map form, or with --image-format
     json as JSON object strings (the data source's option image_format);
   - spark1pin: spark1 with the whole Spark application (JVM, Python workers) pinned to one CPU
     (sched_setaffinity), so that "1 core" means one CPU for everything: with local[1] alone the
     JVM's share of the work (reading the workers' Arrow batches into rows) runs on the other CPU.
   Each Spark process starts its session (with the --conf settings, e.g.
   spark.python.unix.domain.socket.enabled=true), reads the bundled samples and then the first
   --warmup fraction of the file (2: the whole file twice) (untimed: Python workers started,
   JVM code compiled), then times one job (wall time; the start-up is reported apart). The JVM's
   JIT compilers go on working in the timed job all the same, on Spark's per-task code above
   all (task deserialisation, scheduling), the less the longer the warm-up: a fresh JVM is
   slower than one a long job has warmed. Rows per second = row changes / seconds (the count is
   checked against the plain reader's once). The CPU time of the job is reported too, split into
   the JVM's (its threads: tasks, JIT compilers, GC, scheduler) and the Python workers' (read
   from /proc, Linux only): with local[1] the JVM's share runs beside the one Python worker, on
   another CPU, while local[2] needs at least (JVM + Python) / 2 seconds of the 2 CPUs, which
   bounds spark2 / spark1. Ratios: spark2/spark1 (the goal: >= 1.7),
   spark2/spark1pin (core for core), spark1/plain (what Spark costs on one task slot), of the
   medians and of the best times (the best is what an idle machine gives; others' load only
   ever adds time).
3. With --workers, instead of the above: the Python workers' share alone, without Spark or a
   JVM: every split read by the data source's reader in one process, as the workers read them,
   CPU seconds with the compiled backend (its Arrow batches: spark/arrow_rows.py) and with the
   Python one (--rounds times).
4. With --pipeline, once more: `binlog-grammar pipeline --input FILE --output TMP --master
   local[2]` end to end (change log, snapshot, state; its own Spark start included).

Prints a table (or JSON with --json). Not a test: run it by hand, on an otherwise idle machine.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TABLE = """CREATE TABLE sbtest1 (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0,
  c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k)) ENGINE=InnoDB"""


def _digits(rng, groups):
    return "-".join("".join(rng.choice("0123456789") for _ in range(11)) for _ in range(groups))


def workload(rng: random.Random, start_id: int, rows: int):
    """SQL for one round: inserts of `rows` rows, then updates and deletes among them."""
    out = []
    ids = list(range(start_id, start_id + rows))
    for t in range(0, rows, 2500):  # a transaction: 5 INSERTs of 500 rows
        out.append("BEGIN;")
        for b in range(t, min(t + 2500, rows), 500):
            vals = ",".join(f"({ids[i]},{rng.randrange(1, 1 << 20)},'{_digits(rng, 10)}',"
                            f"'{_digits(rng, 5)}')" for i in range(b, min(b + 500, rows)))
            out.append(f"INSERT INTO sbtest1 (id,k,c,pad) VALUES {vals};")
        out.append("COMMIT;")
    lo, hi = start_id, start_id + rows - 1
    for _ in range(rows // 400):  # range updates of 100 rows (index column), 4 per transaction
        out.append("BEGIN;")
        for _ in range(4):
            a = rng.randrange(lo, hi - 100)
            out.append(f"UPDATE sbtest1 SET k=k+1 WHERE id BETWEEN {a} AND {a + 99};")
        out.append("COMMIT;")
    for _ in range(rows // 50):  # point updates of the non-index column
        out.append(f"UPDATE sbtest1 SET c='{_digits(rng, 10)}' WHERE id={rng.randrange(lo, hi)};")
    for _ in range(rows // 200):  # range deletes of 10 rows
        a = rng.randrange(lo, hi - 10)
        out.append(f"DELETE FROM sbtest1 WHERE id BETWEEN {a} AND {a + 9};")
    for _ in range(rows // 100):  # point deletes
        out.append(f"DELETE FROM sbtest1 WHERE id={rng.randrange(lo, hi)};")
    return "\n".join(out)


def make_binlog(size_mb: int, dest_dir: Path, seed: int = 20240601) -> Path:
    from binlog_grammar.testing import mariadb

    if not mariadb.available():
        sys.exit("bench_spark: mariadbd is not installed (apt-get install mariadb-server), "
                 "or give --binlog FILE")
    opts = ["--binlog-row-metadata=FULL", "--binlog-row-image=FULL", "--max-binlog-size=1073741824",
            "--sync-binlog=0", "--innodb-flush-log-at-trx-commit=0", "--binlog-checksum=CRC32"]
    rng = random.Random(seed)
    with mariadb.MariaDB(opts) as db:
        db.sql(f"CREATE DATABASE sbtest; USE sbtest; {TABLE};")
        start = 1
        while True:
            db.sql(workload(rng, start, 50_000), database="sbtest")
            start += 50_000
            current = db.binlogs()[-1]
            if current.stat().st_size >= size_mb * 1_000_000:
                break
        db.sql("FLUSH BINARY LOGS;")
        files = db.binlogs()
        big = max(files[:-1], key=lambda p: p.stat().st_size)
        dest_dir.mkdir(parents=True, exist_ok=True)
        dest = dest_dir / "bench-sbtest.000001"
        shutil.copyfile(big, dest)
    return dest


# ---------------------------------------------------------------------------------------------
# the measurements (each in its own process)

def measure_plain(path: str) -> dict:
    from binlog_grammar.binlog.stream import open_stream

    t = time.perf_counter()
    rows = 0
    for se in open_stream([path]).events():
        rows += len(se.changes)
    return {"rows": rows, "seconds": time.perf_counter() - t}


def measure_workers(path: str, split_bytes: int, image_format: str) -> dict:
    """The Python workers' share without Spark: every split of the file read by the data
    source's reader in this process, as the workers read them (CPU seconds, each backend)."""
    from binlog_grammar import native
    from binlog_grammar.spark.datasource import BinlogDataSource

    out = {}
    for backend in ("auto", "python"):
        native.select(backend)
        ds = BinlogDataSource({"path": path, "split_bytes": str(split_bytes),
                               "image_format": image_format})
        reader = ds.reader(ds.schema())
        parts = reader.partitions()
        t = time.process_time()
        rows = sum(b.num_rows for p in parts for b in reader.read(p))
        out[native.backend()] = {"rows": rows, "cpu": time.process_time() - t}
    native.select(None)
    return out


def _cpu_seconds(root: int) -> tuple:
    """(CPU seconds of process `root`, of its descendants) from /proc; (0, 0) elsewhere."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    procs = {}
    try:
        pids = [int(d) for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return 0.0, 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                text = fh.read()
        except OSError:
            continue
        f = text[text.rindex(")") + 2:].split()  # state, ppid, ... utime(11) stime(12) cutime cstime
        procs[pid] = (int(f[1]), int(f[11]) + int(f[12]), int(f[13]) + int(f[14]))
    kids = {}
    for pid, (ppid, _, _) in procs.items():
        kids.setdefault(ppid, []).append(pid)
    own = procs[root][1] / tick if root in procs else 0.0
    rest = procs[root][2] / tick if root in procs else 0.0  # children it reaped
    todo = list(kids.get(root, []))
    while todo:
        pid = todo.pop()
        rest += (procs[pid][1] + procs[pid][2]) / tick
        todo += kids.get(pid, [])
    return own, rest


def measure_spark(path: str, master: str, split_bytes: int, count: bool, cpus: int = 0,
                  image_format: str = "map", warmup: float = 0.25, conf: tuple = ()) -> dict:
    if cpus:  # the JVM and the Python workers inherit it
        os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[:cpus]))
    t0 = time.perf_counter()
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master(master).appName("bench_spark")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.pyspark.python", sys.executable)
               .config("spark.sql.shuffle.partitions", "2"))
    for kv in conf:
        key, _, value = kv.partition("=")
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("FATAL")
    from binlog_grammar.spark import register
    from binlog_grammar.spark.split import plan

    register(spark)

    def read():
        return (spark.read.format("binlog").option("split_bytes", str(split_bytes))
                .option("image_format", image_format))

    samples = sorted(str(p) for p in (ROOT / "samples").glob("mariadb-*"))
    spark.read.format("binlog").load(samples).write.format("noop").mode("overwrite").save()
    while warmup > 0:  # whole passes, then the fraction left
        part = min(warmup, 1.0)
        r = read() if part >= 1 else \
            read().option("stop_position", str(int(os.path.getsize(path) * part) + 1))
        r.load(path).write.format("noop").mode("overwrite").save()
        warmup -= part
    startup = time.perf_counter() - t0
    jvm = spark.sparkContext._gateway.proc.pid  # the JVM; the Python workers are its children
    df = read().load(path)
    cpu0 = _cpu_seconds(jvm)
    t = time.perf_counter()
    df.write.format("noop").mode("overwrite").save()
    seconds = time.perf_counter() - t
    cpu1 = _cpu_seconds(jvm)
    rows = df.count() if count else None  # once, to check the row count (not timed)
    spark.stop()
    return {"rows": rows, "seconds": seconds, "startup": startup,
            "partitions": len(plan([path], split_bytes)[0]),
            "jvm_cpu": cpu1[0] - cpu0[0], "python_cpu": cpu1[1] - cpu0[1]}


def _child(kind: str, path: str, master: str, split_bytes: int, count: bool, cpus: int,
           args) -> dict:
    cmd = [sys.executable, __file__, "--child", kind, "--binlog", path, "--master", master,
           "--split-mb", str(split_bytes / (1 << 20)), "--cpus", str(cpus),
           "--image-format", args.image_format, "--warmup", str(args.warmup)]
    cmd += [f"--conf={kv}" for kv in args.conf]
    cmd += ["--count"] if count else []
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bench_spark: {kind} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


RUNS = (("plain", "plain", "", 1), ("spark1", "spark", "local[1]", 0),
        ("spark1pin", "spark", "local[1]", 1), ("spark2", "spark", "local[2]", 0))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binlog", help="use this binlog instead of writing one")
    ap.add_argument("--keep", help="folder to keep the written binlog in")
    ap.add_argument("--size-mb", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--split-mb", type=float, default=4.0, help="split_bytes of the Spark reads")
    ap.add_argument("--image-format", choices=["map", "json"], default="map",
                    help="the image_format option of the Spark reads")
    ap.add_argument("--warmup", type=float, default=0.25,
                    help="how much of the file each Spark process reads before the timed job "
                         "(a fraction; 2: twice)")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a Spark setting of the Spark runs (repeatable)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--pipeline", action="store_true", help="also time the pipeline end to end")
    ap.add_argument("--workers", action="store_true",
                    help="only the Python workers' share, without Spark: every split read by the "
                         "data source's reader in one process, CPU seconds on each backend")
    ap.add_argument("--child", choices=["plain", "spark"], help=argparse.SUPPRESS)
    ap.add_argument("--master", default="local[1]", help=argparse.SUPPRESS)
    ap.add_argument("--count", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--cpus", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    split_bytes = int(args.split_mb * (1 << 20))
    if args.workers:
        if not args.binlog:
            sys.exit("bench_spark: --workers needs --binlog FILE")
        for _ in range(args.rounds):
            res = measure_workers(args.binlog, split_bytes, args.image_format)
            print("workers: " + ", ".join(f"backend {k}: {v['cpu']:.2f} s CPU ({v['rows']:,} rows)"
                                          for k, v in res.items()))
        return
    if args.child:
        if args.child == "plain":
            if args.cpus:
                os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[:args.cpus]))
            res = measure_plain(args.binlog)
        else:
            res = measure_spark(args.binlog, args.master, split_bytes, args.count, args.cpus,
                                args.image_format, args.warmup, tuple(args.conf))
        print(json.dumps(res))
        return
    tmp = None
    if args.binlog:
        path = Path(args.binlog)
    else:
        t = time.perf_counter()
        where = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-spark-"))
        tmp = None if args.keep else where
        path = make_binlog(args.size_mb, where)
        print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB) in {time.perf_counter() - t:.0f} s",
              file=sys.stderr)
    try:
        results = {name: [] for name, *_ in RUNS}
        for r in range(args.rounds):
            for name, kind, master, cpus in RUNS:
                res = _child(kind, str(path), master or "local[1]", split_bytes, r == 0, cpus,
                             args)
                results[name].append(res)
                print(f"round {r + 1} {name}: {res['seconds']:.2f} s"
                      + (f", {res['partitions']} partitions, CPU: JVM {res['jvm_cpu']:.2f} s, "
                         f"Python {res['python_cpu']:.2f} s" if res.get("partitions") else ""),
                      file=sys.stderr)
        report = _report(path, results, split_bytes)
        report.update(image_format=args.image_format, warmup=args.warmup, conf=args.conf)
        if args.pipeline:
            with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as out:
                t = time.perf_counter()
                r = subprocess.run([sys.executable, "-m", "binlog_grammar", "pipeline", "--input",
                                    str(path), "--output", out + "/o", "--master", "local[2]"],
                                   capture_output=True, text=True, cwd=ROOT)
                secs = time.perf_counter() - t
            if r.returncode != 0:
                sys.exit(f"bench_spark: the pipeline failed: {r.stderr[-2000:]}")
            report["pipeline_local2"] = {"seconds": secs, "rows_per_s": report["rows"] / secs,
                                         "summary": r.stdout}
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"binlog: {report['file']} ({report['bytes'] / 1e6:.1f} MB, {report['rows']:,} row changes); "
          f"split_bytes {split_bytes:,}; image_format {args.image_format}; warm-up "
          f"{args.warmup:g} of the file; {' '.join(args.conf) or 'no --conf'}; {args.rounds} "
          "rounds: median (best); CPU seconds of the job: JVM + Python workers (medians)")
    for name, *_ in RUNS:
        m = report[name]
        cpu = (f"   CPU {m['jvm_cpu']:.2f} + {m['python_cpu']:.2f} s" if "jvm_cpu" in m else "")
        print(f"  {name:<9} {m['seconds']:8.2f} s  {m['rows_per_s']:>10,.0f} rows/s   "
              f"({m['best_seconds']:.2f} s, {m['best_rows_per_s']:,.0f} rows/s){cpu}")
    if "pipeline_local2" in report:
        m = report["pipeline_local2"]
        print(f"  pipeline local[2] end to end (Spark start included): {m['seconds']:.1f} s  "
              f"{m['rows_per_s']:,.0f} rows/s")
    print(f"  spark2 / spark1 = {report['spark2_over_spark1']:.2f}   "
          f"spark2 / spark1pin = {report['spark2_over_spark1pin']:.2f}   "
          f"spark1 / plain = {report['spark1_over_plain']:.2f}   "
          f"spark2 / plain = {report['spark2_over_plain']:.2f}")
    print(f"  best of each: spark2 / spark1 = {report['best_spark2_over_spark1']:.2f}   "
          f"spark2 / spark1pin = {report['best_spark2_over_spark1pin']:.2f}")
    if report.get("spark2_jvm_share") is not None:
        print(f"  the JVM's share of the job's CPU: spark1 {report['spark1_jvm_share']:.0%}, "
              f"spark2 {report['spark2_jvm_share']:.0%}; spark2 needs (JVM + Python) / 2 = "
              f"{report['spark2_cpu_seconds'] / 2:.2f} s of 2 CPUs, so spark2 / spark1 <= "
              f"{report['spark2_over_spark1_bound']:.2f}")


def _report(path, results, split_bytes) -> dict:
    rows = {r["rows"] for v in results.values() for r in v if r["rows"] is not None}
    if len(rows) != 1:
        sys.exit(f"bench_spark: the readers disagree on the row count: {sorted(rows)}")
    n = rows.pop()
    out = {"file": str(path), "bytes": path.stat().st_size, "rows": n, "split_bytes": split_bytes}
    for name, runs in results.items():
        secs = statistics.median(r["seconds"] for r in runs)
        best = min(r["seconds"] for r in runs)
        out[name] = {"seconds": secs, "rows_per_s": n / secs, "best_seconds": best,
                     "best_rows_per_s": n / best, "all_seconds": [r["seconds"] for r in runs]}
        if "startup" in runs[0]:
            out[name]["startup_seconds"] = statistics.median(r["startup"] for r in runs)
            out[name]["partitions"] = runs[0]["partitions"]
            out[name]["jvm_cpu"] = statistics.median(r["jvm_cpu"] for r in runs)
            out[name]["python_cpu"] = statistics.median(r["python_cpu"] for r in runs)
    for k in ("rows_per_s", "best_rows_per_s"):
        tag = "" if k == "rows_per_s" else "best_"
        out[f"{tag}spark2_over_spark1"] = out["spark2"][k] / out["spark1"][k]
        out[f"{tag}spark2_over_spark1pin"] = out["spark2"][k] / out["spark1pin"][k]
    out["spark2_over_spark1"] = out["spark2"]["rows_per_s"] / out["spark1"]["rows_per_s"]
    out["spark2_over_spark1pin"] = out["spark2"]["rows_per_s"] / out["spark1pin"]["rows_per_s"]
    out["spark1_over_plain"] = out["spark1"]["rows_per_s"] / out["plain"]["rows_per_s"]
    out["spark2_over_plain"] = out["spark2"]["rows_per_s"] / out["plain"]["rows_per_s"]
    for name in ("spark1", "spark2"):
        j, p = out[name]["jvm_cpu"], out[name]["python_cpu"]
        out[f"{name}_jvm_share"] = j / (j + p) if j + p > 0 else None
    # local[1] runs the JVM's share beside its one Python worker, on the other CPU; local[2]
    # puts both on the 2 CPUs, so it takes at least (jvm + python) / 2
    cpu2 = out["spark2"]["jvm_cpu"] + out["spark2"]["python_cpu"]
    out["spark2_cpu_seconds"] = cpu2
    out["spark2_over_spark1_bound"] = 2 * out["spark1"]["seconds"] / cpu2 if cpu2 > 0 else None
    return out


if __name__ == "__main__":
    main()
