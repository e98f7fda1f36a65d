"""A run of the pipeline (binlog_grammar.spark.pipeline): which input bytes are new (the state in
the output folder says what was consumed), the plan of splits over them, the change log written,
the snapshots folded, and the output published and the state committed, in that order, so that a
run that stops half-way is finished or discarded by the next one.
"""
from __future__ import annotations

import json
import os
import time
from typing import Optional

from .fs import check_readable, input_key, input_size, storage_options
from .output_folder import (HIVE_DEFAULT, STATE_FILE, STATE_VERSION, OutputFS, PipelineError,
                            output_uri, table_name)
from .snapshots import write_snapshots


class Summary:
    """What a run did, printed at its end."""

    def __init__(self):
        self.output = ""
        self.run = 0
        self.files = 0
        self.bytes = 0
        self.partitions = 0
        self.tables = {}  # db.table -> {"c": n, "u": n, "d": n, "snapshot": n}
        self.skipped = 0
        self.undecoded = 0  # rows events not decoded, kept raw in undecoded/
        self.debezium = False  # the run wrote the Debezium change table
        self.stages = []  # (stage, seconds, CPU seconds or None) of the run, in order
        self._mark = None
        self.seconds = 0.0
        self.master = ""
        self.notes = []

    def start_stages(self):
        self._mark = (time.monotonic(), tree_cpu())

    def stage(self, name: str):
        """Close the stage `name`: its wall time and the CPU time of this process and its
        descendants (the local JVM and its Python workers) since the previous stage ended."""
        now, cpu = time.monotonic(), tree_cpu()
        then, before = self._mark
        self.stages.append((name, now - then,
                            cpu - before if cpu is not None and before is not None else None))
        self._mark = (now, cpu)

    def print(self, out):
        total = sum(v.get("c", 0) + v.get("u", 0) + v.get("d", 0) for v in self.tables.values())
        if self.run:
            print(f"run {self.run}: {self.files} file(s), {self.bytes:,} bytes in {self.partitions} "
                  f"partition(s) on {self.master}; {self.skipped} file(s) already done", file=out)
        else:
            print(f"nothing new: every input file is already in the output "
                  f"({self.skipped} file(s) done)", file=out)
        print(f"{total} row changes", file=out)
        width = max([len(t) for t in self.tables] + [5])
        for t in sorted(self.tables):
            v = self.tables[t]
            print(f"  {t:<{width}}  {v.get('c', 0) + v.get('u', 0) + v.get('d', 0):>8} changes "
                  f"(c {v.get('c', 0)}, u {v.get('u', 0)}, d {v.get('d', 0)})  snapshot "
                  f"{v.get('snapshot', 0)} rows", file=out)
        if self.undecoded:
            print(f"{self.undecoded} rows event(s) not decoded (no snapshot of their rows), kept "
                  f"raw in undecoded/ (file, position, table, bytes, reason)", file=out)
        for n in self.notes:
            print(f"  note: {n}", file=out)
        print(f"output: {self.output} (changes/, snapshots/, schema_history/, {STATE_FILE}"
              + (", undecoded/" if self.undecoded else "")
              + (", debezium/" if self.debezium else "") + ")", file=out)
        if self.stages:
            print("stages: " + ", ".join(f"{n} {t:.1f} s" + (f" (CPU {c:.1f} s)" if c is not None
                                                              else "")
                                         for n, t, c in self.stages), file=out)
        print(f"{self.seconds:.1f} s", file=out)


