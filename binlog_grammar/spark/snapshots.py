"""The per-table snapshots of the pipeline (binlog_grammar.spark.pipeline): the latest row of every
primary key, folded from the previous snapshot and this run's changes in binlog order (file, then
offset, then row in its event), in Spark's engine: no Python in the fold, but for the tables below.

Each change is one event of its key (a key-changing update two: the old key dies, the new one
arrives); an insert, a delete and a key change are resets (the key's row starts again from the
event's image, or from nothing), an update overlays its image. So a key's row is its events from
its last reset on, their images merged in binlog order: a window over the key finds the last reset,
the events before it are dropped, and one aggregate merges the rest (their images' entries sorted by
position and flattened; with spark.sql.mapKeyDedupPolicy LAST_WIN the latest value of a column wins,
at the column's first place, as map_concat's would).

A key change is a reset only when its images hold every column of the table (binlog_row_image
FULL): under MINIMAL (and NOBLOB, for its blobs) the before image is the old key alone, and the
new key's row is the old key's row as it stood, with the before and after images over it, which
depends on the old key's events (and on key changes before them). A table with such a key change
in the run is folded in binlog order instead, in one Python worker per table (_ordered_fold:
holding that table's rows while it folds), from its previous snapshot rows and its changes.

The folded rows are written partitioned by
db and table; each table's typed snapshot is its rows' typed columns in SQL
(binlog_grammar.spark.typed_sql), the rows SQL does not convert exactly appended by
binlog_grammar.spark.typed's converters in Python.
"""
from __future__ import annotations

from .output_folder import table_name

STATIC_KEYS = 200  # up to this many tables, the keys are plain column expressions (no lambdas)


