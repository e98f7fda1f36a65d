"""`binlog-grammar pipeline`: binlogs to a Parquet change log and per-table snapshots, on Spark
(binlog_grammar.spark.pipeline)."""
from __future__ import annotations

from .options import int_in, schema_file


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
    pl.set_defaults(func=run)


def run(args) -> int:
    from ..spark.pipeline import run_pipeline

    return run_pipeline(args)
