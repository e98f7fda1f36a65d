"""The per-table snapshots of the pipeline (binlog_grammar.spark.pipeline): the latest row of every
primary key, folded from the previous snapshot and this run's changes in binlog order (file, then
offset, then row in its event), in Spark's engine: no Python in the fold.

Each change is one event of its key (a key-changing update two: the old key dies, the new one
arrives); an insert, a delete and a key change are resets (the key's row starts again from the
event's image, or from nothing), an update overlays its image. So a key's row is its events from
its last reset on, their images merged in binlog order (with spark.sql.mapKeyDedupPolicy LAST_WIN
the latest value of a column wins, at the column's first place, as map_concat's would).

Most keys need no merge: when every image of a key holds the same columns in the same order (full
row images, binlog_row_image=FULL, and no ALTER between them), the merge is the key's last image. So
one aggregate per key picks its last event's image and tells whether its images' column lists are
all equal (their least and greatest list the same); those keys are written from it. Only when some
are not (the partial images of MINIMAL/NOBLOB, an ALTER, a key change among other events) does a
second job merge theirs: a window over the key finds the last reset, the events before it are
dropped, and one aggregate merges the rest (their images' entries sorted by position and
flattened). The changes per table and op and the snapshot rows per table are counted by
Observations of these jobs (up to OBSERVED_TABLES tables; by jobs of their own beyond). The folded
rows are written partitioned by db and table; each table's typed snapshot is its rows' typed columns in SQL
(binlog_grammar.spark.typed_sql), the rows SQL does not convert exactly appended by
binlog_grammar.spark.typed's converters in Python.
"""
from __future__ import annotations

STATIC_KEYS = 200  # up to this many tables, the keys are plain column expressions (no lambdas)
OBSERVED_TABLES = 32  # up to this many tables, the rows per table are counted by Observations


