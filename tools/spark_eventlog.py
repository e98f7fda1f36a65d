"""Where a Spark application's wall time went, read from its event log: per job (in the order
the driver ran them), its wall time, the driver's time before it (since the application started
or the previous job ended: planning, Python on the driver, the data source's planning worker),
its stages' tasks and their summed metrics (deserialization, run, executor CPU and GC time;
shuffle read and write bytes and records; input and output records), and the application's
start and end.

    python3 tools/spark_eventlog.py LOG [LOG ...] [--json] [--stages] [--timeline]

LOG is an event log file (spark.eventLog.enabled=true, spark.eventLog.dir=file:DIR,
spark.eventLog.compress=false: tools/bench_pipeline.py sets these with --event-log DIR, and
tools/bench_spark.py takes them as three --conf KEY=VALUE) or a folder holding one (Spark 4
writes eventlog_v2_APP/events_1_APP). A zstd log needs the zstandard module. Times are milliseconds of the driver's clock; "tasks" sums each task's
own figures, so on local[2] it may exceed the job's wall time twice over. Not a test.
"""
from __future__ import annotations

import argparse
import json
import os
import sys


def _open_log(path: str):
    if os.path.isdir(path):
        found = []
        for root, _, names in os.walk(path):
            found += [os.path.join(root, n) for n in names if n.startswith("events_")]
        if len(found) != 1:
            sys.exit(f"spark_eventlog: {path}: {len(found)} event logs, want one")
        path = found[0]
    if path.endswith(".zstd"):
        import io

        import zstandard

        raw = zstandard.ZstdDecompressor().stream_reader(open(path, "rb"))
        return io.TextIOWrapper(raw, encoding="utf-8")
    return open(path, encoding="utf-8")


METRICS = {  # our name -> internal accumulator name (summed over a job's tasks)
    "deser_ms": "internal.metrics.executorDeserializeTime",
    "run_ms": "internal.metrics.executorRunTime",
    "cpu_ns": "internal.metrics.executorCpuTime",
    "deser_cpu_ns": "internal.metrics.executorDeserializeCpuTime",
    "gc_ms": "internal.metrics.jvmGCTime",
    "result_bytes": "internal.metrics.resultSize",
    "shuffle_read_bytes": None,  # remote + local
    "shuffle_read_records": "internal.metrics.shuffle.read.recordsRead",
    "shuffle_write_bytes": "internal.metrics.shuffle.write.bytesWritten",
    "shuffle_write_records": "internal.metrics.shuffle.write.recordsWritten",
    "shuffle_write_ms": None,  # nanoseconds in the log
    "input_records": "internal.metrics.input.recordsRead",
    "output_records": "internal.metrics.output.recordsWritten",
    "python_returned_bytes": "data returned from Python workers",
}


def _stage(sid: int, stage_job: dict) -> dict:
    return {"id": sid, "job": stage_job.get(sid), "name": "", "tasks": 0, "submit": None,
            "end": None, "first_launch": None, "last_finish": None, **{k: 0 for k in METRICS}}


