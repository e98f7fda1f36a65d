"""`binlog-grammar pipeline`: binlog files to a Parquet change log and per-table snapshots.

    binlog-grammar pipeline --input samples/mariadb-* --output out/ [--master spark://host:7077]

On a cluster (`--master spark://HOST:PORT`, or any master that is not local) the package is
shipped with the job (binlog_grammar.spark.ship): the workers need pyspark's dependencies and
pyarrow, not binlog-grammar. The driver JVM starts from the class archive a first run wrote
(binlog_grammar.spark.jvm_archive; BINLOG_GRAMMAR_JVM_ARCHIVE=off: never).

The output folder (any filesystem Spark writes):

    changes/db=D/table=T/date=YYYY-MM-DD/run-N-part-....parquet (D and T, and the db and table
    columns of every partitioned output: output_folder.partition_value, the names as they are
    unless empty (`%`), holding a `%` or NUL (`%25`, `%00`) or starting with
    __HIVE_DEFAULT_PARTITION__ (its first `_` as `%5F`); a name whose bytes do not decode as the
    dump writes it, `\\xNN`)
        the change log: every row change, columns op, before, after, source, ts_ms (the `binlog`
        data source's map form, binlog_grammar.spark), partitioned by db, table and the UTC date
        of the event; each run adds its own files (named after the run); rows_raw and
        undecoded are NULL here
    undecoded/db=D/table=T/date=YYYY-MM-DD/run-N-part-....parquet
        the rows events of valid files that could not be decoded (a TABLE_MAP_EVENT without
        column metadata, as MySQL 5.1 development trees wrote them): one row each, in the change
        log's columns, with no images, the row-image bytes in rows_raw and the reason in
        undecoded (as dump --format jsonl shows them); they change no snapshot, and the run's
        summary says how many there were
    schema_history/run-N-part-00000.jsonl
        the schema history, JSON lines: one each time a table takes a definition other than its
        previous one, in binlog order across runs (db, table, columns: content `tables`' list,
        primary_key, file and pos: the first rows event with that definition, run): a column
        added mid-binlog gives the table's two schemas, the change rows before the ALTER having
        the old columns and those after it the new ones (the change log keeps each row's own
        columns; the snapshots take the latest definition)
    debezium/db=D/table=T/date=YYYY-MM-DD/run-N-part-....parquet (with --debezium)
        every line `dump --format jsonl --envelope debezium` writes for the same bytes (with
        the same --debezium-option properties: the Debezium MySQL/MariaDB connector's records,
        docs/debezium.md), columns value (the line), file, pos and line (its index among its
        event's lines), partitioned as the change log; the records of no table's rows (a
        transaction's BEGIN and END, schema changes) have NULL db and table. An output keeps
        the choice (and the options) of its first run: another is refused, as other filters are
    snapshots/D.T/part-....parquet (D.T: output_folder.table_name, the names as they are unless
    they hold a `.`, `/`, `:`, `%`, ... or a control character, each written %XX: test.a%2Eb)
        per table, the latest row of every primary key after applying the inserts, updates and
        deletes in binlog order (file order, then offset, then row in its event): an insert sets
        the row of its key; an update that keeps the key overlays its after image on the row (so
        the partial images of binlog_row_image=MINIMAL/NOBLOB update what they hold); an update
        that changes the key deletes the before key and sets the new key to the before key's row
        overlaid by the before image, then the after image (so under MINIMAL, whose before image
        is the key alone, the other columns keep their values); a delete removes the key.
        Typed columns (binlog_grammar.spark.typed), built from the table's latest
        TABLE_MAP_EVENT (columns a later ALTER dropped are left out, new ones are NULL in older
        rows). A table without a primary key (in the binlog or in --schema) is keyed by all its
        columns, so identical rows count once. Only row events change snapshots: statements
        logged as SQL (binlog_format=STATEMENT) are not applied
    _snapshot_rows/
        the same snapshots in the exact map form (db, table, key, row), partitioned by db and
        table: what the next run starts from
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
finished (or, if it had not recorded its plan, discarded) by the next one: killed anywhere, the
next run leaves the output a run that was not killed leaves (tests/spark/test_spark_pipeline.py).

Exit status 0, or 1 with one line on stderr for bad input (a damaged binlog, a missing file, an
output written with other filters, pyspark or Java missing), or 130 after a Ctrl-C (no traceback;
the next run finishes or discards the interrupted one).
"""
from __future__ import annotations

