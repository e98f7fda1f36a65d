"""What a user points the `binlog` data source at, and damaged input, on a real local Spark.

- A folder (recursively, binlog files only, in binlog order), a glob, an index file and several
  paths give the rows of the same files listed by hand.
- A valid file whose TABLE_MAP_EVENT carries no column metadata gives its rows events raw, as
  `dump --format jsonl` writes them (dump.raw_rows_record), instead of failing the job.
- A damaged file: by default the job fails with the commands' one line (file, offset, event type)
  right after Spark's own first line, no traceback; with `mode` PERMISSIVE (skip_damaged) the rows
  are those of the plain reader with skip_damaged; with spark.sql.files.ignoreCorruptFiles, the
  rows before the damage.
- The README's Spark example, run verbatim in a new Python process and a new SparkSession that
  never calls register(): Spark 4 finds the source through the installed pyspark_binlog module.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import tomllib

import pytest

from binlog_grammar.binlog.stream import open_stream
from binlog_grammar.errors import BinlogError

from helpers.paths import ROOT, corpus_files, needs_corpus
from helpers.spark import df_records, load, plain_records

pytestmark = pytest.mark.spark

SAMPLES = sorted(str(p) for p in (ROOT / "samples").glob("mariadb-*"))
NO_METADATA = "ver_5_1-wl2325_r.001"  # MySQL 5.1 development tree: TABLE_MAPs without metadata
DAMAGED_AT = 2960  # a byte inside the first sample's WRITE_ROWS_EVENT_V1 at 2940 (its CRC32 fails)


def _server_folder(tmp_path):
    """A server's binlog folder made of the samples: the logs, their index, a GTID state file,
    a file that is no binlog and a subfolder with one more copy."""
    logs = tmp_path / "logs"
    (logs / "old").mkdir(parents=True)
    names = ["mariadb-bin.000009", "mariadb-bin.000010"]
    for n, src in zip(names, SAMPLES):
        shutil.copy(src, logs / n)
    shutil.copy(SAMPLES[0], logs / "old" / "mariadb-bin.000001")
    (logs / "mariadb-bin.index").write_text("".join(f"./{n}\n" for n in names))
    (logs / "mariadb-bin.state").write_text("0-1-12\n")
    (logs / "ib_logfile0").write_bytes(b"\x00" * 512)
    return logs, [str(logs / n) for n in names], str(logs / "old" / "mariadb-bin.000001")


def test_folders_globs_indexes_and_lists_give_the_rows_of_the_files(spark, tmp_path):
    logs, files, old = _server_folder(tmp_path)
    expected = plain_records(files)
    assert len(expected) == 13
    assert df_records(load(spark, str(logs / "mariadb-bin.0*"))) == expected
    assert df_records(load(spark, str(logs / "mariadb-bin.index"))) == expected
    assert df_records(load(spark, [str(logs / "old"), *files])) == plain_records([old, *files])
    assert df_records(load(spark, str(logs), split_bytes=1)) == plain_records([*files, old])


@needs_corpus
def test_rows_without_column_metadata_are_shown_raw(spark):
    path = next(str(f) for f in corpus_files() if f.name == NO_METADATA)
    expected = plain_records([path])
    assert [r["op"] for r in expected] == ["c", "u", "d"]
    assert all("carries no column metadata" in r["undecoded"] for r in expected)
    assert df_records(load(spark, path)) == expected
    typed = load(spark, path, table="test.t1").collect()  # the typed form keeps them raw too
    assert [(r.op, r.after, bytes(r.rows_raw)) for r in typed] == \
        [(r["op"], None, r["rows_raw"]) for r in expected]


def _damaged_copy(tmp_path):
    data = bytearray(open(SAMPLES[0], "rb").read())
    data[DAMAGED_AT] ^= 0x40
    p = tmp_path / "mariadb-bin.000001"
    p.write_bytes(bytes(data))
    return str(p)


def _until_damage(path):
    """The plain reader's rows of one file up to its first damage, and the damage's message."""
    out = []
    try:
        for se in open_stream([path], raw_rows=True).events():
            out += [(ch.op, ch.pos, ch.after) for ch in se.changes]
    except BinlogError as e:
        return out, str(e)
    return out, None


def test_a_damaged_file_fails_skips_or_ends_as_spark_file_sources_do(spark, tmp_path):
    path = _damaged_copy(tmp_path)
    before, message = _until_damage(path)
    assert message.startswith(f"{path}: offset 2940: WRITE_ROWS_EVENT_V1: ") and len(before) == 4
    with pytest.raises(Exception) as err:
        load(spark, [path, SAMPLES[1]]).collect()
    lines = str(err.value).splitlines()
    assert lines[1] == f"RuntimeError: [binlog-grammar] {message}", lines[:3]  # no traceback
    skipped = plain_records([path, SAMPLES[1]], skip_damaged=True)
    assert len(skipped) == 13 - 3  # the damaged event's three inserts are stepped over
    for options in ({"mode": "PERMISSIVE"}, {"skipDamaged": "true"}, {"mode": "dropmalformed"}):
        assert df_records(load(spark, [path, SAMPLES[1]], **options)) == skipped, options
    spark.conf.set("spark.sql.files.ignoreCorruptFiles", "true")
    try:
        rows = load(spark, [path, SAMPLES[1]]).collect()
    finally:
        spark.conf.unset("spark.sql.files.ignoreCorruptFiles")
    rest = [(ch.op, ch.pos, ch.after) for se in open_stream(SAMPLES[1:]).events()
            for ch in se.changes]
    assert [(r.op, r.source.pos) for r in rows] == [(op, pos) for op, pos, _ in before + rest]


@needs_corpus
def test_the_corpus_folder_with_mode_permissive(spark):
    """The whole corpus folder, its damaged files too, equals the plain reader with skip_damaged
    (the folder's order is binlog order: the plain reader is given the same list)."""
    from binlog_grammar.spark.split import expand_paths

    folder = str(corpus_files()[0].parent.parent)  # the corpus: mysql/ and a MANIFEST.md
    files = expand_paths([folder])
    assert {os.path.basename(p) for p in files} == {f.name for f in corpus_files()}
    expected = plain_records(files, skip_damaged=True)
    assert sum(r["undecoded"] is not None for r in expected) >= 3
    assert df_records(load(spark, folder, mode="PERMISSIVE")) == expected


README_CHECKS = """
import sys
import pyspark_binlog
assert pyspark_binlog.__file__.startswith(sys.argv[1]), pyspark_binlog.__file__
print("ROWS", changes.count(), customers.count())
try:
    spark.read.format("binlog").option("tabel", "shop.items").load("samples").count()
except Exception as e:
    print("REFUSED", [ln for ln in str(e).splitlines() if "unknown option" in ln][0][:200])
spark.read.format("binlog").option("mode", "PERMISSIVE").load(sys.argv[2]).count()
"""


def _readme_spark_example() -> str:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Data pipeline (Spark)"):]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_readme_example_runs_in_a_new_session_that_registers_nothing(spark, tmp_path):
    """A new Python process and SparkSession, the README's example verbatim (it calls no
    register()), with pyspark_binlog where a regular install puts it (site-packages, here a
    folder on PYTHONPATH: the editable install's import hook lists no module to Spark), and
    pyproject.toml shipping it. Also there: an unknown option refused naming the close match, and
    the one-line report of damage skipped on the worker's standard error."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "pyspark_binlog" in project["tool"]["setuptools"]["py-modules"]
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(ROOT / "pyspark_binlog.py", site)
    code = _readme_spark_example()
    assert "register" not in code
    script = tmp_path / "example.py"
    script.write_text(code + textwrap.dedent(README_CHECKS))
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, PYTHONPATH=path, PYSPARK_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1")
    p = subprocess.run([sys.executable, str(script), str(site), _damaged_copy(tmp_path)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    expected = plain_records(SAMPLES)
    counts = {}
    for r in expected:
        key = (r["db"], r["table"], r["op"])
        counts[key] = counts.get(key, 0) + 1
    cells = [tuple(c.strip() for c in ln.strip("|").split("|"))
             for ln in p.stdout.splitlines() if ln.startswith("|")]
    assert {(db, t, op): int(n) for db, t, op, n in cells[1:1 + len(counts)]} == counts
    assert ("op", "id", "name", "balance") in cells
    n_customers = sum(r["table"] == "customers" for r in expected)
    assert f"ROWS {len(expected)} {n_customers}" in p.stdout
    assert "RuntimeError: [binlog-grammar] binlog: unknown option tabel (did you mean table?)" \
        in p.stdout, p.stdout
    assert "binlog-grammar: skipped " in p.stderr and "at offset 2940 (WRITE_ROWS_EVENT_V1)" \
        in p.stderr, p.stderr[-3000:]
