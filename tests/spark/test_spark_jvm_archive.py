"""The pipeline's driver JVM class archive (binlog_grammar.spark.jvm_archive): a first run writes
it as its JVM exits, the next runs start from it, and a run never fails for it.

- end to end: two `binlog-grammar pipeline` processes over the samples with
  BINLOG_GRAMMAR_JVM_ARCHIVE set to a folder: the first says it wrote the archive and leaves it
  alone in the folder (no part file, no lock); the second's JVM loads classes from it (its class
  loading log, `-Xlog:class+load`, names the archive as their source) and writes the same change
  log and snapshots;
- the options and the lock without Spark: off, an archive there, one being written by another
  run, a lock left by a killed run, and the end of a writing run with a process that writes the
  file when its input ends (as the gateway's JVM does).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from helpers.paths import ROOT

SAMPLES = [str(p) for p in sorted((ROOT / "samples").glob("mariadb-*"))]
ARCHIVE = bytes.fromhex("a8ab0bf0") + b"regions"  # what the JVM stand-ins write: a header's magic


def _rows(folder):
    import pyarrow.parquet as pq

    return sorted(json.dumps(r, sort_keys=True, default=str)
                  for r in pq.read_table(str(folder)).to_pylist())


def _pipeline(output, archive_dir, **env):
    env = dict(os.environ, BINLOG_GRAMMAR_JVM_ARCHIVE=str(archive_dir), **env)
    return subprocess.run([sys.executable, "-m", "binlog_grammar", "pipeline", "--quiet",
                           "--master", "local[2]", "--input", *SAMPLES, "--output", str(output)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=400)


@pytest.mark.spark
def test_a_first_run_writes_the_archive_and_the_next_starts_from_it(tmp_path):
    from helpers.spark import need_spark

    need_spark()
    archives = tmp_path / "jvm"
    first = _pipeline(tmp_path / "first", archives)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "note: the JVM's class archive for later runs written in" in first.stdout, first.stdout
    made = sorted(os.listdir(archives))
    assert len(made) == 1 and made[0].endswith(".jsa"), made
    logs = tmp_path / "class-load"
    logs.mkdir()
    second = _pipeline(tmp_path / "second", archives,
                       JAVA_TOOL_OPTIONS=f"-Xlog:class+load=info:file={logs}/load-%p.log")
    assert second.returncode == 0, second.stderr[-3000:]
    assert "class archive" not in second.stdout
    assert sorted(os.listdir(archives)) == made
    # the driver JVM (the launcher JVM before it loads nothing from the archive)
    used = [f for f in os.listdir(logs)
            if "source: shared objects file (top)" in (logs / f).read_text(errors="replace")]
    assert used, [(f, (logs / f).read_text(errors="replace")[-300:]) for f in os.listdir(logs)]
    for part in ("changes", "_snapshot_rows"):
        assert _rows(tmp_path / "second" / part) == _rows(tmp_path / "first" / part), part
    snaps = sorted(os.listdir(tmp_path / "first" / "snapshots"))
    assert snaps and sorted(os.listdir(tmp_path / "second" / "snapshots")) == snaps


# -- without Spark ---------------------------------------------------------------------------------

@pytest.fixture
def jvm_dir(tmp_path, monkeypatch):
    pytest.importorskip("pyspark")
    monkeypatch.setenv("BINLOG_GRAMMAR_JVM_ARCHIVE", str(tmp_path / "jvm"))
    return tmp_path / "jvm"


def test_off_adds_nothing(monkeypatch):
    from binlog_grammar.spark.jvm_archive import Archive, folder

    for value in ("off", "0", "OFF"):
        monkeypatch.setenv("BINLOG_GRAMMAR_JVM_ARCHIVE", value)
        assert folder() is None
        a = Archive("-Xmx1g")
        assert a.options == "" and a.finish(None) is None


def test_the_default_folder_is_the_users_cache(monkeypatch, tmp_path):
    from binlog_grammar.spark.jvm_archive import folder

    monkeypatch.delenv("BINLOG_GRAMMAR_JVM_ARCHIVE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert folder() == str(tmp_path / "binlog-grammar" / "jvm")


def test_one_writer_at_a_time_then_every_run_reads_it(jvm_dir):
    from binlog_grammar.spark.jvm_archive import Archive, key

    name = jvm_dir / (key("-Xmx1g") + ".jsa")
    writer = Archive("-Xmx1g")
    part = f"{name}.part-{os.getpid()}"
    assert writer.options.split() == [f"-XX:ArchiveClassesAtExit={part}", "-Xlog:cds*=off"]
    assert os.path.exists(f"{name}.lock")
    assert Archive("-Xmx1g").options == ""  # another run meanwhile: without
    assert Archive("-Xmx2g").options.startswith("-XX:ArchiveClassesAtExit=")  # another key
    # the JVM stand-in: writes the archive when its input ends, as the gateway's JVM exits
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read(); "
                             f"open({part!r}, 'wb').write({ARCHIVE!r})"], stdin=subprocess.PIPE)
    note = writer.finish(proc)
    assert note and note.startswith("the JVM's class archive for later runs written in")
    assert name.read_bytes() == ARCHIVE
    # this key's lock and part are gone (the other key's writer still holds its own lock)
    assert not os.path.exists(f"{name}.lock") and not os.path.exists(part)
    assert Archive("-Xmx1g").options.split() == [f"-XX:SharedArchiveFile={name}",
                                                  "-Xlog:cds*=off"]


def test_an_archive_no_run_used_for_a_month_goes_when_another_is_written(jvm_dir):
    from binlog_grammar.spark.jvm_archive import UNUSED, Archive

    jvm_dir.mkdir()
    stale, recent = jvm_dir / "stale.jsa", jvm_dir / "recent.jsa"  # other keys' archives
    for f, age in ((stale, UNUSED + 60), (recent, UNUSED - 3600)):
        f.write_bytes(ARCHIVE)
        os.utime(f, (time.time() - age, time.time() - age))
    writer = Archive("-Xmx1g")
    part = writer.options.split()[0].split("=", 1)[1]
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read(); "
                             f"open({part!r}, 'wb').write({ARCHIVE!r})"], stdin=subprocess.PIPE)
    assert writer.finish(proc)
    left = sorted(os.listdir(jvm_dir))
    assert "stale.jsa" not in left and "recent.jsa" in left and len(left) == 2, left


@pytest.mark.parametrize("written,status", [(ARCHIVE, 1), (b"\0" * 4096, 0)],
                         ids=["jvm-error", "no-header"])
def test_a_jvm_that_fails_or_stops_writing_leaves_no_archive(jvm_dir, written, status):
    """A JVM that exits with an error, or leaves the archive without its header (it writes the
    header last: a full disk): no archive, and the next run tries again."""
    from binlog_grammar.spark.jvm_archive import Archive

    writer = Archive("-Xmx1g")
    part = writer.options.split()[0].split("=", 1)[1]
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read(); "
                             f"open({part!r}, 'wb').write({written!r}); sys.exit({status})"],
                            stdin=subprocess.PIPE)
    assert writer.finish(proc) is None
    assert os.listdir(jvm_dir) == []
    assert Archive("-Xmx1g").options.startswith("-XX:ArchiveClassesAtExit=")  # tried again


def test_a_lock_left_by_a_killed_run_expires(jvm_dir):
    from binlog_grammar.spark.jvm_archive import LOCK_STALE, Archive, key

    name = jvm_dir / (key("-Xmx1g") + ".jsa")
    jvm_dir.mkdir()
    lock = f"{name}.lock"
    open(lock, "w").close()
    left = f"{name}.part-1"  # the killed run's JVM wrote its part
    open(left, "w").close()
    assert Archive("-Xmx1g").options == ""
    old = time.time() - LOCK_STALE - 5
    os.utime(lock, (old, old))
    a = Archive("-Xmx1g")
    assert a.options.startswith("-XX:ArchiveClassesAtExit=") and not os.path.exists(left)
    a.finish(None)
    assert os.listdir(jvm_dir) == []
