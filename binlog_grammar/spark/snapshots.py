"""The per-table snapshots of the pipeline (binlog_grammar.spark.pipeline): the latest row of every
primary key, folded from the previous snapshot and this run's changes in binlog order (file, then
offset, then row in its event), in Spark.
"""
from __future__ import annotations


def write_snapshots(spark, fs, stage, defs, order, summary) -> tuple:
    """Fold the changes staged under `stage`/changes into the previous snapshot rows (the output's
    _snapshot_rows/): `stage`/snapshot_rows, and per table touched `stage`/snapshots/D.T typed.
    Counts the changes per table and op into `summary`. Returns (the tables touched, rows per
    table), or ([], None) when the run has no changes."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as S

    changes_path = stage + "/read/kind=changes"
    prev_path = fs.join("_snapshot_rows")
    if not fs.files(changes_path):
        return [], None
    ch = spark.read.parquet(changes_path)
    for r in ch.groupBy("db", "table", "op").count().collect():
        summary.tables.setdefault(f"{r.db}.{r.table}", {})[r.op] = r["count"]
    keymap = F.create_map(*[x for name, d in sorted(defs.items())
                            for x in (F.lit(name), F.array(*[F.lit(k) for k in d["key"]]))])
    fileidx = F.create_map(*[x for p, i in sorted(order.items())
                             for x in (F.lit(p), F.lit(i))])
    name = F.concat_ws(".", F.col("db"), F.col("table"))
    keycols = F.element_at(keymap, name)

    def key_of(img, fallback=None):
        if fallback is None:
            return F.to_json(F.transform(keycols, lambda k: F.element_at(img, k)))
        return F.to_json(F.transform(keycols, lambda k: F.coalesce(F.element_at(img, k),
                                                                   F.element_at(fallback, k))))

    mtype = S.MapType(S.StringType(), S.StringType())
    nomap = F.lit(None).cast(mtype)
    empty = F.create_map().cast(mtype)

    def ev(k, img, alive, arrival):
        return F.struct(k.alias("k"), img.alias("img"), F.lit(alive).alias("alive"),
                        F.lit(arrival).alias("arrival"))

    kb = key_of(F.col("before"))
    ka = key_of(F.col("after"), F.col("before"))
    events = F.when(F.col("op") == "c", F.array(ev(ka, F.col("after"), True, True))) \
        .when(F.col("op") == "d", F.array(ev(kb, nomap, False, False))) \
        .when(kb != ka, F.array(ev(kb, nomap, False, False),
                                ev(ka, F.map_concat(F.coalesce(F.col("before"), empty),
                                                    F.col("after")), True, True))) \
        .otherwise(F.array(ev(ka, F.col("after"), True, False)))
    new = (ch.select("db", "table",
                     F.element_at(fileidx, F.col("source.file")).cast("long").alias("o1"),
                     F.col("source.pos").alias("o2"), F.col("source.row").cast("long").alias("o3"),
                     F.explode(events).alias("e"))
           .select("db", "table", "o1", "o2", "o3", F.col("e.k").alias("key"),
                   F.col("e.img").alias("img"), F.col("e.alive").alias("alive"),
                   F.col("e.arrival").alias("arrival")))
    if fs.files(prev_path):
        prev = spark.read.parquet(prev_path)
        prev = prev.select("db", "table", F.lit(-1).cast("long").alias("o1"),
                           F.lit(0).cast("long").alias("o2"), F.lit(0).cast("long").alias("o3"),
                           key_of(F.col("row")).alias("key"), F.col("row").alias("img"),
                           F.lit(True).alias("alive"), F.lit(True).alias("arrival"))
        new = prev.unionByName(new)
    folded = (new.groupBy("db", "table", "key")
              .agg(F.array_sort(F.collect_list(F.struct("o1", "o2", "o3", "alive", "arrival",
                                                        "img")), _by_order).alias("evs"))
              .select("db", "table", "key", F.aggregate(
                  "evs", F.struct(F.lit(False).alias("alive"), empty.alias("row")),
                  lambda acc, x: F.struct(
                      x["alive"].alias("alive"),
                      F.when(~x["alive"], empty).when(x["arrival"], x["img"])
                      .otherwise(F.map_concat(acc["row"], x["img"])).alias("row"))).alias("s"))
              .where(F.col("s.alive"))
              .select("db", "table", "key", F.col("s.row").alias("row")))
    folded.write.mode("overwrite").parquet(stage + "/snapshot_rows")
    rows = spark.read.parquet(stage + "/snapshot_rows")
    sizes = {f"{r.db}.{r.table}": r["count"]
             for r in rows.groupBy("db", "table").count().collect()}
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
    return touched, sizes


def _typed_snapshot(rows, d, where):
    """Write the snapshot rows of one table with its typed columns (binlog_grammar.spark.typed)."""
    from .typed import converter, struct_type, typed_from_texts

    schema = struct_type(d["columns"])
    convs = [(c["name"], converter(c)) for c in d["columns"]]
    names = [c["name"] for c in d["columns"]]

    def to_typed(rows):
        for r in rows:
            t = typed_from_texts(r["row"] or {}, convs)
            yield tuple(t[n] for n in names)

    rdd = rows.sortWithinPartitions("key").select("key", "row").rdd.mapPartitions(to_typed)
    typed = rows.sparkSession.createDataFrame(rdd, schema, verifySchema=False)
    typed.write.mode("overwrite").parquet(where)


def _by_order(a, b):
    """Comparator of snapshot events: binlog order (file, offset, row)."""
    from pyspark.sql import functions as F

    out = F.lit(0)
    for k in ("o3", "o2", "o1"):
        out = F.when(a[k] < b[k], -1).when(a[k] > b[k], 1).otherwise(out)
    return out
