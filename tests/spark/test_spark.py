"""The `binlog` Spark data source and the pipeline job, on a real local Spark (local[2]).

- The DataFrame equals, row for row, the row changes of the plain reader (stream.open_stream(...)
  .events(), in the dump's Debezium form) on the bundled samples and on the real MySQL corpus;
  damaged corpus files fail with the plain reader's message.
- A file cut into many partitions (tiny split_bytes) gives the same rows as one partition.
- The typed form (option `table`) holds the typed.converter value of every column.
- The pipeline is idempotent and incremental on the samples.
- With a real MariaDB server: a seeded random workload (inserts, updates including primary-key
  changes, deletes, multi-statement and rolled-back transactions) on three tables, one with a
  two-column key, binlog_row_metadata=FULL, small binlog files; the pipeline runs while the server
  still writes its last file, again after more work (resuming that file), again with nothing new,
  and once more over everything into a fresh output with tiny splits. Each time every table's
  snapshot equals SELECT * of the table, and the incremental change log equals the one-run one.

Skipped when pyspark/pyarrow or Java are missing, and the server part when mariadbd is, unless
BINLOG_GRAMMAR_REQUIRE_SERVICES=1 (then they fail).
"""
from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import time

import pytest

from binlog_grammar.errors import BinlogError
from binlog_grammar.binlog.stream import Filters, open_stream

from helpers.paths import MARIADB_SAMPLES as SAMPLES, ROOT, corpus_files, needs_corpus
from helpers.services import need_mariadb
from helpers.spark import (SEED, TABLES, Workload, change_log, df_records, load, pipeline_args,
                           pipeline_run, plain_records)

pytestmark = pytest.mark.spark



def test_schema_is_the_documented_envelope(spark):
    df = load(spark, SAMPLES)
    assert df.columns == ["op", "before", "after", "source", "ts_ms", "db", "table", "rows_raw",
                          "undecoded"]
    assert df.schema["before"].dataType.simpleString() == "map<string,string>"
    assert df.schema["source"].dataType.names == [
        "file", "pos", "end_log_pos", "server_id", "gtid", "timestamp", "db", "table", "table_id",
        "event_type", "tx_seq", "row"]


def test_samples_equal_the_plain_reader(spark):
    expected = plain_records(SAMPLES)
    assert len(expected) == 13
    assert df_records(load(spark, SAMPLES)) == expected
    # a glob and an index-free list give the same; NULL is the JSON text null
    rows = load(spark, str(ROOT / "samples" / "mariadb-10.11-sample.*")).collect()
    assert [r.source.pos for r in rows] == [r["source"]["pos"] for r in expected]
    linus = next(r for r in rows if r.op == "c" and r.after["id"] == "3")
    assert linus.after["seen"] == "null" and linus.after["balance"] == '"0.00"'


def test_many_partitions_give_the_rows_of_one(spark):
    one = load(spark, SAMPLES, split_bytes=0)
    many = load(spark, SAMPLES, split_bytes=1)
    assert one.rdd.getNumPartitions() == len(SAMPLES)
    assert many.rdd.getNumPartitions() > 10
    assert df_records(many) == df_records(one)


@needs_corpus
def test_corpus_equals_the_plain_reader(spark):
    good, damaged = [], {}
    for f in corpus_files():
        try:
            plain_records([str(f)])
            good.append(str(f))
        except BinlogError as e:
            damaged[str(f)] = str(e)
    expected = plain_records(good)
    assert len(expected) > 30
    assert df_records(load(spark, good)) == expected
    big = [p for p in good if os.path.getsize(p) > 100_000]
    assert big
    many = load(spark, big, split_bytes=1)
    assert many.rdd.getNumPartitions() > len(big) + 5
    assert df_records(many) == plain_records(big)
    for path, message in sorted(damaged.items()):
        with pytest.raises(Exception) as err:
            load(spark, [path]).collect()
        assert f"[binlog-grammar] {message}" in str(err.value), path


