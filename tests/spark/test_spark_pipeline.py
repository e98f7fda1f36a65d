"""The pipeline's undecodable rows and its crash recovery, on a real local Spark (local[2]).

- A valid file whose rows events cannot be decoded (a 5.1 TABLE_MAP_EVENT without column
  metadata) does not fail the run: each such event is one raw row in undecoded/ (file, position,
  table, the row-image bytes, the reason), the summary says how many, and the change log and
  snapshots of the other files are those of a run without it.
- Crash recovery: the driver of a `binlog-grammar pipeline` process is killed with SIGKILL at a
  point the test picks (BINLOG_GRAMMAR_PIPELINE_CRASH_AT: after the change log is staged, after
  the first output file is moved into place, one after the other on one output); the next run
  finishes with the output of a clean run (change log, undecoded rows, snapshot rows, typed snapshots,
  the schema history, the Debezium table (every run here has --debezium), the consumed files of
  the state).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from helpers.paths import MARIADB_SAMPLES as SAMPLES, ROOT, corpus_files, needs_corpus
from helpers.spark import change_log, pipeline_run


pytestmark = pytest.mark.spark

NO_METADATA = "ver_5_1-wl2325_r.001"


def _rows(spark, folder):
    if not os.path.isdir(folder):
        return []
    return sorted(json.dumps(r.asDict(recursive=True), sort_keys=True, default=repr)
                  for r in spark.read.parquet(str(folder)).collect())


def outputs(spark, out):
    """Everything a run leaves, as comparable values (file names hold Spark's UUIDs: not them)."""
    state = json.loads((out / "_binlog_state.json").read_text())
    snaps = {t.name: _rows(spark, t) for t in sorted((out / "snapshots").iterdir())} \
        if (out / "snapshots").exists() else {}
    history = [json.dumps({k: v for k, v in json.loads(line).items() if k != "run"})
               for f in sorted((out / "schema_history").glob("*.jsonl"))
               for line in f.read_text().splitlines()]  # (runs may differ)
    return {"changes": change_log(spark, out), "undecoded": _rows(spark, out / "undecoded"),
            "schema_history": sorted(history), "debezium": _rows(spark, out / "debezium"),
            "snapshot_rows": _rows(spark, out / "_snapshot_rows"), "snapshots": snaps,
            "files": state["files"], "tx_seq": state["tx_seq"], "tables": state["tables"],
            "snapshot_sizes": state["snapshot_rows"], "pending": state["pending"],
            "staging": (out / "_staging").exists()}


@pytest.fixture(scope="module")
def clean(spark, tmp_path_factory):
    """One clean run over the old file and the samples, and one over the samples alone (tiny
    splits), shared by the checks below: (its summary text, its outputs, the samples' outputs)."""
    if not any(f.name == NO_METADATA for f in corpus_files()):
        pytest.skip(f"the corpus file {NO_METADATA} is missing")
    old = next(str(f) for f in corpus_files() if f.name == NO_METADATA)
    root = tmp_path_factory.mktemp("clean")
    rc, text = pipeline_run(spark, [old, *SAMPLES], root / "o", split_bytes=2000, debezium=True)
    assert rc == 0, text
    assert pipeline_run(spark, SAMPLES, root / "s", split_bytes=2000, debezium=True)[0] == 0
    return old, root / "o", text, outputs(spark, root / "o"), outputs(spark, root / "s")


@needs_corpus
def test_rows_that_cannot_be_decoded_are_kept_raw(spark, clean):
    old, out, text, got, want = clean
    assert "3 rows event(s) not decoded" in text and "undecoded/" in text
    raw = spark.read.parquet(str(out / "undecoded")).collect()
    assert {(r.db, r.table, r.source.file, r.source.table) for r in raw} == \
        {("test", "t1", old, "t1")}
    assert [r.op for r in sorted(raw, key=lambda r: r.source.pos)] == ["c", "u", "d"]
    assert all("carries no column metadata" in r.undecoded and r.rows_raw for r in raw)
    assert not (out / "snapshots" / "test.t1").exists()
    # the decoded rows are those of a run without the old file
    for k in ("changes", "snapshot_rows", "snapshots"):
        assert got[k] == want[k], k


def _crashing_run(inputs, output, point):
    env = dict(os.environ, BINLOG_GRAMMAR_PIPELINE_CRASH_AT=point, PYSPARK_PYTHON=sys.executable)
    p = subprocess.run([sys.executable, "-m", "binlog_grammar", "pipeline", "--quiet", "--master",
                        "local[2]", "--input", *inputs, "--output", str(output),
                        "--split-bytes", "2000", "--debezium"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    return p


@needs_corpus
def test_runs_killed_mid_way_are_finished_by_the_next(spark, clean, tmp_path):
    """A first run over the first file; then a run over all of them killed after staging its
    change log (no plan recorded: the next run discards it), then one killed after moving its
    first output file into place (plan recorded: the next run finishes it); then a run that
    finishes, whose output is the clean run's."""
    old, _, _, want, _ = clean
    inputs = [old, *SAMPLES]
    out = tmp_path / "crashed"
    assert pipeline_run(spark, inputs[:1], out, split_bytes=2000, debezium=True)[0] == 0
    for point in ("changes", "publish"):
        p = _crashing_run(inputs, out, point)
        assert p.returncode == -signal.SIGKILL, (point, p.returncode, p.stderr[-2000:])
        state = json.loads((out / "_binlog_state.json").read_text())
        assert (state["pending"] is not None) == (point != "changes"), point
        assert (out / "_staging").exists(), point
    rc, text = pipeline_run(spark, inputs, out, split_bytes=2000, debezium=True)
    assert rc == 0, text
    assert outputs(spark, out) == want
    # and once more: nothing new, nothing changes
    rc, text = pipeline_run(spark, inputs, out, split_bytes=2000, debezium=True)
    assert rc == 0 and "nothing new" in text
    assert outputs(spark, out) == want


def test_option_table_reads_past_the_damage_with_skip_damaged(spark, tmp_path):
    """option("table") finds the table's columns as the reader with skip_damaged reads the file:
    past an event whose length is damaged (before the table's first TABLE_MAP_EVENT)."""
    from helpers.spark import load, plain_records

    data = bytearray(open(SAMPLES[0], "rb").read())
    data[1220 + 9] = 0xFF  # the event length of the ANNOTATE_ROWS_EVENT at 1220
    p = tmp_path / "mariadb-bin.000001"
    p.write_bytes(bytes(data))
    want = [(r["op"], r["source"]["pos"]) for r in plain_records([str(p)], skip_damaged=True)
            if r["table"] == "customers"]
    assert len(want) == 6  # four inserts, two updates
    rows = load(spark, str(p), table="shop.customers", mode="PERMISSIVE").collect()
    assert [(r.op, r.source.pos) for r in rows] == want
    assert rows[0].after.name is not None and rows[0].after.id == 1


@needs_corpus
def test_a_jvm_killed_mid_run_is_one_line_and_the_next_run_finishes(spark, clean, tmp_path):
    """Spark's JVM killed under the driver after the change log is staged (the OOM killer's way):
    the command says so in one line and exits 1, no traceback; run again, it gives the clean
    run's output."""
    old, _, _, want, _ = clean
    out = tmp_path / "jvm"
    p = _crashing_run([old, *SAMPLES], out, "jvm:changes")
    assert p.returncode == 1, (p.returncode, p.stderr[-2000:])
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("binlog-grammar: pipeline:")]
    assert len(lines) == 1 and "Spark's JVM stopped during the run" in lines[0], p.stderr[-2000:]
    assert "Traceback" not in p.stderr, p.stderr[-2000:]
    p = _crashing_run([old, *SAMPLES], out, "none")
    assert p.returncode == 0, p.stderr[-2000:]
    assert outputs(spark, out) == want


def test_a_ctrl_c_mid_run_exits_130_without_a_traceback(spark, tmp_path):
    """A Ctrl-C once the run stages its output: exit status 130 and nothing but Java's own
    banner on stderr (pyspark's handler cancelled the jobs through py4j from inside the signal
    handler, and py4j logged the reentrant call's tracebacks)."""
    import time

    from helpers.signals import interruptible

    out = tmp_path / "interrupted"
    p = subprocess.Popen([sys.executable, "-m", "binlog_grammar", "pipeline", "--quiet",
                          "--master", "local[2]", "--input", *SAMPLES, "--output", str(out)],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, PYSPARK_PYTHON=sys.executable),
                         preexec_fn=interruptible)
    deadline = time.monotonic() + 300
    while not (out / "_staging").exists() and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=300)
    assert p.returncode == 130, (p.returncode, err[-3000:])
    assert "Traceback" not in err and "ERROR" not in err, err[-3000:]


