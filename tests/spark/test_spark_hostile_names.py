"""Database and table names are bytes of the binlog, and hostile: the pipeline's per-table folders
must stay inside the output folder and be one per table, written by a real MariaDB.

Before output_folder.table_name and partition_value, a table named `../../../../../../canary` had its typed snapshot
written beside the output folder (mode overwrite: a folder of that name deleted first), and the
tables `test`.`a.b` and `test.a`.`b` were one table "test.a.b" (one definition, one count, one
folder); a database named __HIVE_DEFAULT_PARTITION__ (Spark's folder name for an empty or NULL
partition value) came back from the change log as NULL and failed the run, and beside an empty
database name (hostile bytes) it made two writers of one file; a name whose bytes do not decode
failed the read (Arrow's strings are UTF-8), and a NUL in it the write (no file name holds one).
"""
from __future__ import annotations

import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.services import need_mariadb
from helpers.spark import pipeline_run

pytestmark = [pytest.mark.spark, pytest.mark.server]

# (database, table, its row's id); MariaDB keeps such names in its files as @XXXX escapes
TABLES = [("test", "../../../../../../canary", 1), ("test", "a.b", 2), ("test.a", "b", 3),
          ("_under", "_t", 4), ("test", "c:d#e%f*g?h=i[j]{k}^l'm\"n\\o", 5),
          ("test", "ünï ☃ name", 6), ("test", "t", 7), ("__HIVE_DEFAULT_PARTITION__", "t", 8),
          ("%", "%", 9), ("emptied", "t", 10), ("undecodable", "t", 11)]
# databases whose TABLE_MAP_EVENTs are rewritten (hostile bytes): an empty name, and bytes that
# do not decode with a NUL among them (the reader writes them \xNN, as the dump does)
REWRITTEN = {b"emptied": b"", b"undecodable": b"\xff\xfe\x00z"}
HIVE = "__HIVE_DEFAULT_PARTITION__"  # Spark's folder for a NULL partition value


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
            (keep / f.name).write_bytes(_rewritten(f))
            files.append(str(keep / f.name))
    return files


def _rewritten(path) -> bytes:
    """The binlog at `path` with the TABLE_MAP_EVENTs of REWRITTEN's databases naming them as
    REWRITTEN says, and the column v of `undecodable` named 0xff (its full metadata's names)."""
    from pathlib import Path

    data = Path(path).read_bytes()
    for old, new in REWRITTEN.items():
        data = _renamed(data, old, new, column=b"\xff" if old == b"undecodable" else None)
    return data


def _renamed(data: bytes, db: bytes, new_db: bytes, table: bytes = None, column: bytes = None):
    """`data` (a binlog) with the TABLE_MAP_EVENTs of database `db` naming database `new_db`,
    table `table` (when given) and its second column `column` (one byte; when given), lengths,
    positions and CRC32s right."""
    import tempfile

    from helpers.mysql_binlog import event, events

    with tempfile.NamedTemporaryFile(suffix=".000001") as f:
        f.write(data)
        f.flush()
        data, evs = events(f.name)
    out = bytearray(data[:4])
    for _, code, raw in evs:
        body = raw[19:-4]
        # TABLE_MAP_EVENT: table id 6, flags 2, the database's length, name and 0, the table's
        if code == 19 and body[9:9 + body[8]] == db:
            rest = body[9 + body[8] + 1:]  # from the table's length on
            if table is not None:
                rest = bytes([len(table)]) + table + rest[1 + rest[0]:]
            if column is not None:  # the names id and v (or what replaced v)
                at = rest.index(b"\x02id\x01") + 4
                rest = rest[:at] + column + rest[at + 1:]
            body = body[:8] + bytes([len(new_db)]) + new_db + b"\0" + rest
        flags = int.from_bytes(raw[17:19], "little") & ~1 if code == 15 else None  # IN_USE
        out += event(raw, bytes(body), len(out), flags=flags)
    return bytes(out)


def _named(db):
    """The database's name as the `binlog` source gives it."""
    from binlog_grammar.output.dump import escape_undecoded

    new = REWRITTEN.get(db.encode(), db.encode())
    return escape_undecoded(new.decode("utf-8", "surrogateescape"))


