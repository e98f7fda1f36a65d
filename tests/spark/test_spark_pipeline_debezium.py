"""The pipeline's Debezium change table (`--debezium`), on a real local Spark (local[2]).

`debezium/` holds every line `dump --format jsonl --envelope debezium` writes for the same input
(the envelope the real Debezium connector judges: tests/debezium), with the event's file, offset
and line index, partitioned as the change log is (db, table, date; the records of no table's
rows, a transaction's BEGIN and END and a schema change, under NULL db and table). Checked
against the dump's lines for the same files: in one run with tiny splits, in two runs (one file,
then both), and on a rerun that finds nothing new (a run killed half-way:
tests/spark/test_spark_pipeline.py, whose runs all write it); and the options' errors are one
line each.
"""
from __future__ import annotations

import json

import pytest

from helpers.paths import MARIADB_SAMPLES as SAMPLES
from helpers.spark import pipeline_args, pipeline_run

pytestmark = pytest.mark.spark

OPTION_SETS = [[], [("provide.transaction.metadata", "true"), ("decimal.handling.mode", "string"),
                    ("kafka.records", "true")]]


def dump_lines(paths, options):
    """What dump --format jsonl --envelope debezium writes for the files, as (line, db, table)."""
    from binlog_grammar.binlog.stream import open_stream
    from binlog_grammar.output.formats import lines_of

    return list(lines_of(open_stream([str(p) for p in paths], raw_rows=True).events(), "debezium",
                         options=dict(options)))


def table_lines(spark, out, paths):
    """debezium/'s rows in the input's order (file, offset, line index): (value, db, table)."""
    order = {str(p): i for i, p in enumerate(paths)}
    rows = spark.read.parquet(str(out / "debezium")).collect()
    rows.sort(key=lambda r: (order[r.file], r.pos, r.line))
    return [(r.value, r.db, r.table) for r in rows]


def _named(value: str):
    """(db, table) of a Debezium line's change record (its source's); none for the records of
    no table's rows: a transaction's BEGIN and END, a schema change."""
    v = json.loads(value)
    v = v.get("value", v) if "topic" in v else v  # a Kafka record: its value (None: a tombstone)
    if v is None:
        return "tombstone"
    return (v["source"]["db"], v["source"]["table"]) if "op" in v else (None, None)


@pytest.mark.parametrize("options", OPTION_SETS, ids=["defaults", "transactions-kafka"])
def test_debezium_table_is_the_dumps_lines(spark, tmp_path, options):
    want = dump_lines(SAMPLES, options)
    assert len(want) >= 13
    one = tmp_path / "one"
    rc, text = pipeline_run(spark, SAMPLES, one, split_bytes=2000, debezium=True,
                            debezium_option=options)
    assert rc == 0, text
    assert "debezium/" in text
    got = table_lines(spark, one, SAMPLES)
    assert [v for v, _, _ in got] == want
    # each line under its record's table; a tombstone under the deleted row's table
    tables = [_named(v) for v, _, _ in got]
    for (value, db, table), named, prev in zip(got, tables, [None] + tables[:-1]):
        assert (db, table) == (prev if named == "tombstone" else named), value
    if options:
        assert (None, None) in tables  # BEGIN and END records, schema changes
    if options:
        return  # (the runs below once: the options change no run's bookkeeping)
    # two runs, one file then both: the same table
    two = tmp_path / "two"
    assert pipeline_run(spark, SAMPLES[:1], two, debezium=True, debezium_option=options)[0] == 0
    assert pipeline_run(spark, SAMPLES, two, debezium=True, debezium_option=options)[0] == 0
    assert table_lines(spark, two, SAMPLES) == got
    # a rerun finds nothing new and leaves it
    rc, text = pipeline_run(spark, SAMPLES, two, debezium=True, debezium_option=options)
    assert rc == 0 and "nothing new" in text
    assert table_lines(spark, two, SAMPLES) == got


@pytest.mark.parametrize("kw,message", [
    ({"debezium_option": [("topic.prefix", "x")]}, "--debezium-option needs --debezium"),
    ({"debezium": True, "debezium_option": [("no.such", "1")]}, "unknown Debezium option 'no.such'"),
    ({"debezium": True, "debezium_option": [("decimal.handling.mode", "exactly")]},
     "expected one of"),
    ({"debezium": True, "debezium_option": [("snapshot.mode", "initial")]},
     "the pipeline writes the records of the binlogs only"),
])
def test_debezium_options_are_checked_before_spark(tmp_path, capsys, kw, message):
    from binlog_grammar.spark.pipeline import run_pipeline

    # no Spark session given and none started: the options fail before one is needed
    assert run_pipeline(pipeline_args(SAMPLES, tmp_path / "o", **kw)) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_an_output_keeps_its_debezium_choice(spark, tmp_path):
    """An output written without --debezium has no records of its earlier runs: a run with it
    there (or with other Debezium options) is refused, as other filters are."""
    out = tmp_path / "o"
    assert pipeline_run(spark, SAMPLES[:1], out)[0] == 0
    for kw in ({"debezium": True}, {"debezium": True,
                                    "debezium_option": [("decimal.handling.mode", "string")]}):
        rc, _ = pipeline_run(spark, SAMPLES, out, **kw)
        assert rc == 1, kw
    assert not (out / "debezium").exists()