import logging
import os
import signal
import sys
import tempfile
import threading
import time
from typing import Optional

from .job import Job
from .jvm_archive import Archive
from .options import marked_message
from .output_folder import PipelineError


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
    archive = proc = None  # the driver JVM's class archive (jvm_archive.py) and its process
    try:
        job = Job(args)  # checks the inputs before Spark starts
        summary = job.nothing_new() if spark is None else None
        if summary is not None:  # a rerun over consumed files: no need for Spark
            summary.seconds = time.monotonic() - started
            summary.print(out)
            return 0
        if spark is None:
            from pyspark.sql import SparkSession

            spark = SparkSession.getActiveSession()
        if spark is None:
            spark, archive = _start_spark(args.master)
            proc = getattr(spark.sparkContext._gateway, "proc", None)
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
        # (also after a Ctrl-C: the JVM writes the archive as it exits all the same)
        note = archive.finish(proc) if archive is not None else None
    if note:
        summary.notes.append(note)
    summary.seconds = time.monotonic() - started
    summary.print(out)
    return 0


def _err(msg: str):
    print(f"binlog-grammar: pipeline: {msg}", file=sys.stderr)


def _user_message(e: BaseException) -> Optional[str]:
    """The one line to show for an exception: our marked input errors, Java and Spark failures."""
    text = str(e)
    msg = marked_message(text)
    if msg is not None:
        return msg
    from ..errors import BinlogError

    if isinstance(e, BinlogError):
        return str(e)
    if _jvm_gone(e):
        return ("Spark's JVM stopped during the run (killed, or out of memory; "
                "BINLOG_GRAMMAR_SPARK_LOG=error shows its log): the same command run again "
                "finishes or discards this run")
    name = type(e).__name__
    if name in ("Py4JJavaError", "PythonException", "AnalysisException", "PySparkRuntimeError",
                "Py4JError", "PySparkException", "IllegalArgumentException") or \
            "JAVA_GATEWAY_EXITED" in text or "Java gateway process exited" in text:
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), name)
        if "JAVA_GATEWAY_EXITED" in text or "Java gateway" in text:
            return "Spark could not start (is Java 17 installed and JAVA_HOME set?)"
        return f"Spark failed: {(_java_cause(e) or first)[:500]}"
    return None


def _java_cause(e) -> Optional[str]:
    """The root cause of a Java exception py4j wraps ("IOException: Mkdirs failed to create
    ..."), without its package: what py4j's first line ("An error occurred while calling
    o119.parquet.") does not say."""
    cause = getattr(e, "java_exception", None)
    try:
        seen = 0
        while cause is not None and cause.getCause() is not None and seen < 20:
            cause, seen = cause.getCause(), seen + 1
        if cause is None:
            return None
        text = str(cause.toString()).strip().splitlines()[0]
    except Exception:  # noqa: BLE001 - the JVM gone meanwhile: the first line will do
        return None
    head, colon, rest = text.partition(":")
    return head.rsplit(".", 1)[-1] + colon + rest if " " not in head else text


class _NoInterruptTracebacks(logging.Filter):
    """Drops the records py4j logs (on the root logger, with the traceback) when a Ctrl-C
    interrupts a call it was waiting on, and py4j's records after it (the interrupted
    connection's next use, the session's stop, fails too): the command says it was interrupted
    by its status."""

    interrupted = False

    def filter(self, record):
        e = record.exc_info[1] if record.exc_info else None
        for _ in range(20):  # the exception and what it arose from
            if e is None:
                break
            if isinstance(e, KeyboardInterrupt):
                self.interrupted = True
            e = e.__cause__ or e.__context__
        return not (self.interrupted and f"{os.sep}py4j{os.sep}" in (record.pathname or ""))