def read_log(path: str) -> dict:
    app = {"start": None, "end": None, "submit": None, "jobs": {}, "stages": {}, "sql": {}}
    stage_job = {}
    with _open_log(path) as fh:
        for line in fh:
            e = json.loads(line)
            kind = e["Event"]
            if kind == "SparkListenerApplicationStart":
                app["start"] = e["Timestamp"]
            elif kind == "SparkListenerEnvironmentUpdate":
                t = e.get("Spark Properties", {}).get("spark.app.submitTime")
                app["submit"] = int(t) if t else None
            elif kind == "SparkListenerApplicationEnd":
                app["end"] = e["Timestamp"]
            elif kind.endswith("SparkListenerSQLExecutionStart"):
                app["sql"][e["executionId"]] = {"description": e.get("description", ""),
                                                "start": e.get("time")}
            elif kind == "SparkListenerJobStart":
                props = e.get("Properties") or {}
                sql = props.get("spark.sql.execution.id")
                names = [s["Stage Name"] for s in e["Stage Infos"]]
                app["jobs"][e["Job ID"]] = {
                    "id": e["Job ID"], "submit": e["Submission Time"], "end": None,
                    "sql": int(sql) if sql not in (None, "") else None,
                    "name": props.get("spark.job.description") or (names[-1] if names else ""),
                    "stages": [s["Stage ID"] for s in e["Stage Infos"]],
                    "tasks": 0, "skipped_stages": 0, "task_ms": 0, "first_launch": None,
                    "last_finish": None,
                    **{k: 0 for k in METRICS}}
                for s in e["Stage Infos"]:
                    stage_job[s["Stage ID"]] = e["Job ID"]
            elif kind == "SparkListenerJobEnd":
                app["jobs"][e["Job ID"]]["end"] = e["Completion Time"]
            elif kind == "SparkListenerStageCompleted":
                info = e["Stage Info"]
                stage = app["stages"].setdefault(info["Stage ID"], _stage(info["Stage ID"],
                                                                          stage_job))
                stage.update(name=info["Stage Name"], tasks=info["Number of Tasks"],
                             submit=info.get("Submission Time"), end=info.get("Completion Time"))
            elif kind == "SparkListenerTaskEnd":
                job = app["jobs"].get(stage_job.get(e["Stage ID"]))
                stage = app["stages"].setdefault(e["Stage ID"], _stage(e["Stage ID"], stage_job))
                info = e["Task Info"]
                launch, finish = info.get("Launch Time"), info.get("Finish Time")
                if launch and (stage["first_launch"] is None or launch < stage["first_launch"]):
                    stage["first_launch"] = launch
                if finish and (stage["last_finish"] is None or finish > stage["last_finish"]):
                    stage["last_finish"] = finish
                acc = {a["Name"]: a.get("Update") for a in info.get("Accumulables", [])}
                tm = e.get("Task Metrics") or {}
                values = {}
                for k, name in METRICS.items():
                    if name is not None:
                        values[k] = int(acc.get(name) or 0)
                sr = tm.get("Shuffle Read Metrics") or {}
                values["shuffle_read_bytes"] = (sr.get("Remote Bytes Read", 0)
                                                + sr.get("Local Bytes Read", 0))
                values["shuffle_write_ms"] = (tm.get("Shuffle Write Metrics") or {}).get(
                    "Shuffle Write Time", 0) / 1e6
                for target in (job, stage):
                    if target is None:
                        continue
                    for k, v in values.items():
                        target[k] += v
                if job is not None:
                    job["tasks"] += 1
                    if launch and finish:
                        job["task_ms"] += finish - launch
                        job["first_launch"] = min(job["first_launch"] or launch, launch)
                        job["last_finish"] = max(job["last_finish"] or finish, finish)
    return app


def summarize(app: dict) -> dict:
    jobs = sorted(app["jobs"].values(), key=lambda j: (j["submit"], j["id"]))
    prev_end = app["start"]
    busy_until = app["start"]
    for j in jobs:
        j["wall_ms"] = (j["end"] or j["submit"]) - j["submit"]
        # the driver's time before this job: since the previous job (of any) ended
        j["before_ms"] = max(0, j["submit"] - busy_until) if busy_until else None
        busy_until = max(busy_until or 0, j["end"] or j["submit"])
        if j["sql"] is not None and j["sql"] in app["sql"]:
            j["name"] = app["sql"][j["sql"]]["description"] or j["name"]
        prev_end = j["end"]
    in_jobs = _union([(j["submit"], j["end"] or j["submit"]) for j in jobs])
    total = (app["end"] or prev_end or 0) - (app["start"] or 0)
    return {"app_ms": total, "submit_to_start_ms": (app["start"] - app["submit"])
            if app["submit"] and app["start"] else None,
            "in_jobs_ms": in_jobs, "between_jobs_ms": total - in_jobs, "jobs": jobs,
            "stages": sorted(app["stages"].values(), key=lambda s: s["id"])}