@pytest.mark.parametrize("options,flt", [
    ({"tables": "shop.orders"}, Filters(tables=["shop.orders"])),
    ({"exclude_tables": "shop.ord*"}, Filters(exclude_tables=["shop.ord*"])),
    ({"start_position": 3000, "stop_position": 700}, Filters(start_position=3000, stop_position=700)),
    ({"include_gtids": "0-1-5,0-1-10"}, None),
])
def test_filters(spark, options, flt):
    if flt is None:
        from binlog_grammar.binlog.stream import GtidSet

        flt = Filters(include_gtids=GtidSet(options["include_gtids"]))
    expected = plain_records(SAMPLES, flt)
    assert df_records(load(spark, SAMPLES, split_bytes=1, **options)) == expected


def test_typed_table(spark):
    from binlog_grammar.spark.typed import column_def, converter, typed_image

    df = load(spark, SAMPLES, table="shop.customers")
    types = {f.name: f.dataType.simpleString() for f in df.schema["after"].dataType.fields}
    assert types == {"id": "int", "name": "string", "city": "string", "balance": "decimal(12,2)",
                     "born": "date", "seen": "timestamp_ntz", "note": "string",
                     "flags": "array<string>", "tier": "string", "ratio": "double",
                     "small": "int", "big": "bigint"}
    rows = df.collect()
    expected = []
    for se in open_stream(SAMPLES).events():
        for ch in se.changes:
            if (ch.db, ch.table) == ("shop", "customers"):
                convs = [(c.name, c.name, converter(column_def(c))) for c in ch.columns]
                expected.append((ch.op, typed_image(ch.before, convs), typed_image(ch.after, convs)))
    got = [(r.op, r.before and r.before.asDict(), r.after and r.after.asDict()) for r in rows]
    assert got == expected
    emilie = rows[3].after
    assert emilie.name == "Émilie 😀" and emilie.balance == decimal.Decimal("99999999.99")
    assert emilie.born is None and emilie.seen is None  # MySQL's zero dates
    assert rows[0].after.flags == ["a", "c"] and rows[0].after.big == -9223372036854775808
    orders = load(spark, SAMPLES, table="shop.orders").collect()
    placed = orders[0].after.placed  # TIMESTAMP(3): an instant, shown in local time
    assert placed.astimezone(dt.timezone.utc) == dt.datetime(2024, 3, 1, 10, 0, 1, 1000, dt.timezone.utc) \
        or placed == dt.datetime(2024, 3, 1, 10, 0, 1, 1000)
    assert orders[0].after.id == decimal.Decimal(1)  # BIGINT UNSIGNED


def test_image_format_json(spark):
    """image_format=json: each image is one JSON object text holding the map form's texts, keys
    in column order; the rows equal the plain reader's, split anywhere."""
    expected = plain_records(SAMPLES)
    df = load(spark, SAMPLES, image_format="json", split_bytes=1)
    assert df.rdd.getNumPartitions() > 10
    assert df.columns == ["op", "before", "after", "source", "ts_ms", "db", "table", "rows_raw",
                          "undecoded"]
    assert [df.schema[k].dataType.simpleString() for k in ("before", "after")] == ["string"] * 2
    texts = df.collect()
    got = []
    for row in texts:
        d = row.asDict(recursive=True)
        for k in ("before", "after"):
            if d[k] is not None:
                d[k] = json.loads(d[k])
        got.append(d)
    assert got == expected
    order = [(ch.before and list(ch.before), ch.after and list(ch.after))
             for se in open_stream(SAMPLES).events() for ch in se.changes]  # column order
    for m, t, keys in zip(load(spark, SAMPLES).collect(), texts, order):
        for k, names in zip(("before", "after"), keys):
            want = None if m[k] is None else \
                "{" + ",".join(f"{json.dumps(c)}:{m[k][c]}" for c in names) + "}"
            assert t[k] == want
    linus = (df.where("op = 'c' and `table` = 'customers' and get_json_object(after, '$.id') = '3'")
             .selectExpr("variant_get(parse_json(after), '$.balance', 'decimal(12,2)') as b",
                         "get_json_object(after, '$.seen') as seen").collect())
    assert [(r.b, r.seen) for r in linus] == [(decimal.Decimal("0.00"), None)]
    expected_orders = plain_records(SAMPLES, Filters(tables=["shop.orders"]))
    orders = load(spark, SAMPLES, image_format="JSON", tables="shop.orders").collect()
    assert [json.loads(r.after) if r.after else None for r in orders] == \
        [r["after"] for r in expected_orders]


