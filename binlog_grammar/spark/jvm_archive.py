"""The pipeline's driver JVM started from a class archive (Java's AppCDS): the classes Spark loads
to start and to run a pipeline, parsed and verified once and mapped from a file by every later
run, instead of read from Spark's jars again (a run over the sample binlogs took 21 s without it
and 17 s with it; over the 127 MB benchmark binlog 0.91 of the time: docs/benchmarks.md).

Java 17 writes such an archive when a JVM started with `-XX:ArchiveClassesAtExit=FILE` exits: the
first pipeline run on a machine (per Java, pyspark and its jars, and JVM options that change the
archive) runs so, and waits for its JVM to write the archive as it stops (about 15 s, once); the
runs after it start with `-XX:SharedArchiveFile=FILE`. The JVM checks the archive against its own
build and class path and ignores it when they differ (its warnings are turned off), so a stale
archive costs the gain, never the run.

The archives live in `$XDG_CACHE_HOME/binlog-grammar/jvm` (`~/.cache/...`), about 200 MB each, one
per key (a local master and a cluster's driver differ in their collector: two); writing one
drops those no run used for 30 days (an older Java's or Spark's). BINLOG_GRAMMAR_JVM_ARCHIVE=off turns this off, =DIR keeps them in
DIR. A run that would write the archive while another run writes it (a lock file) runs without.
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import subprocess
import time
from typing import Optional

LOCK_STALE = 3600  # seconds after which a writer's lock is taken to be left by a killed run
UNUSED = 30 * 86400  # an archive no run used for this long goes when another is written
QUIET = "-Xlog:cds*=off"  # no warning when the JVM cannot use an archive (it runs without)


def folder() -> Optional[str]:
    """Where the archives are kept, or None when BINLOG_GRAMMAR_JVM_ARCHIVE is off."""
    setting = os.environ.get("BINLOG_GRAMMAR_JVM_ARCHIVE", "").strip()
    if setting.lower() in ("off", "0", "no", "false"):
        return None
    if setting:
        return os.path.abspath(setting)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "binlog-grammar", "jvm")


def key(java_options: str) -> str:
    """What the archive depends on: the Java that runs (its launcher and JVM library, by path,
    size and time), pyspark's version and jars (the class path), and the JVM options given."""
    import pyspark

    java = shutil.which("java", path=os.path.join(os.environ["JAVA_HOME"], "bin")) \
        if os.environ.get("JAVA_HOME") else shutil.which("java")
    java = os.path.realpath(java) if java else ""
    parts = {"java": java, "pyspark": pyspark.__version__, "options": java_options}
    home = os.path.dirname(os.path.dirname(java))
    for f in [java] + glob.glob(os.path.join(home, "lib", "server", "libjvm.so")):
        try:
            st = os.stat(f)
            parts[f] = [st.st_size, int(st.st_mtime)]
        except OSError:
            pass
    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    parts["jars"] = sorted((os.path.basename(j), os.path.getsize(j))
                           for j in glob.glob(os.path.join(jars, "*.jar")))
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:20]


class Archive:
    """The archive options for one driver JVM: `options` to add to its Java options, and
    `finish(proc)` after the session stops (when this run writes the archive: wait for the JVM
    to exit, then put the archive in place)."""

    def __init__(self, java_options: str):
        self.options = ""
        self.writing = None  # (part file, final file, lock file) when this run writes it
        where = folder()
        if where is None:
            return
        try:
            name = os.path.join(where, key(java_options) + ".jsa")
            if os.path.isfile(name):
                self.options = f"-XX:SharedArchiveFile={name} {QUIET}"
                os.utime(name)  # in use: not one to drop (finish)
                return
            os.makedirs(where, exist_ok=True)
            lock = name + ".lock"
            if not _take(lock):
                return  # another run writes it now
            for left in glob.glob(name + ".part-*"):  # of a run killed while it wrote
                os.unlink(left)
        except (OSError, KeyError, ImportError):
            return  # no place for it, or no Java: the run goes on without
        part = f"{name}.part-{os.getpid()}"
        self.writing = (part, name, lock)
        self.options = f"-XX:ArchiveClassesAtExit={part} {QUIET}"

    def finish(self, proc, timeout: float = 600) -> Optional[str]:
        """After the session stopped: if this run writes the archive, end the JVM (`proc`, the
        py4j gateway's process) and wait while it writes it, then move it into place. Returns a
        note for the summary, or None."""
        if self.writing is None:
            return None
        part, name, lock = self.writing
        self.writing = None
        t0 = time.monotonic()
        try:
            if proc is not None and proc.poll() is None:
                if proc.stdin is not None:
                    proc.stdin.close()  # the gateway's JVM exits when its input ends
                proc.wait(timeout=timeout)
            if proc is not None and proc.returncode == 0 and _whole(part):
                os.replace(part, name)
                for old in glob.glob(os.path.join(os.path.dirname(name), "*.jsa")):
                    if time.time() - os.stat(old).st_mtime > UNUSED:
                        os.unlink(old)  # of a Java or Spark no run has used for a while
                return (f"the JVM's class archive for later runs written in "
                        f"{time.monotonic() - t0:.0f} s (once per Java and Spark install; "
                        "BINLOG_GRAMMAR_JVM_ARCHIVE=off never writes it)")
        except (OSError, ValueError, subprocess.TimeoutExpired):
            pass  # no archive this time (a JVM still writing after `timeout` is left be)
        finally:
            for f in (part, lock):
                try:
                    os.unlink(f)
                except OSError:
                    pass
        return None


# the first four bytes of a dynamic archive (HotSpot's CDS_DYNAMIC_ARCHIVE_MAGIC 0xf00baba8,
# little-endian), which the JVM writes last, after the archive's regions
DYNAMIC_MAGIC = bytes.fromhex("a8ab0bf0")


def _whole(part: str) -> bool:
    """Whether the JVM finished writing the archive `part` (a disk that filled up leaves it
    without its header)."""
    with open(part, "rb") as fh:
        return fh.read(4) == DYNAMIC_MAGIC


def _take(lock: str) -> bool:
    """Create `lock` (it must not exist; one older than LOCK_STALE is removed first)."""
    try:
        if time.time() - os.stat(lock).st_mtime > LOCK_STALE:
            os.unlink(lock)
    except OSError:
        pass
    try:
        os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        return True
    except OSError:
        return False