def write_snapshots(spark, fs, stage, defs, order, summary) -> tuple:
    """Fold the changes staged under `stage`/changes into the previous snapshot rows (the output's
    _snapshot_rows/): `stage`/snapshot_rows, and per table touched `stage`/snapshots/D.T typed.
    Counts the changes per table and op into `summary`. Returns (the tables touched, rows per
    table), or ([], None) when the run has no changes."""
    from pyspark.sql import Observation, Window
    from pyspark.sql import functions as F
    from pyspark.sql import types as S

    changes_path = stage + "/read/kind=changes"
    prev_path = fs.join("_snapshot_rows")
    if not fs.files(changes_path):
        return [], None
    ch = spark.read.parquet(changes_path)
    for r in ch.groupBy("db", "table", "op").count().collect():
        summary.tables.setdefault(table_name(r.db, r.table), {})[r.op] = r["count"]
    summary.stage("change counts")
    key_of = _key_function(defs)
    fileidx = F.create_map(*[x for p, i in sorted(order.items())
                             for x in (F.lit(p), F.lit(i))])
    entries = S.ArrayType(S.StructType([S.StructField("key", S.StringType(), False),
                                        S.StructField("value", S.StringType())]), False)
    none = F.array().cast(entries)

    def ev(k, img, alive, reset):
        return F.struct(k.alias("k"), img.alias("e"), F.lit(alive).alias("alive"),
                        F.lit(reset).alias("reset"))

    def entries_of(img):
        return F.coalesce(F.map_entries(img), none)

    kb = key_of(F.col("before"))
    ka = key_of(F.col("after"), F.col("before"))
    events = F.when(F.col("op") == "c", F.array(ev(ka, entries_of(F.col("after")), True, True))) \
        .when(F.col("op") == "d", F.array(ev(kb, none, False, True))) \
        .when(kb != ka, F.array(ev(kb, none, False, True),
                                ev(ka, F.concat(entries_of(F.col("before")),
                                                entries_of(F.col("after"))), True, True))) \
        .otherwise(F.array(ev(ka, entries_of(F.col("after")), True, False)))
    position = [F.element_at(fileidx, F.col("source.file")).cast("long").alias("o1"),
                F.col("source.pos").alias("o2"), F.col("source.row").cast("long").alias("o3")]
    # the tables with a key change whose images lack some of their columns, seen as the fold
    # reads the changes (_moved_tables): folded again in binlog order below
    moved = Observation()
    # (the columns the fold reads picked first: Spark prunes no column below an observation)
    new = (ch.select("db", "table", "op", "before", "after", "source")
           .observe(moved, _moved_tables(defs, kb, ka))
           .select("db", "table", *position, F.explode(events).alias("ev"))
           .select("db", "table", "o1", "o2", "o3", F.col("ev.k").alias("key"),
                   F.col("ev.e").alias("e"), F.col("ev.alive").alias("alive"),
                   F.col("ev.reset").alias("reset")))
    prev = spark.read.parquet(prev_path) if fs.files(prev_path) else None
    if prev is not None:  # the previous snapshot's rows: each its key's first event
        prev = prev.select("db", "table", F.lit(-1).cast("long").alias("o1"),
                           F.lit(0).cast("long").alias("o2"), F.lit(0).cast("long").alias("o3"),
                           key_of(F.col("row")).alias("key"), entries_of(F.col("row")).alias("e"))
        new = prev.select("*", F.lit(True).alias("alive"), F.lit(True).alias("reset")) \
            .unionByName(new)
    at = F.struct("o1", "o2", "o3")
    last_reset = F.max(F.when(F.col("reset"), at)).over(Window.partitionBy("db", "table", "key"))
    folded = (new.withColumn("lr", last_reset)
              .where(F.col("lr").isNull() | (at >= F.col("lr")))
              .groupBy("db", "table", "key")
              .agg(F.max(F.struct("o1", "o2", "o3", "alive")).alias("last"),
                   F.sort_array(F.collect_list(F.struct("o1", "o2", "o3", "e"))).alias("evs"))
              .where(F.col("last.alive"))
              .select("db", "table", "key",
                      F.map_from_entries(F.flatten(F.col("evs.e"))).alias("row")))
    # partitioned by table, so each table's typed snapshot reads its own rows only
    where = stage + "/snapshot_rows"
    folded.write.mode("overwrite").partitionBy("db", "table").parquet(where)
    written = S.StructType([folded.schema["key"], folded.schema["row"], folded.schema["db"],
                            folded.schema["table"]])
    ordered = sorted({(t["db"], t["table"]) for t in moved.get["moved"] or ()})
    if ordered:
        in_order = F.lit(False)
        for db, table in ordered:
            in_order = in_order | ((F.col("db") == db) & (F.col("table") == table))
        moves = ch.where(in_order).select("db", "table", *position, "op", kb.alias("kb"),
                                          ka.alias("ka"), entries_of(F.col("before")).alias("b"),
                                          entries_of(F.col("after")).alias("a"))
        if prev is not None:  # their previous snapshot rows come first
            moves = prev.where(in_order).select(
                "db", "table", "o1", "o2", "o3", F.lit("p").alias("op"), F.col("key").alias("kb"),
                F.col("key").alias("ka"), none.alias("b"), F.col("e").alias("a")) \
                .unionByName(moves)
        rows = (moves.repartition("db", "table")
                .sortWithinPartitions("db", "table", "o1", "o2", "o3")
                .rdd.mapPartitions(_ordered_fold))
        done = spark.createDataFrame(rows, S.StructType([
            S.StructField("db", S.StringType()), S.StructField("table", S.StringType()),
            S.StructField("key", S.StringType()), S.StructField("e", entries)]))
        (spark.read.schema(written).parquet(where).where(~in_order)
         .unionByName(done.select("key", F.map_from_entries("e").alias("row"), "db", "table"))
         .write.mode("overwrite").partitionBy("db", "table").parquet(where + "_in_order"))
        fs.delete(where)
        fs.rename(where + "_in_order", where)
    summary.stage("fold")
    # read with the schema written: a run whose changes delete every row it touches writes no
    # partition at all, and Parquet cannot infer a schema from no file
    rows = spark.read.schema(written).parquet(where)
    sizes = {table_name(r.db, r.table): r["count"]
             for r in rows.groupBy("db", "table").count().collect()}
    summary.stage("snapshot sizes")
    touched = sorted(t for t, ops in summary.tables.items() if ops)
    jobs = []
    for t in touched:
        d = defs.get(t)
        if d is None:
            summary.notes.append(f"{t}: no table definition; no snapshot")
            continue
        jobs.append((rows.where((F.col("db") == d["db"]) & (F.col("table") == d["table"])),
                     d, stage + "/snapshots/" + t))
    # one small job per table: run a few at once (Spark schedules concurrent jobs)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=4) as pool:
        for f in [pool.submit(_typed_snapshot, *j) for j in jobs]:
            f.result()
    summary.stage("typed snapshots")
    return touched, sizes