@needs_corpus
def test_image_format_json_corpus(spark):
    """The JSON form of every readable corpus file, split small, equals the plain reader."""
    good = []
    for f in corpus_files():
        try:
            plain_records([str(f)])
            good.append(str(f))
        except BinlogError:
            pass
    expected = plain_records(good)
    got = []
    for row in load(spark, good, image_format="json", split_bytes=4096).collect():
        d = row.asDict(recursive=True)
        for k in ("before", "after"):
            if d[k] is not None:
                d[k] = json.loads(d[k])
        got.append(d)
    assert len(got) > 30 and got == expected


@pytest.mark.parametrize("options", [{}, {"debezium.provide.transaction.metadata": "true",
                                          "debezium.decimal.handling.mode": "string"}])
def test_debezium_envelope_is_the_dumps(spark, options):
    """envelope=debezium: the lines of the output registry's debezium format (what dump --format
    jsonl --envelope debezium writes), in order, split anywhere."""
    from binlog_grammar.output.formats import lines_of

    opts = {k[len("debezium."):]: v for k, v in options.items()}
    expected = list(lines_of(open_stream(SAMPLES, raw_rows=True).events(), "debezium",
                             options=opts))
    assert len(expected) >= 13
    df = load(spark, SAMPLES, envelope="debezium", split_bytes=1, **options)
    assert df.columns == ["value", "file", "pos", "line", "db", "table", "ts_ms"]
    assert df.rdd.getNumPartitions() > 10
    rows = df.collect()
    assert [r.value for r in rows] == expected
    # each change record with its event's table and time; a transaction's BEGIN and END have none
    for r in rows:
        v = json.loads(r.value)
        if "op" in v:
            assert (r.db, r.table, r.ts_ms) == (v["source"]["db"], v["source"]["table"],
                                                v["source"]["ts_ms"]), r
        else:
            assert (r.db, r.table, v["status"]) in {(None, None, "BEGIN"), (None, None, "END")}, r


def test_tables_content(spark):
    rows = load(spark, SAMPLES, content="tables").collect()
    names = {(r.db, r.table) for r in rows}
    assert names == {("shop", "customers"), ("shop", "orders")}
    cust = next(r for r in rows if r.table == "customers")
    assert cust.primary_key == ["id"] and cust.full_metadata
    assert [c["name"] for c in json.loads(cust.columns)][:3] == ["id", "name", "city"]


@needs_corpus
def test_schema_option_names_columns(spark):
    """ver_trunk_row_v2.001 has no column metadata: the schema names the columns and gives the
    second one a charset, so it reads as text."""
    path = [str(f) for f in corpus_files() if f.name == "ver_trunk_row_v2.001"]
    schema = json.dumps({"test.t1": {"columns": [{"name": "id"}, {"name": "s", "charset": "latin1"}],
                                     "primary_key": ["id"]}})
    rows = load(spark, path, schema=schema).collect()
    assert rows and all(set((r.after or r.before)) == {"id", "s"} for r in rows)
    assert rows[0].after == {"id": "0", "s": '"one"'}
    typed = load(spark, path, schema=schema, table="test.t1")
    assert typed.schema["after"].dataType.simpleString() == "struct<id:int,s:string>"
    assert typed.collect()[0].after.s == "one"


