"""Database and table names are bytes of the binlog, and hostile: the pipeline's per-table folders
must stay inside the output folder and be one per table, written by a real MariaDB.

Before output_folder.table_name, a table named `../../../../../../canary` had its typed snapshot
written beside the output folder (mode overwrite: a folder of that name deleted first), and the
tables `test`.`a.b` and `test.a`.`b` were one table "test.a.b" (one definition, one count, one
folder).
"""
from __future__ import annotations

import json

import pytest

from helpers.services import need_mariadb
from helpers.spark import pipeline_run

pytestmark = [pytest.mark.spark, pytest.mark.server]

# (database, table, its row's id); MariaDB keeps such names in its files as @XXXX escapes
TABLES = [("test", "../../../../../../canary", 1), ("test", "a.b", 2), ("test.a", "b", 3),
          ("_under", "_t", 4), ("test", "c:d#e%f*g?h=i[j]{k}^l'm\"n\\o", 5),
          ("test", "ünï ☃ name", 6), ("test", "t", 7)]


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


@pytest.fixture(scope="module")
def binlogs(tmp_path_factory):
    from binlog_grammar.testing import mariadb

    need_mariadb()
    stmts = [f"CREATE DATABASE IF NOT EXISTS {_q(db)};" for db in sorted({t[0] for t in TABLES})]
    for db, table, i in TABLES:
        stmts.append(f"CREATE TABLE {_q(db)}.{_q(table)} (id INT PRIMARY KEY, v VARCHAR(10)) "
                     "ENGINE=InnoDB;")
        stmts.append(f"INSERT INTO {_q(db)}.{_q(table)} VALUES ({i}, 'v{i}'), ({i + 100}, 'x');")
        stmts.append(f"DELETE FROM {_q(db)}.{_q(table)} WHERE id = {i + 100};")
    with mariadb.MariaDB(["--binlog-row-metadata=FULL", "--binlog-format=ROW"]) as db:
        db.sql("SET NAMES utf8mb4;\n" + "\n".join(stmts))
        keep = tmp_path_factory.mktemp("names")
        files = []
        for f in db.binlogs():
            (keep / f.name).write_bytes(f.read_bytes())
            files.append(str(keep / f.name))
    return files


@pytest.mark.parametrize("static_keys", [200, 0])  # the keys as column expressions, or a map
def test_names_stay_inside_the_output_and_apart(spark, binlogs, tmp_path, monkeypatch,
                                                static_keys):
    from binlog_grammar.spark import snapshots
    from binlog_grammar.spark.output_folder import table_name

    monkeypatch.setattr(snapshots, "STATIC_KEYS", static_keys)
    root = tmp_path / "a" / "b"
    out = root / "out"
    canary = root / "canary"  # where the first table's snapshot went, deleting what was there
    canary.mkdir(parents=True)
    (canary / "keep.txt").write_text("keep")
    before = sorted(p for p in tmp_path.rglob("*"))
    rc, text = pipeline_run(spark, binlogs, out)
    assert rc == 0, text
    assert (canary / "keep.txt").read_text() == "keep"
    assert sorted(p for p in tmp_path.rglob("*") if out not in p.parents and p != out) == before
    folders = sorted(p.name for p in (out / "snapshots").iterdir())
    assert folders == sorted(table_name(db, t) for db, t, _ in TABLES)
    assert all("/" not in f and ".." not in f.split(".", 1)[1] for f in folders)
    state = json.loads((out / "_binlog_state.json").read_text())
    assert sorted(state["tables"]) == folders
    for db, table, i in TABLES:
        name = table_name(db, table)
        rows = spark.read.parquet(str(out / "snapshots" / name)).collect()
        assert [(r.id, r.v) for r in rows] == [(i, f"v{i}")], name
        assert (state["tables"][name]["db"], state["tables"][name]["table"]) == (db, table)
        assert f"{name}  " in text or f"{name} " in text  # the summary's line of the table