class Job:
    """One run of the pipeline over the parsed CLI arguments: the inputs checked, then the
    state read, the new bytes read, the output staged, published and committed."""

    def __init__(self, args):
        from ..errors import BinlogError
        from .split import expand_paths

        self.args = args
        try:
            paths = expand_paths(list(args.input))
        except BinlogError as e:
            raise PipelineError(str(e)) from None
        seen = set()
        self.paths = []  # each file once, in the order given
        for p in paths:
            if input_key(p) not in seen:
                seen.add(input_key(p))
                self.paths.append(p)
        for p in self.paths:
            try:
                check_readable(p)
            except OSError as e:
                raise PipelineError(e.strerror and f"{p}: {e.strerror}" or str(e)) from None
        self.schema_text = None
        if args.schema:
            from ..binlog.rows import load_schemas

            try:
                load_schemas(args.schema)
            except (OSError, ValueError) as e:
                raise PipelineError(f"--schema: {e}") from None
            except Exception as e:  # noqa: BLE001 - a YAML syntax error
                raise PipelineError(f"--schema {args.schema}: {type(e).__name__}: {e}") from None
            self.schema_text = os.path.abspath(args.schema)
        if args.split_bytes is not None and args.split_bytes < 0:
            raise PipelineError("--split-bytes must be positive")
        self.output = output_uri(args.output)
        self.filters = {"tables": list(args.table or []),
                        "exclude_tables": list(args.exclude_table or []),
                        "schema": self.schema_text}
        # --debezium: the Debezium change table beside the change log, with its options (an
        # output is written with or without it from its first run on: the state's filters)
        self.debezium = debezium_options(args)
        if self.debezium is not None:
            self.filters["debezium"] = self.debezium

    # -- state -----------------------------------------------------------------------------------
    def nothing_new(self) -> Optional[Summary]:
        """The summary of a run with nothing to read, told from a local output's state alone;
        None when Spark is needed (a new or grown file, a pending run, another filesystem)."""
        if not self.output.startswith("/"):
            return None
        try:
            with open(os.path.join(self.output, STATE_FILE), encoding="utf-8") as fh:
                state = json.load(fh)
        except (OSError, ValueError):
            return None
        if state.get("version") != STATE_VERSION or state.get("pending"):
            return None
        if state.get("filters") != self.filters:
            raise PipelineError(self._other_filters(state))
        done = {f["path"]: f["consumed"] for f in state.get("files", [])}
        for p in self.paths:
            if done.get(input_key(p)) != input_size(p):
                return None
        summary = Summary()
        summary.output = self.output
        summary.skipped = len(self.paths)
        summary.tables = self._table_counts(state, {})
        return summary

    def _load_state(self, fs) -> dict:
        text = fs.read_text(fs.join(STATE_FILE))
        if text is None:
            if fs.exists(fs.root) and [c for c in fs.children(fs.root) if c != "_staging"]:
                raise PipelineError(f"{self.output} is not empty and has no {STATE_FILE}: "
                                    "not a pipeline output")
            return {"version": STATE_VERSION, "runs": 0, "files": [], "tx_seq": 0, "tables": {},
                    "filters": self.filters, "pending": None}
        try:
            state = json.loads(text)
        except ValueError as e:
            raise PipelineError(f"{fs.join(STATE_FILE)}: not JSON ({e})") from None
        if state.get("version") != STATE_VERSION:
            raise PipelineError(f"{fs.join(STATE_FILE)}: state version {state.get('version')}")
        if state.get("filters") != self.filters:
            raise PipelineError(self._other_filters(state))
        return state

    def _other_filters(self, state) -> str:
        return (f"{self.output} was written with other filters "
                f"({json.dumps(state.get('filters'), sort_keys=True)}); use another --output")

    def _recover(self, fs, state):
        """Finish a run that recorded its plan, or drop the staging of one that did not."""
        if state.get("pending"):
            self._publish(fs, state["pending"])
            self._commit(fs, state)
        fs.delete(fs.join("_staging"))

    def _publish(self, fs, pending):
        stage = fs.join("_staging", f"run-{pending['run']}")
        prefix = f"run-{pending['run']}-"
        for kind, staged in (("changes", f"{stage}/read/kind=changes"),
                             ("undecoded", f"{stage}/read/kind=undecoded"),
                             ("debezium", f"{stage}/debezium"),
                             ("schema_history", f"{stage}/schema_history")):
            for rel, full in fs.files(staged):
                folder, _, name = rel.rpartition("/")
                fs.rename(full, fs.join(kind, folder, prefix + name))
                _crash_point("publish")
        if fs.exists(stage + "/snapshot_rows"):
            fs.delete(fs.join("_snapshot_rows"))
            fs.rename(stage + "/snapshot_rows", fs.join("_snapshot_rows"))
        for t in fs.children(stage + "/snapshots"):
            fs.delete(fs.join("snapshots", t))
            fs.rename(stage + "/snapshots/" + t, fs.join("snapshots", t))

    def _commit(self, fs, state):
        p = state.pop("pending")
        state["runs"] = p["run"]
        state["files"] = p["files"]
        state["tx_seq"] = p["tx_seq"]
        state["tables"] = p["tables"]
        state["snapshot_rows"] = p.get("snapshot_rows", {})
        state["pending"] = None
        fs.write_text(fs.join(STATE_FILE), json.dumps(state, indent=1, sort_keys=True))
        fs.delete(fs.join("_staging"))

    # -- the run ---------------------------------------------------------------------------------
    def run(self, spark) -> Summary:
        from .split import plan

        summary = Summary()
        summary.output = self.output
        summary.master = spark.sparkContext.master
        _session_conf(spark)
        fs = OutputFS(spark, self.output)
        state = self._load_state(fs)
        self._recover(fs, state)
        done = {f["path"]: f for f in state["files"]}
        todo, starts = [], {}
        for p in self.paths:
            key = input_key(p)
            size = input_size(p)
            f = done.get(key)
            if f is None:
                todo.append(p)
            elif f["consumed"] > size:
                raise PipelineError(f"{p}: the state says {f['consumed']} bytes were read, the file "
                                    f"has {size}: it was replaced; use another --output")
            elif f["consumed"] < size:
                todo.append(p)
                starts[p] = f["consumed"]
            else:
                summary.skipped += 1
        again = {input_key(p) for p in todo}
        # GTID events before the first file read now: those of the files not read again
        base = sum(f["gtid_events"] for f in state["files"] if f["path"] not in again)
        if not todo:
            summary.tables = self._table_counts(state, {})
            return summary
        parallelism = spark.sparkContext.defaultParallelism
        split_bytes = self.args.split_bytes
        splits, scans = plan(todo, split_bytes, min_partitions=parallelism * 3, starts=starts,
                             tx_seq_base=base)
        stops = {}
        files = {f["path"]: dict(f) for f in state["files"]}
        for p, sc in zip(todo, scans):
            start = starts.get(p, 4)
            if sc.in_use:
                end = max(start, sc.last_boundary or start)
                stops[p] = end
            else:
                end = sc.size
            files[input_key(p)] = {"path": input_key(p), "size": sc.size,
                                         "consumed": end, "in_use": sc.in_use,
                                         "complete": not sc.in_use, "gtid_events": sc.gtid_events}
        if all(files[input_key(p)]["consumed"] <= starts.get(p, 0) for p in todo):
            summary.skipped = len(self.paths)  # open files without a new committed transaction
            summary.tables = self._table_counts(state, {})
            return summary
        if stops:  # read open files up to their last boundary
            splits, scans = plan(todo, split_bytes, min_partitions=parallelism * 3, starts=starts,
                                 stops=stops, tx_seq_base=base, scans=scans)
        run_id = state["runs"] + 1
        stage = fs.join("_staging", f"run-{run_id}")
        fs.delete(stage)
        order = {p: i for i, p in enumerate(todo)}
        plan_json = json.dumps({"paths": todo, "splits": [s.to_json() for s in splits]})
        summary.run = run_id
        summary.files = len(todo)
        summary.bytes = sum(files[input_key(p)]["consumed"] - starts.get(p, 0) for p in todo)
        summary.partitions = len(splits)

        summary.start_stages()
        # one read: the change rows with the table definitions among them (option with_tables),
        # staged apart under kind=tables
        reader = self._reader(spark, plan_json).option("with_tables", "true")
        changes = reader.load()
        self._write_changes(changes, stage + "/read")
        _crash_point("changes", spark)
        if fs.files(stage + "/read/kind=undecoded"):
            summary.undecoded = spark.read.parquet(stage + "/read/kind=undecoded").count()
        summary.stage("change log")
        if self.debezium is not None:
            self._write_debezium(self._reader(spark, plan_json, self.debezium).load(),
                                 stage + "/debezium")
            summary.debezium = True
            summary.stage("debezium")
        defs, history = self._table_defs(spark, fs, stage, state, order, changes.schema)
        if history:
            self._write_history(fs, history, run_id, stage + "/schema_history")
        summary.stage("table definitions")
        changed, sizes = write_snapshots(spark, fs, stage, defs, order, summary)
        _crash_point("snapshots")
        all_files = list(files.values())
        pending = {"run": run_id, "files": all_files,
                   "tx_seq": sum(f["gtid_events"] for f in all_files),
                   "tables": defs, "touched": changed,
                   "snapshot_rows": sizes if sizes is not None else state.get("snapshot_rows", {})}
        state["pending"] = pending
        fs.write_text(fs.join(STATE_FILE), json.dumps(state, indent=1, sort_keys=True))
        _crash_point("pending")
        self._publish(fs, pending)
        self._commit(fs, state)
        summary.stage("publish")
        summary.tables = self._table_counts(state, summary.tables)
        return summary

    def _reader(self, spark, plan_json, debezium=None):
        """The read of the run's plan: the change rows, or with `debezium` (its options) the
        lines of the Debezium envelope."""
        from . import register

        register(spark)
        # object storage's endpoint and credentials travel with the job (spark/fs.py)
        r = (spark.read.format("binlog").options(**storage_options(self.paths))
             .option("plan", plan_json)
             .option("verify_checksum", str(not self.args.no_checksum).lower()))
        if debezium is not None:
            r = r.option("envelope", "debezium").options(
                **{f"debezium.{k}": v for k, v in debezium.items()})
        if self.args.table:
            r = r.option("tables", json.dumps(list(self.args.table)))
        if self.args.exclude_table:
            r = r.option("exclude_tables", json.dumps(list(self.args.exclude_table)))
        if self.schema_text:
            r = r.option("schema", self.schema_text)
        specs = getattr(self.args, "user_specs", None)
        if specs:
            r = r.option("specs", json.dumps([os.path.abspath(s) for s in specs]))
        return r

    def _write_changes(self, changes, where):
        """One write of the read: the decoded rows under `where`/kind=changes, the rows events
        that could not be decoded (one raw row each: rows_raw, undecoded) under
        `where`/kind=undecoded, each partitioned by db, table and date."""
        from pyspark.sql import functions as F

        kind = F.when(F.col("op") == "t", "tables") \
            .when(F.col("undecoded").isNull(), "changes").otherwise("undecoded")
        (changes.withColumn("db", partition_column(F.col("db")))
         .withColumn("table", partition_column(F.col("table")))
         .withColumn("date", F.date_format(F.timestamp_seconds(F.col("source.timestamp")),
                                           "yyyy-MM-dd"))
         .withColumn("kind", kind)
         .write.mode("overwrite").partitionBy("kind", "db", "table", "date").parquet(where))

    @staticmethod
    def _write_debezium(lines, where):
        """The Debezium change table: every line of the envelope (the data source's rows:
        value, file, pos, line) partitioned as the change log is, by db, table (NULL for the
        records of no table's rows: a transaction's BEGIN and END, schema changes) and the UTC
        date of its event."""
        from pyspark.sql import functions as F

        (lines.withColumn("db", partition_column(F.col("db")))
         .withColumn("table", partition_column(F.col("table")))
         .withColumn("date", F.date_format(F.timestamp_millis(F.col("ts_ms")), "yyyy-MM-dd"))
         .drop("ts_ms")
         .write.mode("overwrite").partitionBy("db", "table", "date").parquet(where))

    @staticmethod
    def _write_history(fs, history, run_id, where):
        """The run's lines of schema_history/ (JSON lines, as Debezium's file schema history
        keeps its own: a few lines, written without a Spark job): each definition a table takes,
        where it takes it."""
        lines = [json.dumps({"db": db, "table": table, "columns": json.loads(columns),
                             "primary_key": list(pk), "file": file, "pos": pos, "run": run_id},
                            ensure_ascii=False, sort_keys=True)
                 for db, table, columns, pk, file, pos in history]
        fs.write_text(where + "/part-00000.jsonl", "\n".join(lines) + "\n")

    @staticmethod
    def _table_defs(spark, fs, stage, state, order, read_schema) -> tuple:
        """(db.table -> {columns, primary_key, key}: the latest definition of every table, the
        schema history's new rows: (db, table, columns JSON, primary key, file, pos) each time a
        table takes a definition other than its previous one, in binlog order), from the
        definition rows the read staged under kind=tables (arrow_rows.DefinitionRows: a table's
        first in each split, then each change) and the state's definitions (the previous
        run's)."""
        from pyspark.sql import types as S

        where = stage + "/read/kind=tables"
        rows = []
        if fs.files(where):
            # the staged rows' schema given (the partition folders' columns last, as text): no
            # job to infer it from a footer
            staged = S.StructType([f for f in read_schema.fields if f.name not in ("db", "table")]
                                  + [S.StructField(n, S.StringType())
                                     for n in ("db", "table", "date")])
            rows = spark.read.schema(staged).parquet(where).select(
                "db", "table", "source.file", "source.pos", "undecoded").collect()
        defs = dict(state.get("tables") or {})
        history = []
        for r in sorted(rows, key=lambda r: (order[r.file], r.pos)):
            name = table_name(r.db, r.table)
            d = json.loads(r.undecoded)
            # column names as the change rows' maps hold them (bytes that do not decode \xNN:
            # typed.column_def)
            cols = json.loads(d["columns"])
            pk = d["primary_key"]
            before = defs.get(name)
            if before is None or (before["columns"], before["primary_key"]) != (cols, pk):
                history.append((r.db, r.table, d["columns"], pk, r.file, r.pos))
            defs[name] = {"db": r.db, "table": r.table, "columns": cols, "primary_key": pk,
                          "key": pk or [c["name"] for c in cols]}
        return defs, history

    @staticmethod
    def _table_counts(state, counts) -> dict:
        """This run's changes per table and op, with every table's snapshot size (from the
        state, which counts them when a run commits)."""
        counts = {k: dict(v) for k, v in counts.items()}
        for name, n in (state.get("snapshot_rows") or {}).items():
            counts.setdefault(name, {})["snapshot"] = n
        return counts


