"""The `binlog` data source: binlog files as a DataFrame of row changes (Spark 4 Python Data Source).

    from binlog_grammar.spark import register
    register(spark)                                   # spark.dataSource.register(BinlogDataSource)
    df = spark.read.format("binlog").load("/var/lib/mysql/mariadb-bin.0*")
    typed = (spark.read.format("binlog").option("table", "shop.orders")
             .load(["mariadb-bin.000001", "mariadb-bin.000002"]))

See the package docstring (binlog_grammar/spark/__init__.py) for the schema, the options and the
partitioning rule. This module is the DataSource class only: the options are checked in
options.py, the schema is schema.py's, batch.py reads the splits (with binlog_grammar.spark.split for
the plan and the split reader, binlog_grammar.spark.typed for the values) and streaming.py a live
server.
"""
from __future__ import annotations

from pyspark.sql.datasource import DataSource

from .batch import BinlogReader, configure_storage, find_table, storage_settings, task_error, use_grammar
from .options import ReadOptions
from .schema import DEBEZIUM, JSON_IMAGE, MAP, TABLES, change_schema


class BinlogDataSource(DataSource):
    """`spark.read.format("binlog")`: row changes of MySQL/MariaDB binlog files."""

    @classmethod
    def name(cls) -> str:
        return "binlog"

    def schema(self):
        from .streaming import is_stream, stream_schema

        if is_stream(self.options):  # no files: a live server (spark.readStream; see .streaming)
            return stream_schema(self.options)
        try:
            o = ReadOptions(self.options)
        except ValueError as e:
            raise task_error(e) from None
        use_grammar(o.specs)
        configure_storage(storage_settings(self.options))  # s3:// etc. (spark/fs.py)
        if o.content == "tables":
            return TABLES
        if o.envelope == "debezium":
            return DEBEZIUM
        if o.table:
            from .typed import struct_type

            defs = find_table(o)
            return change_schema(struct_type(defs))
        return change_schema(JSON_IMAGE if o.image_format == "json" else MAP)

    def reader(self, schema):
        return BinlogReader(self.options, schema)

    def streamReader(self, schema):
        """`spark.readStream.format("binlog")`: a live server's binlog (binlog_grammar.spark.streaming)."""
        from .streaming import BinlogStreamReader

        return BinlogStreamReader(self.options, schema)
