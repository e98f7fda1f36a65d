"""`binlog-grammar pipeline`: binlog files to a Parquet change log and per-table snapshots.

    binlog-grammar pipeline --input samples/mariadb-* --output out/ [--master spark://host:7077]

The output folder (any filesystem Spark writes; the inputs must be readable by every worker as
local or `file:` paths):

    changes/db=D/table=T/date=YYYY-MM-DD/run-N-part-....parquet
        the change log: every row change, columns op, before, after, source, ts_ms (the `binlog`
        data source's map form, binlog_grammar.spark), partitioned by db, table and the UTC date
        of the event; each run adds its own files (named after the run)
    snapshots/D.T/part-....parquet
        per table, the latest row of every primary key after applying the inserts, updates and
        deletes in binlog order (file order, then offset, then row in its event): an insert sets
        the row of its key; an update that keeps the key overlays its after image on the row (so
        the partial images of binlog_row_image=MINIMAL/NOBLOB update what they hold); an update
        that changes the key deletes the before key and sets the new key to the before image
        overlaid by the after image; a delete removes the key. Typed columns
        (binlog_grammar.spark.typed), built from the table's latest TABLE_MAP_EVENT (columns a
        later ALTER dropped are left out, new ones are NULL in older rows). A table without a
        primary key (in the binlog or in --schema) is keyed by all its columns, so identical rows
        count once. Only row events change snapshots: statements logged as SQL
        (binlog_format=STATEMENT) are not applied
    _snapshot_rows/
        the same snapshots in the exact map form (db, table, key, row): what the next run starts
        from
    _binlog_state.json
        the position state: every file consumed (path, size, the offset read up to, GTID events),
        the transactions counted so far, the table definitions and keys, the filters, the runs

A run reads only what the state says is not consumed yet: new files from their start, and a file
that was still open (its FORMAT_DESCRIPTION_EVENT has LOG_EVENT_BINLOG_IN_USE_F) from the offset
read up to. An open file is read up to its last transaction boundary, so a transaction still being
written is left for the next run. So running again on the same input changes nothing, and a run
over files 1..N followed by a run over N+1..M gives the change log and snapshots one run over 1..M
gives. Each run writes to `_staging/run-N/` first, records what it is about to publish in the
state, then moves the files into place and commits the state; a run that stops half-way is
finished (or, if it had not recorded its plan, discarded) by the next one.

Exit status 0, or 1 with one line on stderr for bad input (a damaged binlog, a missing file, an
output written with other filters, pyspark or Java missing).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import re
import sys
import tempfile
import time
from typing import Optional

STATE_FILE = "_binlog_state.json"
STATE_VERSION = 1
MARK_RE = re.compile(r"\[binlog-grammar\] (.*)")


class PipelineError(Exception):
    """A problem with the input or the output folder: one line for the user."""


# ---------------------------------------------------------------------------------------------
# the entry point

def run_pipeline(args, spark=None, out=None) -> int:
    """Run the job for the parsed CLI `args` (input, output, master, table, exclude_table,
    schema, no_checksum, split_bytes). Uses `spark` (or the active session) when given one, else
    starts its own on args.master and stops it at the end. Returns the exit code."""
    out = out or sys.stdout
    started = time.monotonic()
    try:
        import pyspark  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as e:
        _err(f"the pipeline needs pyspark 4 and pyarrow ({e.name} is missing): "
             "pip install 'binlog-grammar[spark]'")
        return 1
    own = False
    try:
        job = _Job(args)  # checks the inputs before Spark starts
        summary = job.nothing_new() if spark is None else None
        if summary is not None:  # a rerun over consumed files: no need for Spark
            summary.seconds = time.monotonic() - started
            summary.print(out)
            return 0
        if spark is None:
            from pyspark.sql import SparkSession

            spark = SparkSession.getActiveSession()
        if spark is None:
            spark = _start_spark(args.master)
            own = True
        summary = job.run(spark)
    except PipelineError as e:
        _err(str(e))
        return 1
    except Exception as e:  # noqa: BLE001 - Spark wraps input errors in its own exceptions
        msg = _user_message(e)
        if msg is None:
            raise
        _err(msg)
        return 1
    finally:
        if own and spark is not None:
            try:
                spark.stop()
            except Exception:  # noqa: BLE001
                pass
    summary.seconds = time.monotonic() - started
    summary.print(out)
    return 0


def _err(msg: str):
    print(f"binlog-grammar: pipeline: {msg}", file=sys.stderr)


def _user_message(e: BaseException) -> Optional[str]:
    """The one line to show for an exception: our marked input errors, Java and Spark failures."""
    text = str(e)
    m = MARK_RE.search(text)
    if m:
        return m.group(1).strip()
    from ..errors import BinlogError

    if isinstance(e, BinlogError):
        return str(e)
    name = type(e).__name__
    if name in ("Py4JJavaError", "PythonException", "AnalysisException", "PySparkRuntimeError",
                "Py4JError", "PySparkException", "IllegalArgumentException") or \
            "JAVA_GATEWAY_EXITED" in text or "Java gateway process exited" in text:
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), name)
        if "JAVA_GATEWAY_EXITED" in text or "Java gateway" in text:
            return "Spark could not start (is Java 17 installed and JAVA_HOME set?)"
        return f"Spark failed: {first[:500]}"
    return None


# where Spark's shell banner ("Setting default log level ...") takes the level it compares with
# the root logger's: with the same level there is no banner
_BANNER_LOGGERS = ("org.apache.spark.deploy.SparkSubmit", "org.apache.spark.repl.Main",
                   "org.apache.spark.api.python.PythonGatewayServer", "org.apache.spark.SparkContext",
                   "org.apache.spark.util.Utils")


def _start_spark(master: str):
    from pyspark.sql import SparkSession

    level = os.environ.get("BINLOG_GRAMMAR_SPARK_LOG", "fatal")
    log4j = os.path.join(tempfile.gettempdir(), f"binlog-grammar-log4j2-{level}.properties")
    if not os.path.exists(log4j):
        tmp = f"{log4j}.{os.getpid()}"
        with open(tmp, "w") as fh:
            fh.write(f"rootLogger.level = {level}\nrootLogger.appenderRef.stderr.ref = console\n"
                     "appender.console.type = Console\nappender.console.name = console\n"
                     "appender.console.target = SYSTEM_ERR\n"
                     "appender.console.layout.type = PatternLayout\n"
                     "appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n\n"
                     # the level the shell banner compares with the root's: the same, so no banner
                     + "".join(f"logger.l{i}.name = {name}\nlogger.l{i}.level = {level}\n"
                               for i, name in enumerate(_BANNER_LOGGERS)))
        os.replace(tmp, log4j)
    b = (SparkSession.builder.appName("binlog-grammar pipeline").master(master or "local[*]")
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.driver.extraJavaOptions", f"-Dlog4j.configurationFile=file:{log4j}")
         .config("spark.log.structuredLogging.enabled", "false")
         .config("spark.sql.session.timeZone", "UTC"))
    if (master or "local[*]").startswith("local"):
        b = b.config("spark.pyspark.python", sys.executable)  # workers import this package
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel(level.upper())
    return spark


# ---------------------------------------------------------------------------------------------
# the output folder, through Hadoop's FileSystem (local paths, hdfs://, s3a://, ...)

class _FS:
    def __init__(self, spark, root: str):
        self.jvm = spark._jvm
        self.conf = spark._jsc.hadoopConfiguration()
        self.root = root.rstrip("/") or "/"
        self.fs = self.path(self.root).getFileSystem(self.conf)

    def path(self, p: str):
        return self.jvm.org.apache.hadoop.fs.Path(p)

    def join(self, *parts) -> str:
        return "/".join([self.root] + [p.strip("/") for p in parts])

    def exists(self, p: str) -> bool:
        return bool(self.fs.exists(self.path(p)))

    def read_text(self, p: str) -> Optional[str]:
        if not self.exists(p):
            return None
        stream = self.fs.open(self.path(p))
        try:
            reader = self.jvm.java.io.BufferedReader(
                self.jvm.java.io.InputStreamReader(stream, "UTF-8"))
            lines = []
            while True:
                line = reader.readLine()
                if line is None:
                    break
                lines.append(line)
            return "\n".join(lines)
        finally:
            stream.close()

    def write_text(self, p: str, text: str):
        """Write `p` whole or not at all (a temporary file renamed over it)."""
        tmp = p + ".tmp"
        stream = self.fs.create(self.path(tmp), True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()
        if self.exists(p):
            self.fs.delete(self.path(p), False)
        self.fs.rename(self.path(tmp), self.path(p))

    def delete(self, p: str):
        if self.exists(p):
            self.fs.delete(self.path(p), True)

    def rename(self, src: str, dst: str):
        parent = self.path(dst).getParent()
        if parent is not None:
            self.fs.mkdirs(parent)
        if not self.fs.rename(self.path(src), self.path(dst)):
            raise PipelineError(f"cannot move {src} to {dst}")

    def files(self, p: str) -> list:
        """(relative path, full path) of every data file under `p` (no _SUCCESS, no .crc)."""
        out = []
        if not self.exists(p):
            return out
        it = self.fs.listFiles(self.path(p), True)
        base = str(self.fs.makeQualified(self.path(p)).toString()).rstrip("/") + "/"
        while it.hasNext():
            st = it.next()
            full = str(st.getPath().toString())
            name = st.getPath().getName()
            if name.startswith("_") or name.startswith(".") or name.endswith(".crc"):
                continue
            out.append((full[len(base):] if full.startswith(base) else name, full))
        return sorted(out)

    def children(self, p: str) -> list:
        if not self.exists(p):
            return []
        return sorted(str(st.getPath().getName()) for st in self.fs.listStatus(self.path(p)))


# ---------------------------------------------------------------------------------------------
# the job

class Summary:
    def __init__(self):
        self.output = ""
        self.run = 0
        self.files = 0
        self.bytes = 0
        self.partitions = 0
        self.tables = {}  # db.table -> {"c": n, "u": n, "d": n, "snapshot": n}
        self.skipped = 0
        self.seconds = 0.0
        self.master = ""
        self.notes = []

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
        for n in self.notes:
            print(f"  note: {n}", file=out)
        print(f"output: {self.output} (changes/, snapshots/, {STATE_FILE})", file=out)
        print(f"{self.seconds:.1f} s", file=out)


class _Job:
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
            if os.path.abspath(p) not in seen:
                seen.add(os.path.abspath(p))
                self.paths.append(p)
        for p in self.paths:
            try:
                with open(p, "rb"):
                    pass
            except OSError as e:
                raise PipelineError(f"{p}: {e.strerror or e}") from None
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
        self.output = _output_uri(args.output)
        self.filters = {"tables": list(args.table or []),
                        "exclude_tables": list(args.exclude_table or []),
                        "schema": self.schema_text}

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
            if done.get(os.path.abspath(p)) != os.path.getsize(p):
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
        for rel, full in fs.files(stage + "/changes"):
            folder, _, name = rel.rpartition("/")
            fs.rename(full, fs.join("changes", folder, prefix + name))
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
        fs = _FS(spark, self.output)
        state = self._load_state(fs)
        self._recover(fs, state)
        done = {f["path"]: f for f in state["files"]}
        todo, starts = [], {}
        for p in self.paths:
            key = os.path.abspath(p)
            size = os.path.getsize(p)
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
        again = {os.path.abspath(p) for p in todo}
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
            files[os.path.abspath(p)] = {"path": os.path.abspath(p), "size": sc.size,
                                         "consumed": end, "in_use": sc.in_use,
                                         "complete": not sc.in_use, "gtid_events": sc.gtid_events}
        if all(files[os.path.abspath(p)]["consumed"] <= starts.get(p, 0) for p in todo):
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
        summary.bytes = sum(files[os.path.abspath(p)]["consumed"] - starts.get(p, 0) for p in todo)
        summary.partitions = len(splits)

        reader = self._reader(spark, plan_json)
        changes = reader.load()
        self._write_changes(changes, stage + "/changes")
        defs = self._table_defs(spark, plan_json, state, order)
        changed, sizes = self._snapshot(spark, fs, stage, defs, order, summary)
        all_files = list(files.values())
        pending = {"run": run_id, "files": all_files,
                   "tx_seq": sum(f["gtid_events"] for f in all_files),
                   "tables": defs, "touched": changed,
                   "snapshot_rows": sizes if sizes is not None else state.get("snapshot_rows", {})}
        state["pending"] = pending
        fs.write_text(fs.join(STATE_FILE), json.dumps(state, indent=1, sort_keys=True))
        self._publish(fs, pending)
        self._commit(fs, state)
        summary.tables = self._table_counts(state, summary.tables)
        return summary

    def _reader(self, spark, plan_json):
        from . import register

        register(spark)
        r = (spark.read.format("binlog").option("plan", plan_json)
             .option("verify_checksum", str(not self.args.no_checksum).lower()))
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
        from pyspark.sql import functions as F

        (changes.withColumn("date", F.date_format(F.timestamp_seconds(F.col("source.timestamp")),
                                                  "yyyy-MM-dd"))
         .write.mode("overwrite").partitionBy("db", "table", "date").parquet(where))

    def _table_defs(self, spark, plan_json, state, order) -> dict:
        """db.table -> {columns, primary_key, key}: the latest definition of every table."""
        rows = self._reader(spark, plan_json).option("content", "tables").load().collect()
        defs = dict(state.get("tables") or {})
        latest = {}
        for r in rows:
            name = f"{r.db}.{r.table}"
            where = (r.file_index, r.pos)
            if name not in latest or where > latest[name][0]:
                latest[name] = (where, r)
        for name, (_, r) in latest.items():
            cols = json.loads(r.columns)
            pk = list(r.primary_key)
            defs[name] = {"db": r.db, "table": r.table, "columns": cols, "primary_key": pk,
                          "key": pk or [c["name"] for c in cols]}
        return defs

    # -- snapshots -----------------------------------------------------------------------------
    def _snapshot(self, spark, fs, stage, defs, order, summary) -> list:
        from pyspark.sql import functions as F
        from pyspark.sql import types as S

        changes_path = stage + "/changes"
        prev_path = fs.join("_snapshot_rows")
        if not fs.files(changes_path):
            return [], None
        ch = spark.read.parquet(changes_path)
        for r in ch.groupBy("db", "table", "op").count().collect():
            summary.tables.setdefault(f"{r.db}.{r.table}", {})[r.op] = r["count"]
        keymap = F.create_map(*[x for name, d in sorted(defs.items())
                                for x in (F.lit(name), F.array(*[F.lit(k) for k in d["key"]]))])
        fileidx = F.create_map(*[x for p, i in sorted(order.items())
                                 for x in (F.lit(p), F.lit(i))])
        name = F.concat_ws(".", F.col("db"), F.col("table"))
        keycols = F.element_at(keymap, name)

        def key_of(img, fallback=None):
            if fallback is None:
                return F.to_json(F.transform(keycols, lambda k: F.element_at(img, k)))
            return F.to_json(F.transform(keycols, lambda k: F.coalesce(F.element_at(img, k),
                                                                       F.element_at(fallback, k))))

        mtype = S.MapType(S.StringType(), S.StringType())
        nomap = F.lit(None).cast(mtype)
        empty = F.create_map().cast(mtype)

        def ev(k, img, alive, arrival):
            return F.struct(k.alias("k"), img.alias("img"), F.lit(alive).alias("alive"),
                            F.lit(arrival).alias("arrival"))

        kb = key_of(F.col("before"))
        ka = key_of(F.col("after"), F.col("before"))
        events = F.when(F.col("op") == "c", F.array(ev(ka, F.col("after"), True, True))) \
            .when(F.col("op") == "d", F.array(ev(kb, nomap, False, False))) \
            .when(kb != ka, F.array(ev(kb, nomap, False, False),
                                    ev(ka, F.map_concat(F.coalesce(F.col("before"), empty),
                                                        F.col("after")), True, True))) \
            .otherwise(F.array(ev(ka, F.col("after"), True, False)))
        new = (ch.select("db", "table",
                         F.element_at(fileidx, F.col("source.file")).cast("long").alias("o1"),
                         F.col("source.pos").alias("o2"), F.col("source.row").cast("long").alias("o3"),
                         F.explode(events).alias("e"))
               .select("db", "table", "o1", "o2", "o3", F.col("e.k").alias("key"),
                       F.col("e.img").alias("img"), F.col("e.alive").alias("alive"),
                       F.col("e.arrival").alias("arrival")))
        if fs.files(prev_path):
            prev = spark.read.parquet(prev_path)
            prev = prev.select("db", "table", F.lit(-1).cast("long").alias("o1"),
                               F.lit(0).cast("long").alias("o2"), F.lit(0).cast("long").alias("o3"),
                               key_of(F.col("row")).alias("key"), F.col("row").alias("img"),
                               F.lit(True).alias("alive"), F.lit(True).alias("arrival"))
            new = prev.unionByName(new)
        folded = (new.groupBy("db", "table", "key")
                  .agg(F.array_sort(F.collect_list(F.struct("o1", "o2", "o3", "alive", "arrival",
                                                            "img")), _by_order).alias("evs"))
                  .select("db", "table", "key", F.aggregate(
                      "evs", F.struct(F.lit(False).alias("alive"), empty.alias("row")),
                      lambda acc, x: F.struct(
                          x["alive"].alias("alive"),
                          F.when(~x["alive"], empty).when(x["arrival"], x["img"])
                          .otherwise(F.map_concat(acc["row"], x["img"])).alias("row"))).alias("s"))
                  .where(F.col("s.alive"))
                  .select("db", "table", "key", F.col("s.row").alias("row")))
        folded.write.mode("overwrite").parquet(stage + "/snapshot_rows")
        rows = spark.read.parquet(stage + "/snapshot_rows")
        sizes = {f"{r.db}.{r.table}": r["count"]
                 for r in rows.groupBy("db", "table").count().collect()}
        touched = sorted(t for t, ops in summary.tables.items() if ops)
        jobs = []
        for t in touched:
            d = defs.get(t)
            if d is None:
                summary.notes.append(f"{t}: no table definition; no snapshot")
                continue
            jobs.append((rows.where((F.col("db") == d["db"]) & (F.col("table") == d["table"])),
                         d, stage + "/snapshots/" + t))
        # one small job per table: run a few at once (Spark schedules concurrent jobs)
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=4) as pool:
            for f in [pool.submit(self._typed_snapshot, *j) for j in jobs]:
                f.result()
        return touched, sizes

    def _typed_snapshot(self, rows, d, where):
        from .typed import converter, struct_type, typed_from_texts

        schema = struct_type(d["columns"])
        convs = [(c["name"], converter(c)) for c in d["columns"]]
        names = [c["name"] for c in d["columns"]]

        def to_typed(rows):
            for r in rows:
                t = typed_from_texts(r["row"] or {}, convs)
                yield tuple(t[n] for n in names)

        rdd = rows.sortWithinPartitions("key").select("key", "row").rdd.mapPartitions(to_typed)
        typed = rows.sparkSession.createDataFrame(rdd, schema, verifySchema=False)
        typed.write.mode("overwrite").parquet(where)

    @staticmethod
    def _table_counts(state, counts) -> dict:
        """This run's changes per table and op, with every table's snapshot size (from the
        state, which counts them when a run commits)."""
        counts = {k: dict(v) for k, v in counts.items()}
        for name, n in (state.get("snapshot_rows") or {}).items():
            counts.setdefault(name, {})["snapshot"] = n
        return counts


def _by_order(a, b):
    """Comparator of snapshot events: binlog order (file, offset, row)."""
    from pyspark.sql import functions as F

    out = F.lit(0)
    for k in ("o3", "o2", "o1"):
        out = F.when(a[k] < b[k], -1).when(a[k] > b[k], 1).otherwise(out)
    return out


def _session_conf(spark):
    for k, v in (("spark.sql.session.timeZone", "UTC"),
                 ("spark.sql.mapKeyDedupPolicy", "LAST_WIN"),
                 ("spark.sql.sources.partitionColumnTypeInference.enabled", "false")):
        spark.conf.set(k, v)


def _output_uri(output: str) -> str:
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", output) or output.startswith("file:"):
        return output.rstrip("/")
    return os.path.abspath(output)


__all__ = ["run_pipeline", "PipelineError"]