def debezium_options(args):
    """The Debezium options of --debezium (--debezium-option KEY=VALUE, checked), or None
    without it."""
    options = dict(getattr(args, "debezium_option", None) or ())
    if not getattr(args, "debezium", False):
        if options:
            raise PipelineError("--debezium-option needs --debezium")
        return None
    from ..output.debezium import check_options

    try:
        check_options(options)
    except ValueError as e:
        raise PipelineError(f"--debezium-option {e}") from None
    if options.get("snapshot.mode", "no_data").strip().lower() != "no_data":
        raise PipelineError("--debezium-option snapshot.mode: the pipeline writes the records of "
                            "the binlogs only (its snapshots/ are the tables' rows)")
    return options


def partition_column(c):
    """output_folder.partition_value of the names in column `c`, in Spark's expressions."""
    from pyspark.sql import functions as F

    escaped = F.regexp_replace(F.regexp_replace(F.regexp_replace(c, "%", "%25"), "\x00", "%00"),
                               f"^_(?={HIVE_DEFAULT[1:]})", "%5F")
    return F.when(c == "", F.lit("%")).otherwise(escaped)


def _crash_point(name: str, spark=None):
    """The driver killed (SIGKILL, nothing cleaned up) at the point of the run named in
    BINLOG_GRAMMAR_PIPELINE_CRASH_AT: the crash-recovery tests' way of picking where it dies
    (changes: the change log staged; snapshots: the snapshots staged; pending: the plan
    recorded in the state; publish: the first output file moved into place). `jvm:NAME` kills
    the local Spark's JVM there instead (the driver goes on and finds it gone)."""
    import signal

    at = os.environ.get("BINLOG_GRAMMAR_PIPELINE_CRASH_AT")
    if at == name:
        os.kill(os.getpid(), signal.SIGKILL)
    if at == f"jvm:{name}" and spark is not None:
        proc = spark.sparkContext._gateway.proc  # the JVM this driver launched
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


