"""The pipeline's output folder (binlog_grammar.spark.pipeline), read and written through Hadoop's
FileSystem, so that it may be a local path, hdfs://, s3a://, ...; the name of its state file; and
PipelineError, the one-line problem with the input or the output folder a run stops on.
"""
from __future__ import annotations

import os
import re
from typing import Optional

STATE_FILE = "_binlog_state.json"
STATE_VERSION = 1


# what a table's name may not hold as it is in a folder name: the separator of db and table, a
# path's separators, what Hadoop's paths and URIs read specially (scheme, escape, fragment, globs)
_UNSAFE = set('./\\:%#"\'*?=[]{}^') | {chr(c) for c in range(0x20)} | {"\x7f"}


def table_name(db: str, table: str) -> str:
    """`db.table` as one folder name, the same for no other table: in the database's and the
    table's names a `.`, `/`, `\\`, `:`, `%`, `#`, a quote, a glob character, `=`, `^` or a control
    character is written %XX (its UTF-8 bytes), as is a leading `_` (Hadoop hides such folders);
    an empty name is `%`.
    A binlog's names are hostile (`../../x` would have put a snapshot outside the output folder,
    and `a.b`.`c` and `a`.`b.c` would have been one table); most names are unchanged: test.t."""
    return _escape(db, True) + "." + _escape(table, False)


def _escape(name: str, first: bool) -> str:
    if not name:  # hostile bytes: ".t" would be hidden, "." the folder of every snapshot
        return "%"
    out = []
    for i, ch in enumerate(name):
        if ch in _UNSAFE or (first and i == 0 and ch == "_"):
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass")))
        else:
            out.append(ch)
    return "".join(out)


# the folder name Spark writes for an empty or NULL partition value, and reads back as NULL
HIVE_DEFAULT = "__HIVE_DEFAULT_PARTITION__"


def partition_value(name: str) -> str:
    """A database's or table's name as the pipeline's partitioned outputs hold it (changes/,
    undecoded/, _snapshot_rows/: their db and table columns come from the folder names): the
    name as it is, except an empty one, written `%`, a `%` or NUL, written `%25` and `%00`
    (Spark escapes the other characters a folder name cannot hold), and a name starting
    with __HIVE_DEFAULT_PARTITION__, whose first `_` is written `%5F`. Spark writes an empty value
    as that folder name and reads the folder back as NULL, so a database named
    __HIVE_DEFAULT_PARTITION__ (any user may create one) lost its name, and one beside an empty
    name (hostile bytes) made two writers of one file. job.partition_column is the same rule in
    Spark's expressions."""
    if name == "":
        return "%"
    name = name.replace("%", "%25").replace("\0", "%00")  # no file name holds a NUL
    if name.startswith(HIVE_DEFAULT):
        name = "%5F" + name[1:]
    return name


class PipelineError(Exception):
    """A problem with the input or the output folder: one line for the user."""


def output_uri(output: str) -> str:
    """The --output folder as a URI: a URI as given, a local path made absolute."""
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", output) or output.startswith("file:"):
        return output.rstrip("/")
    return os.path.abspath(output)


class OutputFS:
    """A folder of any filesystem Spark writes, through Hadoop's FileSystem of the session."""

    def __init__(self, spark, root: str):
        self.jvm = spark._jvm
        self.conf = spark._jsc.hadoopConfiguration()
        self.root = root.rstrip("/") or "/"
        self.fs = self.path(self.root).getFileSystem(self.conf)

    def path(self, p: str):
        return self.jvm.org.apache.hadoop.fs.Path(p)

    def join(self, *parts) -> str:
        return "/".join([self.root] + [p.strip("/") for p in parts])

    def exists(self, p: str) -> bool:
        return bool(self.fs.exists(self.path(p)))

    def read_text(self, p: str) -> Optional[str]:
        if not self.exists(p):
            return None
        stream = self.fs.open(self.path(p))
        try:
            reader = self.jvm.java.io.BufferedReader(
                self.jvm.java.io.InputStreamReader(stream, "UTF-8"))
            lines = []
            while True:
                line = reader.readLine()
                if line is None:
                    break
                lines.append(line)
            return "\n".join(lines)
        finally:
            stream.close()

    def write_text(self, p: str, text: str):
        """Write `p` whole or not at all (a temporary file renamed over it)."""
        tmp = p + ".tmp"
        stream = self.fs.create(self.path(tmp), True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()
        if self.exists(p):
            self.fs.delete(self.path(p), False)
        self.fs.rename(self.path(tmp), self.path(p))

    def delete(self, p: str):
        if self.exists(p):
            self.fs.delete(self.path(p), True)

    def rename(self, src: str, dst: str):
        parent = self.path(dst).getParent()
        if parent is not None:
            self.fs.mkdirs(parent)
        if not self.fs.rename(self.path(src), self.path(dst)):
            raise PipelineError(f"cannot move {src} to {dst}")

    def files(self, p: str) -> list:
        """(relative path, full path) of every data file under `p` (no _SUCCESS, no .crc)."""
        out = []
        if not self.exists(p):
            return out
        it = self.fs.listFiles(self.path(p), True)
        base = str(self.fs.makeQualified(self.path(p)).toString()).rstrip("/") + "/"
        while it.hasNext():
            st = it.next()
            full = str(st.getPath().toString())
            name = st.getPath().getName()
            if name.startswith("_") or name.startswith(".") or name.endswith(".crc"):
                continue
            out.append((full[len(base):] if full.startswith(base) else name, full))
        return sorted(out)

    def children(self, p: str) -> list:
        if not self.exists(p):
            return []
        return sorted(str(st.getPath().getName()) for st in self.fs.listStatus(self.path(p)))