@pytest.mark.parametrize("static_keys", [200, 0])  # the keys as column expressions, or a map
def test_names_stay_inside_the_output_and_apart(spark, binlogs, tmp_path, monkeypatch,
                                                static_keys):
    from binlog_grammar.spark import snapshots
    from binlog_grammar.spark.output_folder import partition_value as pv
    from binlog_grammar.spark.output_folder import table_name

    monkeypatch.setattr(snapshots, "STATIC_KEYS", static_keys)
    root = tmp_path / "a" / "b"
    out = root / "out"
    canary = root / "canary"  # where the first table's snapshot went, deleting what was there
    canary.mkdir(parents=True)
    (canary / "keep.txt").write_text("keep")
    before = sorted(p for p in tmp_path.rglob("*"))
    rc, text = pipeline_run(spark, binlogs, out, debezium=True)
    assert rc == 0, text
    assert (canary / "keep.txt").read_text() == "keep"
    assert sorted(p for p in tmp_path.rglob("*") if out not in p.parents and p != out) == before
    # the outputs' names: partition_value's (an empty one, a %, a NUL, Spark's folder name for
    # NULL escaped), then table_name's for a folder
    names = {(pv(_named(db)), pv(table)): i for db, table, i in TABLES}
    folders = sorted(p.name for p in (out / "snapshots").iterdir())
    assert folders == sorted(table_name(db, t) for db, t in names)
    assert all("/" not in f and ".." not in f.split(".", 1)[1] for f in folders)
    state = json.loads((out / "_binlog_state.json").read_text())
    assert sorted(state["tables"]) == folders
    for (db, table), i in names.items():
        name = table_name(db, table)
        rows = spark.read.parquet(str(out / "snapshots" / name)).collect()
        v = "\\xff" if i == 11 else "v"  # the column name that does not decode, as the dump has it
        assert [(r.id, r[v]) for r in rows] == [(i, f"v{i}")], name
        assert (state["tables"][name]["db"], state["tables"][name]["table"]) == (db, table)
        assert f"{name}  " in text or f"{name} " in text  # the summary's line of the table
    # the Debezium table's folders are the change log's, and NULL's (BEGIN, END, schema changes)
    def folders_of(kind):
        return sorted(str(p.parent.parent.relative_to(out / kind))
                      for p in (out / kind).rglob("date=*"))
    assert [f for f in folders_of("debezium") if not f.startswith(f"db={HIVE}/")] == \
        folders_of("changes")
    changes = spark.read.parquet(str(out / "changes")).collect()
    assert sorted((r.db, r.table, r.op, r.after["id"] if r.after else r.before["id"])
                  for r in changes) == \
        sorted(x for (db, table), i in names.items()
               for x in ((db, table, "c", str(i)), (db, table, "c", str(i + 100)),
                         (db, table, "d", str(i + 100))))


def test_partition_column_is_partition_value(spark):
    """job.partition_column (Spark's expressions) writes each name as output_folder's
    partition_value (the definition) does."""
    from pyspark.sql import functions as F

    from binlog_grammar.spark.job import partition_column
    from binlog_grammar.spark.output_folder import partition_value

    names = ["", "%", "%%25", "t", "__HIVE_DEFAULT_PARTITION__", "__HIVE_DEFAULT_PARTITION__x",
             "x__HIVE_DEFAULT_PARTITION__", "_HIVE_DEFAULT_PARTITION__", "%5F", "ü%☃", "a.b/c"]
    got = spark.createDataFrame([(n,) for n in names], "n string") \
        .select("n", partition_column(F.col("n")).alias("v")).collect()
    assert {r.n: r.v for r in got} == {n: partition_value(n) for n in names}
    assert len({partition_value(n) for n in names}) == len(names)  # one name each


def test_the_source_gives_names_that_do_not_decode_as_the_dump_writes_them(binlogs):
    """format("binlog")'s rows and its content `tables`, on both backends: the rewritten names
    as the dump writes them (\\xNN), where the read failed before."""
    def read(backend, **options):
        out = _source_rows(binlogs, backend, **options)
        if out and isinstance(out[0], tuple):
            return sorted((r[0], r[1]) for r in out)
        return sorted((r["db"], r["table"], r["op"]) for r in out)

    for options in ({}, {"with_tables": "true"}, {"image_format": "json"}, {"content": "tables"}):
        got = read("auto", **options)
        assert got == read("python", **options), options
        assert ("\\xff\\xfe\x00z", "t") in {r[:2] for r in got}, options
        assert ("", "t") in {r[:2] for r in got}, options
    # the column whose name does not decode: a map key as the dump writes it, on both backends
    for backend in ("auto", "python"):
        rows = _source_rows(binlogs, backend)
        assert ("\\xff", '"v11"') in [e for r in rows if r["after"] for e in r["after"]], backend


def test_the_table_option_names_every_table(binlogs):
    """The option table (typed structs) picks each table by its name as the source gives it:
    backquoted as MySQL quotes names (a dot, a backquote, an empty name), bytes that do not
    decode as \\xNN; its typed columns are named so too, and hold the values. It failed on a
    column name that does not decode, and could not name a database with a dot."""
    for db, table, i in TABLES:
        db = _named(db)
        v = "\\xff" if i == 11 else "v"
        forms = [f"{_q(db)}.{_q(table)}"]
        if "." not in db and "`" not in db + table and db and not db.startswith(" "):
            forms.append(f"{db}.{table}")  # unquoted: split at the first dot
        for form in forms:
            for backend in ("auto", "python"):
                rows = _source_rows(binlogs, backend, table=form)
                got = sorted((r["op"], (r["after"] or r["before"])["id"],
                              (r["after"] or {}).get(v)) for r in rows)
                assert got == [("c", i, f"v{i}"), ("c", i + 100, "x"), ("d", i + 100, None)], \
                    (form, backend)
                assert {(r["db"], r["table"]) for r in rows} == {(db, table)}, form


