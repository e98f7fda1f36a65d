"""`binlog-grammar pipeline`: binlogs to a Parquet change log and per-table snapshots, on Spark
(binlog_grammar.spark.pipeline)."""
from __future__ import annotations

from .envelopes import key_value
from .options import add_quiet_option, int_in, schema_file


def add(sub):
    pl = sub.add_parser("pipeline", help="binlogs to a Parquet change log and per-table snapshots, on Spark")
    pl.add_argument("--input", nargs="+", required=True, metavar="PATH",
                    help="binlog files, globs or .index files (any filesystem Spark reads)")
    pl.add_argument("--output", required=True, help="output folder (changes/, snapshots/, state)")
    pl.add_argument("--master", default="local[*]", help="Spark master (default: local[*])")
    pl.add_argument("--table", action="append", default=[], help="keep only db.table (repeatable)")
    pl.add_argument("--exclude-table", action="append", default=[], help="drop db.table (repeatable)")
    pl.add_argument("--schema", type=schema_file,
                    help="JSON or YAML file of table schemas (names, keys) for binlogs without full "
                         "metadata")
    pl.add_argument("--no-checksum", action="store_true", help="do not verify CRC32s")
    pl.add_argument("--split-bytes", type=int_in(0, what="a size in bytes"), default=64 << 20,
                    help="split files larger than this at transaction boundaries (default 64 MiB)")
    pl.add_argument("--debezium", action="store_true",
                    help="also write debezium/: every row change as the Debezium MySQL/MariaDB "
                         "connector emits it (dump --format jsonl --envelope debezium), "
                         "partitioned as changes/")
    pl.add_argument("--debezium-option", action="append", default=[], type=key_value,
                    metavar="KEY=VALUE",
                    help="a Debezium connector property for --debezium (repeatable; those of "
                         "dump's --debezium-option but snapshot.mode)")
    add_quiet_option(pl)
    pl.set_defaults(func=run)


def run(args) -> int:
    import threading

    from ..spark.pipeline import run_pipeline
    from .reading import Progress, progress_wanted

    bar, stop, watcher = Progress(progress_wanted(args, False), "pipeline"), threading.Event(), None
    total = _local_bytes(args.input) if bar.enabled else 0
    if total:
        watcher = threading.Thread(target=_watch, args=(bar, total, stop), daemon=True)
        watcher.start()
    try:
        return run_pipeline(args)
    finally:
        stop.set()
        if watcher is not None:
            watcher.join()
        bar.close()


def _local_bytes(inputs) -> int:
    """The bytes of the inputs that are local files (globs expanded); 0 when none is."""
    import glob
    import os

    return sum(os.path.getsize(p) for i in inputs for p in glob.glob(i) if os.path.isfile(p))


def _watch(bar, total, stop):
    """The pipeline's progress from Spark's status tracker: the input's bytes times the share of
    the running stages' tasks that are done (Spark reads the splits, not this process)."""
    while not stop.wait(0.2):
        try:
            from pyspark import SparkContext

            sc = SparkContext._active_spark_context
            if sc is None:
                continue
            tracker, done, tasks = sc.statusTracker(), 0, 0
            for sid in tracker.getActiveStageIds():
                info = tracker.getStageInfo(sid)
                if info is not None:
                    done, tasks = done + info.numCompletedTasks, tasks + info.numTasks
            if tasks:
                bar(total * done // tasks, total)
        except Exception:  # noqa: BLE001 - a context starting or stopping: no bar this time
            continue