def tree_cpu() -> Optional[float]:
    """CPU seconds (user and system) of this process and its descendants, live ones and those
    they have waited for, from Linux's /proc; None where there is no /proc."""
    try:
        tick = os.sysconf("SC_CLK_TCK")
        parent, ticks = {}, {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as fh:
                    fields = fh.read().rpartition(b")")[2].split()
            except OSError:  # gone meanwhile
                continue
            pid = int(name)
            parent[pid] = int(fields[1])
            ticks[pid] = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    except (OSError, ValueError, AttributeError):
        return None
    me, total = os.getpid(), 0
    for pid in ticks:
        p = pid
        while p not in (me, 0, 1) and p in parent:
            p = parent[p]
        if p == me:
            total += ticks[pid]
    return total / tick


def _session_conf(spark):
    # the change log's partitioned write keeps a writer open per partition (db, table, date) a
    # task meets, up to 16, instead of sorting each task's rows by partition first (a partition's
    # rows then stay in binlog order in their file)
    for k, v in (("spark.sql.session.timeZone", "UTC"),
                 ("spark.sql.mapKeyDedupPolicy", "LAST_WIN"),
                 ("spark.sql.sources.partitionColumnTypeInference.enabled", "false"),
                 ("spark.sql.maxConcurrentOutputFileWriters", "16")):
        spark.conf.set(k, v)
