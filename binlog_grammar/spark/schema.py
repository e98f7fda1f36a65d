"""The schema of the `binlog` data source's rows (see the package docstring): the Debezium-like
change rows, their `source` struct, and the rows of `content` `tables`."""
from __future__ import annotations

from pyspark.sql import types as S

MAP = S.MapType(S.StringType(), S.StringType(), True)
JSON_IMAGE = S.StringType()  # option image_format=json: an image as one JSON object text
SOURCE = S.StructType([
    S.StructField("file", S.StringType(), False),
    S.StructField("pos", S.LongType(), False),
    S.StructField("end_log_pos", S.LongType(), False),
    S.StructField("server_id", S.LongType(), False),
    S.StructField("gtid", S.StringType(), True),
    S.StructField("timestamp", S.LongType(), False),
    S.StructField("db", S.StringType(), True),  # NULL: a raw rows event no TABLE_MAP maps
    S.StructField("table", S.StringType(), True),
    S.StructField("table_id", S.LongType(), False),
    S.StructField("event_type", S.StringType(), False),
    S.StructField("tx_seq", S.LongType(), True),
    S.StructField("row", S.IntegerType(), False),
])
TABLES = S.StructType([
    S.StructField("db", S.StringType(), False),
    S.StructField("table", S.StringType(), False),
    S.StructField("columns", S.StringType(), False),
    S.StructField("primary_key", S.ArrayType(S.StringType(), False), False),
    S.StructField("full_metadata", S.BooleanType(), False),
    S.StructField("file", S.StringType(), False),
    S.StructField("file_index", S.IntegerType(), False),
    S.StructField("pos", S.LongType(), False),
])


def change_schema(image=MAP) -> S.StructType:
    """The schema of the change rows; `image` is the map type or a table's typed struct. A rows
    event whose rows are not decoded (its TABLE_MAP_EVENT says too little, or it is damaged and
    skip_damaged is on) is one row with no images, its row-image bytes in `rows_raw` and the
    reason in `undecoded` (NULL for every decoded row), as dump --format jsonl writes it."""
    return S.StructType([
        S.StructField("op", S.StringType(), False),
        S.StructField("before", image, True),
        S.StructField("after", image, True),
        S.StructField("source", SOURCE, False),
        S.StructField("ts_ms", S.LongType(), False),
        S.StructField("db", S.StringType(), True),
        S.StructField("table", S.StringType(), True),
        S.StructField("rows_raw", S.BinaryType(), True),
        S.StructField("undecoded", S.StringType(), True),
    ])


# envelope debezium: each line `dump --format jsonl --envelope debezium` writes, with the event
# it comes from (NULL for a line written at the end of a split) and that event's table (NULL for
# the records of no table's rows: a transaction's BEGIN and END, schema changes) and time
DEBEZIUM = S.StructType([
    S.StructField("value", S.StringType(), False),
    S.StructField("file", S.StringType(), True),
    S.StructField("pos", S.LongType(), True),
    S.StructField("line", S.IntegerType(), False),
    S.StructField("db", S.StringType(), True),
    S.StructField("table", S.StringType(), True),
    S.StructField("ts_ms", S.LongType(), True),
])