def _quiet_interrupted_calls():
    """_NoInterruptTracebacks on the loggers py4j writes to (a logger's filters see only the
    records made on it, not its children's)."""
    root = logging.getLogger()
    if any(isinstance(f, _NoInterruptTracebacks) for f in root.filters):
        return
    quiet = _NoInterruptTracebacks()
    for name in ("", "py4j", "py4j.java_gateway", "py4j.clientserver", "py4j.protocol"):
        logging.getLogger(name).addFilter(quiet)


def _quiet_accumulator_server(sc):
    """pyspark's accumulator server (a socketserver thread in the driver) prints a traceback when
    its connection from the JVM ends mid-message, as it does when the JVM is killed: the run's
    one line (_user_message) says that, so such an end is not printed; anything else still is."""
    server = getattr(sc, "_accumulatorServer", None)
    if server is None:
        return
    loud = server.handle_error

    def handle_error(request, client_address):
        if not isinstance(sys.exc_info()[1], (EOFError, ConnectionError)):
            loud(request, client_address)
    server.handle_error = handle_error


def _jvm_gone(e: BaseException) -> bool:
    """Whether `e` (or an exception it arose from) says the driver lost its JVM: py4j's
    network error, or a refused or reset connection to the gateway."""
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if type(e).__name__ == "Py4JNetworkError" or isinstance(e, ConnectionError):
            return True
        e = e.__cause__ or e.__context__
    return False


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
    local = (master or "local[*]").startswith("local")
    java = driver_java_options(log4j, local)
    archive = Archive(java)  # the classes Spark loads, from a file a first run wrote
    b = (SparkSession.builder.appName("binlog-grammar pipeline").master(master or "local[*]")
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.driver.extraJavaOptions", f"{java} {archive.options}".strip())
         .config("spark.log.structuredLogging.enabled", "false")
         .config("spark.sql.session.timeZone", "UTC"))
    if local:
        b = b.config("spark.pyspark.python", sys.executable)  # workers import this package
    main = threading.current_thread() is threading.main_thread()
    sigint = signal.getsignal(signal.SIGINT) if main else None
    try:
        spark = b.getOrCreate()
    except BaseException:
        archive.finish(None)  # its lock taken back
        raise
    if sigint is not None:
        # pyspark's SIGINT handler cancels the jobs through py4j from inside the handler, while
        # the main thread waits on the same connection: py4j logs tracebacks of the reentrant
        # call. The command's own handler (the CLI's: KeyboardInterrupt, exit 130) instead; the
        # session's stop ends the jobs
        signal.signal(signal.SIGINT, sigint)
    _quiet_interrupted_calls()
    spark.sparkContext.setLogLevel(level.upper())
    _quiet_accumulator_server(spark.sparkContext)
    if not (master or "local[*]").startswith("local"):
        # a cluster's workers may lack the package: ship it with the job (spark/shipping.py),
        # before the data source is registered (its functions carry the includes of that time)
        from .shipping import ship

        ship(spark)
    return spark, archive


def driver_java_options(log4j: str, local: bool) -> str:
    """The driver JVM's options: the log4j configuration, and for a local master (the JVM runs
    the whole job) a throughput collector, which a batch job is better served by than G1's short
    pauses (6% off a run over the 127 MB benchmark binlog, nothing on the 1 GB one:
    docs/benchmarks.md), unless the environment picks a collector (two stop the JVM at start)."""
    java = f"-Dlog4j.configurationFile=file:{log4j}"
    chosen = any("GC" in os.environ.get(v, "") for v in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
                                                          "JDK_JAVA_OPTIONS"))
    return java + " -XX:+UseParallelGC" if local and not chosen else java


__all__ = ["run_pipeline", "PipelineError"]
