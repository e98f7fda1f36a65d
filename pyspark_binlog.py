"""The `binlog` data source for Spark 4 to find on its own.

When a session first reads a Python data source by name, Spark 4 looks through the Python path for
top-level modules whose names start with `pyspark_` and registers the `DefaultSource` each one
defines (pyspark.sql.worker.lookup_data_sources). This module, installed beside the package
(pyproject.toml: py-modules), is that entry: `spark.read.format("binlog").load(path)` works in a new
session without binlog_grammar.spark.register(spark). It imports only the DataSource class (no
grammar, no reading), since Spark imports it in every session that looks data sources up.
"""
from binlog_grammar.spark.datasource import BinlogDataSource as DefaultSource

__all__ = ["DefaultSource"]
