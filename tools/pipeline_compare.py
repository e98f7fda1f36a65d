"""Compare two `binlog-grammar pipeline` output folders: every dataset's rows (changes/,
undecoded/, each snapshots/D.T, _snapshot_rows/; maps with their entries in order) and Spark
schema, and the state file. For checking that a change to the pipeline keeps its output (the
files' names differ from run to run: rows are compared, not files).

    python3 tools/pipeline_compare.py OUT_A OUT_B

Exit status 0 when they hold the same, 1 with the first differences otherwise. Not a test.
"""
from __future__ import annotations

import argparse
import json
import os
import sys


def _rows(spark, path):
    df = spark.read.parquet(path)
    rows = sorted(json.dumps(r.asDict(recursive=True), default=repr) for r in df.collect())
    return df.schema.simpleString(), rows


def _datasets(root):
    out = []
    for kind in ("changes", "undecoded", "_snapshot_rows"):
        if os.path.isdir(os.path.join(root, kind)):
            out.append(kind)
    snaps = os.path.join(root, "snapshots")
    if os.path.isdir(snaps):
        out += [f"snapshots/{t}" for t in sorted(os.listdir(snaps))]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_a", help="a pipeline's --output folder")
    ap.add_argument("out_b", help="another one")
    args = ap.parse_args()
    a, b = args.out_a, args.out_b
    for d in (a, b):
        if not os.path.isfile(os.path.join(d, "_binlog_state.json")):
            sys.exit(f"pipeline_compare: {d}: not a pipeline's output folder (no _binlog_state.json)")
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("FATAL")
    bad = 0
    sa, sb = _datasets(a), _datasets(b)
    if sa != sb:
        print(f"datasets differ: {sa} / {sb}")
        bad += 1
    for d in sa:
        if d not in sb:
            continue
        (ta, ra), (tb, rb) = _rows(spark, os.path.join(a, d)), _rows(spark, os.path.join(b, d))
        same = ta == tb and ra == rb
        print(f"{d}: {len(ra)} / {len(rb)} rows, {'same' if same else 'DIFFERENT'}")
        if not same:
            bad += 1
            if ta != tb:
                print(f"  schema {ta}\n      / {tb}")
            print(f"  first rows only in A: {[x for x in ra if x not in set(rb)][:2]}")
            print(f"  first rows only in B: {[x for x in rb if x not in set(ra)][:2]}")
    with open(os.path.join(a, "_binlog_state.json")) as fa, \
            open(os.path.join(b, "_binlog_state.json")) as fb:
        same = json.load(fa) == json.load(fb)
    print(f"state: {'same' if same else 'DIFFERENT'}")
    bad += not same
    spark.stop()
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
