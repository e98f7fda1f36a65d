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
(dump.json_value): numbers as numbers, DECIMAL as a string of its digits, text as a JSON string,
binary as base64, dates and times as ISO text, JSON columns as JSON, NULL as `null`. So types
survive across tables: `parse_json(after['amount'])` is a Spark VARIANT, `variant_get(...,
'$', 'decimal(10,2)')` a decimal. A column absent from the image (binlog_row_image=MINIMAL or
NOBLOB) has no key. With the option `table` (`db.table`), `before` and `after` are typed structs
instead, one field per column: see binlog_grammar.spark.typed for the type mapping.

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
| specs | | folders of extra spec files (binlog_grammar.grammar.use_specs), comma-separated |
| content | changes | `tables`: one row per distinct table definition instead (db, table, columns JSON, primary_key, full_metadata, file, file_index, pos) |

## Partitions

One partition per split: every file is a split, and a binlog v4 file larger than `split_bytes` is
cut at the first transaction boundary after every `split_bytes` bytes, found by a header-only
scan (binlog_grammar.spark.split). Each split starts at a transaction boundary, so its
TABLE_MAP_EVENTs come with it, and carries the offset of its file's FORMAT_DESCRIPTION_EVENT,
which the worker reads first. The rows of a split are those the plain reader gives for the same
events; partitions are in input order.
"""
from __future__ import annotations

DEFAULT_SPLIT_BYTES = 64 << 20  # the data source's split_bytes when none is given


def register(spark) -> None:
    """Register the `binlog` format with a SparkSession."""
    from .datasource import BinlogDataSource

    spark.dataSource.register(BinlogDataSource)


__all__ = ["register"]