def write_snapshots(spark, fs, stage, defs, order, summary) -> tuple:
    """Fold the changes staged under `stage`/changes into the previous snapshot rows (the output's
    _snapshot_rows/): `stage`/snapshot_rows, and per table touched `stage`/snapshots/D.T typed.
    Counts the changes per table and op into `summary`. Returns (the tables touched, rows per
    table), or ([], None) when the run has no changes."""
    from pyspark.sql import functions as F

    changes_path = stage + "/read/kind=changes"
    if not fs.files(changes_path):
        return [], None
    prev_path = fs.join("_snapshot_rows")
    prev = spark.read.parquet(prev_path) if fs.files(prev_path) else None
    key_of = _key_function(defs)
    tables = sorted(defs) if len(defs) <= OBSERVED_TABLES else None
    ch = spark.read.parquet(changes_path)
    counted = _Counts(ch, tables, defs, ("c", "u", "d"))
    if tables is not None:
        ch = counted.observed
    else:  # too many tables to count in the fold's own job: a job of its own
        for r in ch.groupBy("db", "table", "op").count().collect():
            summary.tables.setdefault(f"{r.db}.{r.table}", {})[r.op] = r["count"]
        summary.stage("change counts")
    where = stage + "/snapshot_rows"
    # the keys whose events' images all hold the same columns (full row images, no ALTER in
    # between): the row is the last image, one pick per key; the others below
    from pyspark.sql import Observation

    left = Observation()
    fast = _last_images(_events(ch, prev, key_of, order))
    kept = _Counts(fast.observe(left, F.count_if(~F.col("uniform")).alias("slow"))
                   .where(F.col("alive") & F.col("uniform")).select("db", "table", "key", "row"),
                   tables, defs)
    kept.observed.write.mode("overwrite").partitionBy("db", "table").parquet(where)
    counts = counted.get() if tables is not None else None
    sizes = kept.get() if tables is not None else None
    if tables is not None and counts is None:  # a table without definition: counted apart
        ch = spark.read.parquet(changes_path)
        counts = {}
        for r in ch.groupBy("db", "table", "op").count().collect():
            counts.setdefault(f"{r.db}.{r.table}", {})[r.op] = r["count"]
    for name, ops in (counts or {}).items():
        summary.tables.setdefault(name, {}).update(ops)
    if left.get["slow"]:  # the images of the others merged in binlog order
        merged = _Counts(_merged(_events(spark.read.parquet(changes_path), prev, key_of, order)),
                         tables if sizes is not None else None, defs)
        merged.observed.write.mode("append").partitionBy("db", "table").parquet(where)
        more = merged.get() if sizes is not None else None
        if more is None:
            sizes = None
        else:
            for name, n in more.items():
                sizes[name] = sizes.get(name, 0) + n
    summary.stage("fold")
    rows = spark.read.parquet(where)
    if sizes is None:
        sizes = {f"{r.db}.{r.table}": r["count"]
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


class _Counts:
    """The rows of `df` counted per table of `tables` (and per value of column op among `ops`)
    by an Observation of the job that runs `observed`, instead of a job of their own; a row of a
    table outside `tables` (or NULL) makes get() None. With `tables` None, nothing is
    observed."""

    def __init__(self, df, tables, defs, ops=None):
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        self.tables, self.ops, self.observed = tables, ops, df
        if tables is None:
            return
        self.seen = Observation()
        known, counts = F.lit(False), []
        for i, name in enumerate(tables):
            d = defs[name]
            cond = (F.col("db") == d["db"]) & (F.col("table") == d["table"])
            known = known | cond
            for op in ops or (None,):
                counts.append(F.count_if(cond if op is None else cond & (F.col("op") == op))
                              .alias(f"n{len(counts)}"))
        self.observed = df.observe(self.seen, F.count_if(~known).alias("other"), *counts)

    def get(self):
        got = self.seen.get
        if got["other"]:
            return None
        out, i = {}, 0
        for name in self.tables:
            per = {}
            for op in self.ops or (None,):
                if got[f"n{i}"]:
                    per[op] = got[f"n{i}"]
                i += 1
            if per:
                out[name] = per if self.ops else per[None]
        return out


def _events(ch, prev, key_of, order):
    """The events of the changes `ch` and of the previous snapshot rows `prev` (or None): db,
    table, the position o1 (file), o2 (offset), o3 (row), key, the image's entries e, their
    column names ks (NULL for a delete), alive and reset."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as S

    fileidx = F.create_map(*[x for p, i in sorted(order.items())
                             for x in (F.lit(p), F.lit(i))])
    entries = S.ArrayType(S.StructType([S.StructField("key", S.StringType(), False),
                                        S.StructField("value", S.StringType())]), False)
    none = F.array().cast(entries)

    def ev(k, img, names, alive, reset):
        return F.struct(k.alias("k"), img.alias("e"), names.alias("ks"),
                        F.lit(alive).alias("alive"), F.lit(reset).alias("reset"))

    def entries_of(img):
        return F.coalesce(F.map_entries(img), none)

    def names_of(img):
        return F.coalesce(F.map_keys(img), F.array().cast("array<string>"))

    nothing = F.lit(None).cast("array<string>")
    before, after = F.col("before"), F.col("after")
    kb = key_of(before)
    ka = key_of(after, before)
    events = F.when(F.col("op") == "c",
                    F.array(ev(ka, entries_of(after), names_of(after), True, True))) \
        .when(F.col("op") == "d", F.array(ev(kb, none, nothing, False, True))) \
        .when(kb != ka, F.array(ev(kb, none, nothing, False, True),
                                ev(ka, F.concat(entries_of(before), entries_of(after)),
                                   F.concat(names_of(before), names_of(after)), True, True))) \
        .otherwise(F.array(ev(ka, entries_of(after), names_of(after), True, False)))
    new = (ch.select("db", "table",
                     F.element_at(fileidx, F.col("source.file")).cast("long").alias("o1"),
                     F.col("source.pos").alias("o2"), F.col("source.row").cast("long").alias("o3"),
                     F.explode(events).alias("ev"))
           .select("db", "table", "o1", "o2", "o3", F.col("ev.k").alias("key"),
                   F.col("ev.e").alias("e"), F.col("ev.ks").alias("ks"),
                   F.col("ev.alive").alias("alive"), F.col("ev.reset").alias("reset")))
    if prev is None:
        return new
    prev = prev.select("db", "table", F.lit(-1).cast("long").alias("o1"),
                       F.lit(0).cast("long").alias("o2"), F.lit(0).cast("long").alias("o3"),
                       key_of(F.col("row")).alias("key"), entries_of(F.col("row")).alias("e"),
                       names_of(F.col("row")).alias("ks"),
                       F.lit(True).alias("alive"), F.lit(True).alias("reset"))
    return prev.unionByName(new)


def _last_images(events):
    """Per key: its last event's image as the row (row), whether that event is alive, and
    whether every image of the key holds the same column names in the same order (uniform):
    then the merge of its images from its last reset on is that last image (each column's last
    value at its first place is the last image's)."""
    from pyspark.sql import functions as F

    at = F.struct("o1", "o2", "o3")
    return (events.groupBy("db", "table", "key")
            .agg(F.max_by(F.struct("alive", "e"), at).alias("last"),
                 F.min("ks").alias("k0"), F.max("ks").alias("k1"))
            .select("db", "table", "key", F.col("last.alive").alias("alive"),
                    F.col("k0").eqNullSafe(F.col("k1")).alias("uniform"),
                    F.map_from_entries(F.col("last.e")).alias("row")))


def _merged(events):
    """Per key whose images are not uniform (_last_images), alive at its last event: its row, the
    images of its events from its last reset on merged in binlog order."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    at = F.struct("o1", "o2", "o3")
    w = Window.partitionBy("db", "table", "key")
    return (events.withColumn("lr", F.max(F.when(F.col("reset"), at)).over(w))
            .withColumn("k0", F.min("ks").over(w)).withColumn("k1", F.max("ks").over(w))
            .where(~F.col("k0").eqNullSafe(F.col("k1")))
            .where(F.col("lr").isNull() | (at >= F.col("lr")))
            .groupBy("db", "table", "key")
            .agg(F.max(F.struct("o1", "o2", "o3", "alive")).alias("last"),
                 F.sort_array(F.collect_list(F.struct("o1", "o2", "o3", "e"))).alias("evs"))
            .where(F.col("last.alive"))
            .select("db", "table", "key",
                    F.map_from_entries(F.flatten(F.col("evs.e"))).alias("row")))


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
                            for x in (F.lit(name), F.array(*[F.lit(k) for k in d["key"]]))])
    keycols = F.element_at(keymap, F.concat_ws(".", F.col("db"), F.col("table")))

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