def _union(spans) -> int:
    out, end = 0, None
    for a, b in sorted(spans):
        if end is None or a > end:
            out += b - a
            end = b
        elif b > end:
            out += b - end
            end = b
    return out


def print_timeline(path: str, app: dict, s: dict):
    """Per job: the driver's time from its SQL execution's start (the action called) to the
    job's submission (planning, the data source's planning worker), from there to its first
    task, its tasks' span and how many ran at once on average, and from its last task to the
    job's end."""
    print(f"{path}")
    print("  job  sql->submit  submit->1st task  tasks span  busy slots  last task->end  tasks  name")
    for j in s["jobs"]:
        sql = app["sql"].get(j["sql"], {}).get("start") if j["sql"] is not None else None
        span = (j["last_finish"] - j["first_launch"]) if j["first_launch"] else 0
        print(f"  {j['id']:>3} {(j['submit'] - sql) / 1000 if sql else 0:12.3f} "
              f"{((j['first_launch'] or j['submit']) - j['submit']) / 1000:17.3f} "
              f"{span / 1000:11.3f} {j['task_ms'] / span if span else 0:11.2f} "
              f"{((j['end'] or 0) - (j['last_finish'] or j['end'] or 0)) / 1000:15.3f} "
              f"{j['tasks']:>6}  {j['name'][:30]}")


def _mb(n) -> str:
    return f"{n / 1e6:.1f}"


def print_report(path: str, s: dict, stages: bool):
    print(f"{path}")
    print(f"  application {s['app_ms'] / 1000:.2f} s (submit to start "
          f"{(s['submit_to_start_ms'] or 0) / 1000:.2f} s): in jobs {s['in_jobs_ms'] / 1000:.2f} s, "
          f"between jobs (driver) {s['between_jobs_ms'] / 1000:.2f} s; "
          f"{len(s['jobs'])} jobs, {sum(j['tasks'] for j in s['jobs'])} tasks")
    print("  job  before   wall  tasks  deser    run    cpu     gc  shufW MB (rec)     "
          "shufR MB  in rec    out rec  name")
    for j in s["jobs"]:
        print(f"  {j['id']:>3} {j['before_ms'] / 1000:6.2f} {j['wall_ms'] / 1000:6.2f} "
              f"{j['tasks']:>6} {j['deser_ms'] / 1000:6.2f} {j['run_ms'] / 1000:6.2f} "
              f"{j['cpu_ns'] / 1e9:6.2f} {j['gc_ms'] / 1000:6.2f} "
              f"{_mb(j['shuffle_write_bytes']):>7} ({j['shuffle_write_records']:>8}) "
              f"{_mb(j['shuffle_read_bytes']):>8} {j['input_records']:>7} "
              f"{j['output_records']:>9}  {j['name'][:40]}")
        if stages:
            for st in s["stages"]:
                if st["job"] != j["id"]:
                    continue
                first = ((st["first_launch"] - st["submit"]) / 1000
                         if st["first_launch"] and st["submit"] else 0)
                tail = ((st["end"] - st["last_finish"]) / 1000
                        if st["end"] and st["last_finish"] else 0)
                print(f"      stage {st['id']:>3}: {st['tasks']:>4} tasks, run "
                      f"{st['run_ms'] / 1000:.2f} s, cpu {st['cpu_ns'] / 1e9:.2f} s, deser "
                      f"{st['deser_ms'] / 1000:.2f} s, shuffle write {_mb(st['shuffle_write_bytes'])}"
                      f" MB in {st['shuffle_write_ms'] / 1000:.2f} s; submit to first task "
                      f"{first:.3f} s, last task to end {tail:.3f} s  {st['name'][:30]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", nargs="+")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--stages", action="store_true", help="each job's stages too")
    ap.add_argument("--timeline", action="store_true",
                    help="per job: planning, waiting for the first task, the tasks' span, the end")
    args = ap.parse_args()
    out = {}
    for p in args.log:
        app = read_log(p)
        s = summarize(app)
        if args.timeline:
            print_timeline(p, app, s)
        elif args.json:
            out[p] = s
        else:
            print_report(p, s, args.stages)
    if args.json:
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
