"""Binlogs on Spark: the `binlog` data source and the pipeline job.

Needs the `spark` extra (`pip install 'binlog-grammar[spark]'`: pyspark 4 and pyarrow, which
Spark's Python data sources use to hand rows to the JVM) and Java 17.

    from binlog_grammar.spark import register
    register(spark)
    df = spark.read.format("binlog").load("/var/lib/mysql/mariadb-bin.0*")
    df.groupBy("db", "table", "op").count().show()
    orders = spark.read.format("binlog").option("table", "shop.orders").load(paths)
    orders.select("op", "after.id", "after.amount").show()

`binlog-grammar pipeline --input PATH... --output DIR` (binlog_grammar.spark.pipeline) writes the
change log and per-table snapshots as Parquet.

## Schema (one row per changed row)

| column | type | what |
|---|---|---|
| op | string | `c` insert, `u` update, `d` delete |
| before | map<string,string> | the before image (updates, deletes), else NULL |
| after | map<string,string> | the after image (inserts, updates), else NULL |
| source | struct | file, pos (of the rows event), end_log_pos, server_id, gtid, timestamp (seconds), db, table, table_id, event_type, tx_seq (transaction number over the whole input, 1-based), row (index of the row in its event) |
| ts_ms | bigint | timestamp * 1000 |
| db, table | string | the table the row belongs to |

This is the Debezium envelope of `binlog-grammar dump --format jsonl` (dump.change_record), row for
row, plus `db` and `table`. An image maps each column name (`@1`, `@2`... when the binlog has no
names and no schema is given) to the JSON text of the value's documented JSON form
(dump.json_value, dump.image_json): numbers as numbers, DECIMAL as a string of its digits, text as
a JSON string (in the server's character set when the binlog gives no charsets; bytes that do not
decode written `\\xNN`, without the dump's `text_base64`), binary as base64, dates and times as ISO
text, a MySQL JSON column as a JSON string of the document's text, NULL as `null`. So types
survive across tables: `parse_json(after['amount'])` is a Spark VARIANT, `variant_get(...,
'$', 'decimal(10,2)')` a decimal. A column absent from the image (binlog_row_image=MINIMAL or
NOBLOB) has no key. With the option `table` (`db.table`), `before` and `after` are typed structs
instead, one field per column: see binlog_grammar.spark.typed for the type mapping.

With the option `image_format` `json`, `before` and `after` are strings instead: each image as one
JSON object, its keys in column order, each value the same JSON text the map form holds
(`{"id":3,"seen":null,"balance":"0.00"}`; NULL when there is no image). Spark reads it with
`parse_json(after)` (a VARIANT: `variant_get(parse_json(after), '$.balance', 'decimal(10,2)')`)
or `get_json_object(after, '$.balance')`. Spark takes such rows in with less work than maps
(one string per image instead of a key and a value per column; see "Cores and Spark settings");
the pipeline and `spark.readStream` keep the map form.

## Options

| option | default | what |
|---|---|---|
| path / load(paths) | | files, globs (matches in binlog order) or `.index` files; local or `file:` paths every worker can read |
| tables, exclude_tables | | `db.table` shell patterns, comma-separated |
| databases | | keep only these databases, comma-separated |
| start_position, stop_position | | offsets in the first / last file (as mysqlbinlog) |
| start_datetime, stop_datetime | | ISO date-times (UTC unless an offset is given); event timestamps, start inclusive, stop exclusive |
| include_gtids, exclude_gtids | | GTID sets (MySQL `uuid:1-5`, MariaDB `d-s-n`) |
| verify_checksum | true | check every CRC32 |
| table | | `db.table`: typed images for this table only (its columns from its first TABLE_MAP_EVENT) |
| schema | | a JSON/YAML schema file (or inline JSON) for binlogs without full metadata: column names, signedness, charsets, members, primary key (rows.load_schemas) |
| split_bytes | 67108864 | cut files larger than this at transaction boundaries |
| min_partitions | 0 | lower the split size (not below 1 MiB) so the input makes about this many splits |
| specs | | folders of extra spec files (binlog_grammar.codegen.grammar.use_specs), comma-separated |
| content | changes | `tables`: one row per distinct table definition instead (db, table, columns JSON, primary_key, full_metadata, file, file_index, pos) |
| image_format | map | `json`: `before` and `after` as JSON object strings (see above); not with `table` |

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
it runs). The JVM's part is large: on tools/bench_spark.py's 120 MB binlog (311,727 row changes
in 27 splits) it is 40-50% of the job's CPU time, about 1.5-2.5 s of JVM beside 2.2-2.5 s of Python
(less the longer the JVM has run). With `local[1]` it runs on another CPU than the one Python
worker, so one Spark core keeps about 1.5 CPUs busy: give each core (executor cores, local[N])
about 1.5 CPUs for all of them to work at full speed.

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


__all__ = ["register"]