def test_bad_options_and_inputs(spark, tmp_path):
    with pytest.raises(Exception, match=r"\[binlog-grammar\] .*missing.000001: No such file"):
        load(spark, [str(tmp_path / "missing.000001")]).collect()
    with pytest.raises(Exception, match="not an integer"):
        load(spark, SAMPLES, split_bytes="lots").collect()
    with pytest.raises(Exception, match="no TABLE_MAP_EVENT of it"):
        load(spark, SAMPLES, table="shop.nope").collect()
    with pytest.raises(Exception, match="option image_format: 'xml'"):
        load(spark, SAMPLES, image_format="xml").collect()
    with pytest.raises(Exception, match="option image_format: json is a form of the untyped"):
        load(spark, SAMPLES, image_format="json", table="shop.orders").collect()


# -- the pipeline -------------------------------------------------------------------------------

def snapshot(spark, output, table):
    df = spark.read.parquet(f"{output}/snapshots/{table}")
    return df, sorted((tuple(r) for r in df.collect()), key=repr)


def test_pipeline_idempotent_and_incremental(spark, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    rc, text = pipeline_run(spark, SAMPLES, one)
    assert rc == 0, text
    assert "13 row changes" in text and "shop.customers" in text and str(one) in text
    state = json.loads((one / "_binlog_state.json").read_text())
    assert [f["consumed"] for f in state["files"]] == [os.path.getsize(p) for p in SAMPLES]
    assert state["tx_seq"] == 10 and state["runs"] == 1
    log1 = change_log(spark, one)
    snaps = {t: snapshot(spark, one, t)[1] for t in ("shop.customers", "shop.orders")}
    assert [r[0] for r in snaps["shop.customers"]] == [1, 4, 5]  # 2 deleted, 3 became 5
    assert [int(r[0]) for r in snaps["shop.orders"]] == [1, 3, 5]
    files = sorted(p.relative_to(one).as_posix() for p in one.rglob("*.parquet"))
    assert any(f.startswith("changes/db=shop/table=orders/date=") for f in files)
    # again: nothing new, nothing changes
    rc, text = pipeline_run(spark, SAMPLES, one)
    assert rc == 0 and "nothing new" in text
    assert sorted(p.relative_to(one).as_posix() for p in one.rglob("*.parquet")) == files
    # file 1, then file 2: the same change log and snapshots
    assert pipeline_run(spark, SAMPLES[:1], two)[0] == 0
    rc, text = pipeline_run(spark, SAMPLES, two)
    assert rc == 0 and "1 file(s) already done" in text
    assert change_log(spark, two) == log1
    for t, rows in snaps.items():
        assert snapshot(spark, two, t)[1] == rows
    assert json.loads((two / "_binlog_state.json").read_text())["files"] == state["files"]


def model_snapshots(paths):
    """The snapshot rules of the pipeline docstring, applied one change at a time in Python to
    the plain reader's changes: (db, table) -> sorted rows of (column, JSON text)."""
    from binlog_grammar.output.dump import ServerCharsets, with_image_forms
    from binlog_grammar.spark.typed import image_map

    keys, rows = {}, {}
    changes = []
    charsets = ServerCharsets()  # the values in the dump's forms (JSON columns, text sans charset)
    for se in open_stream(paths).events():
        charsets.see(se.event)
        if se.table is not None:  # the latest definition wins
            t = se.table
            keys[(t.db, t.table)] = t.primary_key or [c.name for c in t.columns]
        db = se.table.db if se.table is not None else None
        changes += with_image_forms(se.changes, charsets.charset(se.event.file, db))
    for ch in changes:
        name = (ch.db, ch.table)
        k = keys[name]
        table = rows.setdefault(name, {})
        before, after = image_map(ch.before), image_map(ch.after)

        def key(img, other=None):
            return tuple(img.get(c, (other or {}).get(c)) for c in k)
        if ch.op == "c":
            table[key(after)] = after
        elif ch.op == "d":
            table.pop(key(before), None)
        elif key(before) != key(after, before):
            table.pop(key(before), None)
            table[key(after, before)] = {**before, **after}
        else:
            table[key(after, before)] = {**table.get(key(after, before), {}), **after}
    return {n: sorted(sorted(r.items()) for r in t.values()) for n, t in rows.items() if t}


@needs_corpus
def test_pipeline_snapshots_follow_the_rules(spark, tmp_path):
    """Every corpus file and the samples through the pipeline (partial images of NDB tables, tables
    without a primary key, columns without names): the exact snapshot rows are the model's."""
    good = []
    for f in corpus_files():
        try:  # not the damaged files, nor those with rows not decoded (no snapshot of them)
            if all(r["undecoded"] is None for r in plain_records([str(f)])):
                good.append(str(f))
        except BinlogError:
            pass
    inputs = good + SAMPLES
    rc, text = pipeline_run(spark, inputs, tmp_path / "o")
    assert rc == 0, text
    got = {}
    for r in spark.read.parquet(str(tmp_path / "o" / "_snapshot_rows")).collect():
        got.setdefault((r.db, r.table), []).append(sorted(r.row.items()))
    assert {n: sorted(v) for n, v in got.items()} == model_snapshots(inputs)


def test_pipeline_errors_are_one_line(spark, tmp_path, capsys):
    from binlog_grammar.spark.pipeline import run_pipeline

    assert run_pipeline(pipeline_args([tmp_path / "missing.000001"], tmp_path / "o"), spark) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"binlog-grammar: pipeline: {tmp_path / 'missing.000001'}: No such file or directory"]
    bad = tmp_path / "cut.000001"
    bad.write_bytes(open(SAMPLES[0], "rb").read()[:3000])
    assert run_pipeline(pipeline_args([bad], tmp_path / "o2"), spark) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "offset 2940: WRITE_ROWS_EVENT_V1: file ends inside the event" in err[0]
    assert not (tmp_path / "o2" / "_binlog_state.json").exists()
    # an output made with other filters is refused
    assert pipeline_run(spark, SAMPLES, tmp_path / "o3")[0] == 0
    assert run_pipeline(pipeline_args(SAMPLES, tmp_path / "o3", table=["shop.orders"]), spark) == 1
    assert "other filters" in capsys.readouterr().err