@pytest.mark.parametrize("text,want", [
    ("a.b", ("a", "b")), ("a.b.c", ("a", "b.c")), ("`a.b`.c", ("a.b", "c")),
    ("a.`b.c`", ("a", "b.c")), ("`a``b`.`c`", ("a`b", "c")), ("``.t", ("", "t")),
    ("`\\xff`.`t`", ("\\xff", "t"))])
def test_table_option_forms(text, want):
    from binlog_grammar.spark.options import qualified_table

    assert qualified_table(text) == want


@pytest.mark.parametrize("text", ["t", "`a`", "`a`b.c", "a.`b", "`a`.", "`a`.b`", ""])
def test_table_option_says_what_is_wrong(text):
    from binlog_grammar.spark.options import qualified_table

    with pytest.raises(ValueError, match="option table"):
        qualified_table(text)


def _source_rows(paths, backend, **options):
    """Every row of format("binlog")'s read in this process on `backend`: Arrow rows as dicts,
    content tables' rows as tuples."""
    import pyarrow as pa

    from binlog_grammar import native
    from binlog_grammar.spark.datasource import BinlogDataSource

    native.select(backend)
    try:
        ds = BinlogDataSource({"paths": json.dumps([str(p) for p in paths]), **options})
        reader = ds.reader(ds.schema())
        out = [b for p in reader.partitions() for b in reader.read(p)]
    finally:
        native.select(None)
    if out and isinstance(out[0], tuple):
        return out
    return [r for b in out for r in pa.Table.from_batches([b]).to_pylist()]


@settings(max_examples=int(os.environ.get("BINLOG_GRAMMAR_NAMES_EXAMPLES", "25")), deadline=None,
          derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(db=st.binary(max_size=24), table=st.binary(max_size=24),
       column=st.binary(min_size=1, max_size=1))
def test_drawn_names_read_the_same_on_both_backends(binlogs, tmp_path, db, table, column):
    """Any bytes as the names of a table and of a column of it (rewritten into a real server's
    TABLE_MAP_EVENTs): both backends give the same rows in every form, the names as the dump
    writes them (BINLOG_GRAMMAR_NAMES_EXAMPLES=N for a longer run)."""
    from binlog_grammar.output.dump import escape_undecoded

    path = tmp_path / "drawn.000001"
    path.write_bytes(_renamed(open(binlogs[0], "rb").read(), REWRITTEN[b"undecodable"], db,
                              table, column))

    def text(b):
        return escape_undecoded(b.decode("utf-8", "surrogateescape"))
    for options in ({}, {"with_tables": "true"}, {"image_format": "json"}, {"content": "tables"}):
        got = _source_rows([path], "auto", **options)
        assert got == _source_rows([path], "python", **options), options
        names = {(r[0], r[1]) if isinstance(r, tuple) else (r["db"], r["table"]) for r in got}
        assert (text(db), text(table)) in names, options
    after = [r["after"] for r in _source_rows([path], "auto") if r["after"]
             and (r["db"], r["table"]) == (text(db), text(table))]
    assert after and all(k == text(column) for a in after for k, _ in a if k != "id")
    # content tables: its columns' JSON holds the names so too
    defs = [r for r in _source_rows([path], "auto", content="tables")
            if (r[0], r[1]) == (text(db), text(table))]
    assert defs and all([c["name"] for c in json.loads(r[2])] == ["id", text(column)] for r in defs)


def _unescape(text: str) -> str:
    """The inverse of output_folder's %XX escapes (UTF-8 bytes, surrogates passed through), and
    of its `%` for an empty name."""
    if text == "%":
        return ""

    def put(m):
        return bytes.fromhex(m.group(0).replace("%", "")).decode("utf-8", "surrogatepass")
    return re.sub(r"(%[0-9A-F]{2})+", put, text)


# any text a decoder may give a name: surrogate escapes of bytes that do not decode included
NAME = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()),
               max_size=10) | st.sampled_from(["", ".", "..", "_", "%", "%25", "\0", HIVE,
                                               HIVE + "x", "_" + HIVE, "a.b", "../x"])


@settings(max_examples=400, deadline=None)
@given(NAME, NAME)
def test_table_name_is_one_safe_folder_for_each_table(db, table):
    from binlog_grammar.spark.output_folder import partition_value, table_name

    name = table_name(db, table)
    assert "/" not in name and "\0" not in name and not name.startswith((".", "_"))
    assert all(ord(c) >= 0x20 and c != "\x7f" for c in name)
    head, dot, tail = name.partition(".")
    assert dot and "." not in tail and (_unescape(head), _unescape(tail)) == (db, table)
    # partition_value: never empty, never Spark's NULL folder, no NUL, one name each
    v = partition_value(db)
    assert v and not v.startswith(HIVE) and "\0" not in v
    back = "" if v == "%" else re.sub("%(25|00|5F)", lambda m: {"25": "%", "00": "\0",
                                                                  "5F": "_"}[m.group(1)], v)
    assert back == db