def test_a_spark_failure_says_its_java_cause(spark, capsys):
    """A failure inside Spark is one line with the Java exception's root cause, not py4j's
    "An error occurred while calling o119.parquet."."""
    rc, _ = pipeline_run(spark, SAMPLES, "/proc/binlog-grammar-cannot-write-here")
    err = capsys.readouterr().err
    assert rc == 1
    assert "binlog-grammar: pipeline: Spark failed: IOException: Mkdirs failed to create " \
        "file:/proc/binlog-grammar-cannot-write-here/" in err, err
    assert "Traceback" not in err and "An error occurred while calling" not in err, err


@pytest.mark.parametrize("env,local,parallel", [
    ({}, True, True), ({}, False, False), ({"JAVA_TOOL_OPTIONS": "-XX:+UseG1GC"}, True, False),
    ({"JDK_JAVA_OPTIONS": "-XX:+UseZGC -Xmx2g"}, True, False),
    ({"JAVA_TOOL_OPTIONS": "-Xmx2g"}, True, True)])
def test_the_local_jvm_takes_the_parallel_collector_unless_the_environment_picks_one(
        monkeypatch, env, local, parallel):
    from binlog_grammar.spark.pipeline import driver_java_options

    for v in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"):
        monkeypatch.delenv(v, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    opts = driver_java_options("/x/log4j2.properties", local).split()
    assert opts[0] == "-Dlog4j.configurationFile=file:/x/log4j2.properties"
    assert ("-XX:+UseParallelGC" in opts) == parallel