def test_pipeline_command(spark, tmp_path, capsys):
    """`binlog-grammar pipeline` as the README runs it (here on the tests' Spark session)."""
    from binlog_grammar.cli import main

    rc = main(["pipeline", "--input", *SAMPLES, "--output", str(tmp_path / "out"),
               "--table", "shop.*", "--exclude-table", "shop.orders", "--split-bytes", "1000"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert "shop.customers" in out.out and "shop.orders" not in out.out
    assert f"output: {tmp_path / 'out'}" in out.out
    assert [p.name for p in (tmp_path / "out" / "snapshots").iterdir()] == ["shop.customers"]


# -- a real server ------------------------------------------------------------------------------

# SELECT expressions whose text the test turns into the snapshot's Python values
SELECTS = {
    "users": "id, HEX(name), balance, born, seen, flags, tier, score, HEX(token), "
             "UNIX_TIMESTAMP(ts), TIME_TO_SEC(dur)",
    "orders": "id, user_id, amount, HEX(note), big",
    "pairs": "a, b, v",
}


def _expected(table, text_rows):
    """SELECT text (mariadb --batch) -> the Python values the typed snapshot holds."""
    out = []
    for line in text_rows.splitlines():
        f = [None if x == "NULL" else x for x in line.split("\t")]
        if table == "users":
            born = None if f[3] in (None, "0000-00-00") else dt.date.fromisoformat(f[3])
            seen = None if f[4] in (None,) or f[4].startswith("0000") else dt.datetime.fromisoformat(f[4])
            out.append((int(f[0]), None if f[1] is None else bytes.fromhex(f[1]).decode("utf-8"),
                        None if f[2] is None else decimal.Decimal(f[2]), born, seen,
                        None if f[5] is None else sorted(x for x in f[5].split(",") if x),
                        f[6], None if f[7] is None else float(f[7]),
                        None if f[8] is None else bytes.fromhex(f[8]),
                        None if f[9] is None else int(decimal.Decimal(f[9]) * 10**6),
                        None if f[10] is None else int(decimal.Decimal(f[10]) * 10**6)))
        elif table == "orders":
            out.append((decimal.Decimal(f[0]), None if f[1] is None else int(f[1]),
                        decimal.Decimal(f[2]), None if f[3] is None else bytes.fromhex(f[3]).decode(),
                        None if f[4] is None else decimal.Decimal(f[4])))
        else:
            out.append((int(f[0]), f[1], None if f[2] is None else int(f[2])))
    return sorted(out, key=repr)


def _snapshot_values(spark, output, table):
    from pyspark.sql import functions as F

    df = spark.read.parquet(f"{output}/snapshots/test.{table}")
    if table == "users":
        df = df.select("id", "name", "balance", "born", "seen", "flags", "tier", "score", "token",
                       F.unix_micros("ts").alias("ts"), "dur")
    rows = []
    for r in df.collect():
        r = list(r)
        if table == "users":
            r[5] = None if r[5] is None else sorted(r[5])
            r[10] = None if r[10] is None else r[10] // dt.timedelta(microseconds=1)
        rows.append(tuple(r))
    return sorted(rows, key=repr)


def _check_snapshots(spark, db, output):
    for t in TABLES:
        want = _expected(t, db.sql(f"SELECT {SELECTS[t]} FROM {t}", database="test"))
        got = _snapshot_values(spark, output, t)
        assert got == want, f"snapshot of {t}: {len(got)} rows, SELECT {len(want)}; first " \
                            f"differences {[x for x in got if x not in want][:2]} / " \
                            f"{[x for x in want if x not in got][:2]}"


@pytest.mark.server
def test_pipeline_snapshots_equal_the_server(spark, tmp_path):
    from binlog_grammar.testing import mariadb

    need_mariadb()
    started = time.monotonic()
    work = Workload(SEED)
    inc, full = tmp_path / "incremental", tmp_path / "full"
    with mariadb.MariaDB(["--binlog-row-metadata=FULL", "--default-time-zone=+00:00",
                          "--max-binlog-size=32768", "--binlog-checksum=CRC32"]) as db:
        db.sql("CREATE DATABASE test CHARACTER SET utf8mb4; USE test; "
               + "; ".join(TABLES.values()) + ";")
        db.sql(work.transactions(150), database="test")
        files = db.binlogs()
        assert len(files) >= 3  # small files: the workload rotates
        # the last file is still open: read up to its last transaction boundary
        rc, text = pipeline_run(spark, files, inc)
        assert rc == 0, text
        state = json.loads((inc / "_binlog_state.json").read_text())
        assert state["files"][-1]["in_use"] and not state["files"][0]["in_use"]
        _check_snapshots(spark, db, inc)
        # more work: the open file is read on from where the last run stopped, then the new ones
        db.sql(work.transactions(150), database="test")
        files = db.binlogs()
        rc, text = pipeline_run(spark, files, inc)
        assert rc == 0 and "already done" in text, text
        _check_snapshots(spark, db, inc)
        rc, text = pipeline_run(spark, files, inc)
        assert rc == 0 and "nothing new" in text, text
        # one run over everything, in many small splits: the same change log and snapshots
        rc, text = pipeline_run(spark, files, full, split_bytes=16384)
        assert rc == 0, text
        _check_snapshots(spark, db, full)
    assert change_log(spark, full) == change_log(spark, inc)
    assert json.loads((full / "_binlog_state.json").read_text())["tx_seq"] == \
        json.loads((inc / "_binlog_state.json").read_text())["tx_seq"]
    print(f"server pipeline test: {time.monotonic() - started:.1f} s")
