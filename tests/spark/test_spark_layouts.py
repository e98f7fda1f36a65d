"""A table whose layout changes and changes back inside one split: ALTER TABLE between row
changes (layout A, then B, then A again), with another table's rows in between, written by a real
MariaDB. format("binlog") must decode each row with the layout of its own TABLE_MAP_EVENT,
content `tables` must say the table's last definition is A again (the pipeline takes each
table's latest definition from it), and the pipeline's snapshot must have A's columns and the
server's rows. The pipeline reads those definitions among the change rows (the internal option
with_tables): they must be content `tables`' rows, on both backends, here and on the samples and
the corpus."""
from __future__ import annotations

import json

import pytest

from helpers.paths import ROOT, corpus_files
from helpers.services import need_mariadb
from helpers.spark import load, pipeline_run

SAMPLES = sorted(str(p) for p in (ROOT / "samples").glob("mariadb-*"))

pytestmark = [pytest.mark.spark, pytest.mark.server]

A = ["id", "name"]
B = ["id", "name", "extra"]
SORTED = {"A": sorted(A), "B": sorted(B)}

STATEMENTS = """
CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20)) ENGINE=InnoDB;
CREATE TABLE u (k INT PRIMARY KEY, v INT) ENGINE=InnoDB;
INSERT INTO t VALUES (1, 'one'), (2, 'two');
INSERT INTO u VALUES (1, 10);
ALTER TABLE t ADD COLUMN extra INT;
INSERT INTO t VALUES (3, 'three', 33);
BEGIN; UPDATE t SET name = 'uno', extra = 11 WHERE id = 1; INSERT INTO u VALUES (2, 20);
UPDATE t SET extra = 22 WHERE id = 2; COMMIT;
ALTER TABLE t DROP COLUMN extra;
INSERT INTO t VALUES (4, 'four');
BEGIN; UPDATE u SET v = 11 WHERE k = 1; UPDATE t SET name = 'dos' WHERE id = 2;
DELETE FROM t WHERE id = 3; INSERT INTO u VALUES (3, 30); COMMIT;
"""

# each row change of t in binlog order: op, the columns of its images, its after image's name
EXPECTED_T = [("c", "A", "one"), ("c", "A", "two"), ("c", "B", "three"), ("u", "B", "uno"),
              ("u", "B", "two"), ("c", "A", "four"), ("u", "A", "dos"), ("d", "A", None)]


@pytest.fixture(scope="module")
def binlogs(tmp_path_factory):
    from binlog_grammar.testing import mariadb

    need_mariadb()
    with mariadb.MariaDB(["--binlog-row-metadata=FULL", "--binlog-format=ROW"]) as db:
        db.sql("CREATE DATABASE test; USE test;" + STATEMENTS)
        want = db.sql("SELECT id, name FROM t ORDER BY id", database="test")
        files = db.binlogs()
        keep = tmp_path_factory.mktemp("layouts")
        out = []
        for f in files:
            (keep / f.name).write_bytes(f.read_bytes())
            out.append(str(keep / f.name))
    rows = [tuple(line.split("\t")) for line in want.splitlines()]
    return out, rows


def test_rows_decode_with_their_own_layout(spark, binlogs):
    files, _ = binlogs
    df = load(spark, files)
    assert df.rdd.getNumPartitions() == 1  # one split holds A, B and A again
    rows = [r for r in df.collect() if r.table == "t"]
    got = [(r.op, sorted(r.after or r.before), json.loads((r.after or {}).get("name", "null")))
           for r in rows]
    assert got == [(op, SORTED[layout], name) for op, layout, name in EXPECTED_T]
    # the other table, between them, keeps its own layout
    assert all(sorted(r.after or r.before) == ["k", "v"] for r in df.collect() if r.table == "u")


def test_tables_content_ends_with_the_last_layout(spark, binlogs):
    files, _ = binlogs
    rows = [r for r in load(spark, files, content="tables").collect() if r.table == "t"]
    layouts = [[c["name"] for c in json.loads(r.columns)] for r in sorted(rows, key=lambda r: r.pos)]
    assert layouts == [A, B, A]  # each time the table takes a definition


def test_pipeline_snapshot_has_the_last_layout(spark, binlogs, tmp_path):
    files, want = binlogs
    rc, text = pipeline_run(spark, files, tmp_path / "out")
    assert rc == 0, text
    state = json.loads((tmp_path / "out" / "_binlog_state.json").read_text())
    assert [c["name"] for c in state["tables"]["test.t"]["columns"]] == A
    df = spark.read.parquet(str(tmp_path / "out" / "snapshots" / "test.t"))
    assert df.columns == A
    assert sorted((str(r.id), r.name) for r in df.collect()) == sorted(want)