def _moved_tables(defs, kb, ka):
    """The aggregate of the tables (db, table) with a key change whose images lack some of the
    table's columns (binlog_row_image MINIMAL, or NOBLOB's blobs): its new key's row is the old
    key's row with the images over it, which the fold's events do not know."""
    from pyspark.sql import functions as F

    width = F.element_at(F.create_map(*[x for d in defs.values()
                                        for x in (F.array(F.lit(d["db"]), F.lit(d["table"])),
                                                  F.lit(len(d["columns"])))]),
                         F.array(F.col("db"), F.col("table"))) if defs else F.lit(None)
    no_names = F.array().cast("array<string>")
    # cheap tests first (Spark's AND stops at the first false): a FULL before image holds them all
    moved = (F.col("op") == "u") & (F.size("before") < width) & (kb != ka) & \
        (F.size(F.array_union(F.coalesce(F.map_keys("before"), no_names),
                              F.coalesce(F.map_keys("after"), no_names))) < width)
    return F.collect_set(F.when(moved, F.struct("db", "table"))).alias("moved")


def _ordered_fold(rows):
    """The snapshot rows of the tables whose key changes need the old key's row: their change
    rows (and previous snapshot rows, op "p") in binlog order, table by table, folded as the
    module docstring says, a key change's new row starting from the old key's row. One Python
    worker holds a table's rows while it folds them."""
    table, live = None, {}
    for r in rows:
        if (r.db, r.table) != table:
            yield from _live(table, live)
            table, live = (r.db, r.table), {}
        if r.op == "d":
            live.pop(r.kb, None)
        elif r.op in ("c", "p"):
            live[r.ka] = dict(r.a)
        elif r.kb == r.ka:  # an update that keeps the key: its image over the row
            row = live.setdefault(r.ka, {})
            row.update(r.a)
        else:  # the old key's row, the before image and the after image over it
            row = live.pop(r.kb, {})
            row.update(r.b)
            row.update(r.a)
            live[r.ka] = row
    yield from _live(table, live)


def _live(table, live):
    for key, row in live.items():
        yield (table[0], table[1], key, list(row.items()))


def _key_function(defs):
    """img[, fallback] -> the key column: the JSON array of the key columns' texts of the image
    (a column the image lacks taken from `fallback`), by the row's table's key in `defs`; NULL
    for a table `defs` does not know. Plain column expressions per table (Spark compiles them)
    up to STATIC_KEYS tables, a lookup with lambdas beyond."""
    from pyspark.sql import functions as F

    def value(img, fallback, k):
        v = F.element_at(img, F.lit(k))
        return v if fallback is None else F.coalesce(v, F.element_at(fallback, F.lit(k)))

    if len(defs) <= STATIC_KEYS:
        def key_of(img, fallback=None):
            out = None
            for name, d in sorted(defs.items()):
                k = F.to_json(F.array(*[value(img, fallback, c) for c in d["key"]]))
                cond = (F.col("db") == F.lit(d["db"])) & (F.col("table") == F.lit(d["table"]))
                out = F.when(cond, k) if out is None else out.when(cond, k)
            return out if out is not None else F.lit(None).cast("string")
        return key_of
    keymap = F.create_map(*[x for name, d in sorted(defs.items())
                            for x in (F.array(F.lit(d["db"]), F.lit(d["table"])),
                                      F.array(*[F.lit(k) for k in d["key"]]))])
    keycols = F.element_at(keymap, F.array(F.col("db"), F.col("table")))

    def key_of(img, fallback=None):
        if fallback is None:
            return F.to_json(F.transform(keycols, lambda k: F.element_at(img, k)))
        return F.to_json(F.transform(keycols, lambda k: F.coalesce(F.element_at(img, k),
                                                                   F.element_at(fallback, k))))
    return key_of


def _typed_snapshot(rows, d, where):
    """Write the snapshot rows of one table with its typed columns (binlog_grammar.spark.typed):
    in Spark's expressions (binlog_grammar.spark.typed_sql) where they convert a row's texts
    exactly, counting the rows they do not; those (none, for most tables) are then appended
    converted by the converters in Python."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    from .typed import converter, struct_type, typed_from_texts
    from .typed_sql import typed_columns

    schema = struct_type(d["columns"])
    values, exact = typed_columns(d["columns"], F.col("row"))
    seen = Observation()
    (rows.select(exact.alias("exact"), *values).observe(seen, F.count_if(~F.col("exact")).alias("n"))
     .where(F.col("exact")).drop("exact").write.mode("overwrite").parquet(where))
    if not seen.get["n"]:
        return
    convs = [(c["name"], converter(c)) for c in d["columns"]]
    names = [c["name"] for c in d["columns"]]

    def to_typed(rows):
        for r in rows:
            t = typed_from_texts(r["row"] or {}, convs)
            yield tuple(t[n] for n in names)

    rdd = rows.where(~exact).select("row").rdd.mapPartitions(to_typed)
    rows.sparkSession.createDataFrame(rdd, schema, verifySchema=False).write.mode("append") \
        .parquet(where)
