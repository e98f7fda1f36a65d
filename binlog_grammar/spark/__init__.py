"""Binlogs on Spark: the `binlog` data source and the pipeline job.

Needs the `spark` extra (`pip install 'binlog-grammar[spark]'`: pyspark 4 and pyarrow, which
Spark's Python data sources use to hand rows to the JVM) and Java 17.

    df = spark.read.format("binlog").load("/var/lib/mysql/mariadb-bin.0*")  # or a folder, an index
    df.groupBy("db", "table", "op").count().show()
    orders = spark.read.format("binlog").option("table", "shop.orders").load(paths)
    orders.select("op", "after.id", "after.amount").show()

`binlog-grammar pipeline --input PATH... --output DIR` (binlog_grammar.spark.pipeline) writes the
change log and per-table snapshots as Parquet.

## Schema and options

docs/spark.md documents them for users: the inputs (files, folders, globs, index files), every
option with its default (options.OPTIONS, which refuses any other), the damage rules
(skip_damaged, mode, spark.sql.files.ignoreCorruptFiles), the change rows field by field in their
three image forms (map, json, typed: binlog_grammar.spark.typed), the raw rows of rows events
not decoded (rows_raw, undecoded), and the rows of `content` `tables`. Spark 4 finds the source
without register() through the top-level module pyspark_binlog.

## Partitions

One partition per split: every file is a split, and a binlog v4 file larger than `split_bytes` is
cut at the first transaction boundary after every `split_bytes` bytes, found by a header-only
scan (binlog_grammar.spark.split). Each split starts at a transaction boundary, so its
TABLE_MAP_EVENTs come with it, and carries the offset of its file's FORMAT_DESCRIPTION_EVENT,
which the worker reads first. The rows of a split are those the plain reader gives for the same
events; partitions are in input order.

## Cores and Spark settings

A task runs in two processes: the Python worker reads its split and hands Arrow batches over,
and the JVM turns them into Spark rows (it also schedules the tasks and compiles its own code as
it runs). With the compiled backend the worker's batches are made in C (spark/arrow_rows.py: the
images' buffers written by the row loop, wrapped by pyarrow), so the JVM's part is now the larger
one: on tools/bench_spark.py's 127 MB binlog (258,547 row changes in 28 splits) about 2.0-2.5 s
of JVM CPU beside 1.5-1.7 s of Python (the Python side was 3.7-4.1 s when it built every row's
map in Python). With `local[1]` the JVM can work on another CPU beside the one Python worker,
though they overlap only in part (1.0-1.2 CPUs busy on average in that benchmark): give each
core (executor cores, local[N]) a little more than one CPU for all of them to work at full
speed. Each task also costs a fixed part in both processes
(tens of milliseconds of JVM CPU, a few of Python): splits much smaller than a core's share of
the input cost more than they balance.

- `spark.python.unix.domain.socket.enabled=true` (Linux, macOS): Spark talks to its Python
  workers over loopback TCP by default, and every task then waits about 40 ms on the connection;
  over Unix domain sockets it does not (that binlog on `local[1]`: 4.1 s, 3.3 s with the
  setting). Worth it with many splits; the pipeline, with few large partitions, gains nothing
  measurable and keeps Spark's default (with the setting a worker may print a BrokenPipeError
  traceback when the session stops).
- `image_format` `json`: about 10% less JVM time than maps (the same binlog on `local[2]`:
  2.44 s with maps, 2.26 s as JSON).
- Python workers are reused between tasks (`spark.python.worker.reuse`, Spark's default): a
  worker loads the grammar and compiles its readers once; after its first task the data source
  moves them out of the cyclic garbage collector's sight (gc.freeze), since PySpark runs a full
  collection after every task.
"""
from __future__ import annotations

from .options import DEFAULT_SPLIT_BYTES  # noqa: F401 - where it was (plain Python, no pyspark)


def register(spark) -> None:
    """Register the `binlog` format with a SparkSession."""
    from .datasource import BinlogDataSource

    spark.dataSource.register(BinlogDataSource)


def ship(spark, path=None) -> str:
    """Ship the package with the session's jobs (binlog_grammar.spark.shipping): for clusters
    whose workers do not have it installed."""
    from .shipping import ship as _ship

    return _ship(spark, path)


__all__ = ["register", "ship"]