def test_schema_history_lists_each_layout_once(spark, binlogs, tmp_path):
    """schema_history/: each definition a table takes, where it takes it (A, B, A again for t),
    once however the file is split (each split restates its tables' definitions); a later run
    continues from the state's definitions: the samples' tables are new there, t and u are not."""
    files, _ = binlogs
    out = tmp_path / "out"
    rc, text = pipeline_run(spark, files, out, split_bytes=400)
    assert rc == 0 and "schema_history/" in text, text
    assert json.loads((out / "_binlog_state.json").read_text())["files"][0]["size"] > 4 * 400

    def history():
        rows = [json.loads(line) for f in sorted((out / "schema_history").glob("*.jsonl"))
                for line in f.read_text().splitlines()]
        return sorted(((r["run"], r["file"], r["pos"]), r["db"], r["table"],
                       [c["name"] for c in r["columns"]], r["primary_key"]) for r in rows)
    first = history()
    assert [(db, t, cols, pk) for _, db, t, cols, pk in first] == [
        ("test", "t", A, ["id"]), ("test", "u", ["k", "v"], ["k"]), ("test", "t", B, ["id"]),
        ("test", "t", A, ["id"])]
    assert all(at[0] == 1 and at[1] == files[0] for at, *_ in first)
    # where each takes it: the first rows event with that definition (its TABLE_MAP_EVENT
    # before it)
    firsts, seen = [], {}
    for r in sorted(load(spark, files).collect(), key=lambda r: (r.source.pos, r.source.row)):
        layout = sorted(r.after or r.before)
        if seen.get(r.table) != layout:
            firsts.append((r.source.pos, r.table))
            seen[r.table] = layout
    assert [(at[2], t) for at, _, t, _, _ in first] == firsts
    rc, text = pipeline_run(spark, [*files, *SAMPLES], out)
    assert rc == 0, text
    second = history()
    assert second[:4] == first
    assert sorted((db, t) for (run, _, _), db, t, _, _ in second[4:] if run == 2) == \
        [("shop", "customers"), ("shop", "orders")]
    assert len(second) == 6


def _read(paths, backend, **options):
    """Every row of the data source's read in this process, as a Spark worker reads it."""
    import pyarrow as pa

    from binlog_grammar import native
    from binlog_grammar.spark.datasource import BinlogDataSource

    opts = {"paths": json.dumps([str(p) for p in paths]), "split_bytes": "2048",
            **{k: str(v) for k, v in options.items()}}
    native.select(backend)
    try:
        ds = BinlogDataSource(opts)
        reader = ds.reader(ds.schema())
        batches = [b for p in reader.partitions() for b in reader.read(p)]
    finally:
        native.select(None)
    if batches and isinstance(batches[0], tuple):  # content tables: rows
        names = ds.schema().fieldNames()
        return [dict(zip(names, b)) for b in batches]
    return pa.Table.from_batches(batches, schema=batches[0].schema).to_pylist() if batches else []


def _by_table(defs) -> dict:
    out = {}
    for d in defs:
        out.setdefault(d[:2], []).append(d[2:])
    return out


def _definitions_among_changes(paths):
    """(the definition rows of with_tables, as content tables has them; the other rows), on the
    compiled backend, checked equal to the Python one's."""
    rows = _read(paths, "auto", with_tables="true")
    assert rows == _read(paths, "python", with_tables="true")
    defs = []
    for r in rows:
        if r["op"] == "t":
            d = json.loads(r["undecoded"])
            defs.append((r["db"], r["table"], d["columns"], d["primary_key"], d["full_metadata"]))
    return defs, [r for r in rows if r["op"] != "t"]


@pytest.mark.parametrize("which", ["layouts", "samples", "corpus"])
def test_with_tables_gives_the_definitions_among_the_changes(binlogs, which):
    if which == "layouts":
        sets = [binlogs[0]]
    elif which == "samples":
        sets = [SAMPLES]
    else:
        sets = [[str(f)] for f in corpus_files() if "corrupt" not in f.name]
        if not sets:
            pytest.skip("no corpus")
    seen = 0
    for paths in sets:
        try:
            tables = [(r["db"], r["table"], r["columns"], r["primary_key"], r["full_metadata"])
                      for r in _read(paths, "python", content="tables")]
            defs, rest = _definitions_among_changes(paths)
        except Exception:  # noqa: BLE001 - a damaged file: refused with the option too
            with pytest.raises(Exception):
                _read(paths, "python")
            continue
        # each table's definitions in order (a transaction may map its tables in another order
        # than it changes them: NDB's binlogs)
        assert _by_table(defs) == _by_table(tables), paths
        assert rest == _read(paths, "auto")
        seen += len(defs)
    assert seen > 0
