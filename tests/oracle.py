"""mariadb-binlog as an independent oracle for row values.

`run(path)` runs `mariadb-binlog --no-defaults -vv --base64-output=decode-rows FILE` and parses the
`###` lines it prints for rows events into `OracleChange`s:

    ### UPDATE `shop`.`customers`
    ### WHERE
    ###   @1=1 /* INT meta=0 nullable=0 is_null=0 */
    ### SET
    ###   @1=1 /* INT meta=0 nullable=0 is_null=0 */

becomes OracleChange(op="u", db="shop", table="customers", before={1: ("1", "INT meta=0 nullable=0
is_null=0")}, after={1: (...)}, at=...). Keys are column numbers (1-based, as `@N`); values are
(the text after `@N=`, the type comment without `/* */`). The text is taken as printed, trailing
spaces included (a FLOAT is printed with `%-20g`, padded to 20 characters).

Where the rows are: mariadb-binlog prints the rows of a statement's rows events together, when it
reaches the event flagged STMT_END_F. `at` is the `# at` offset of that event, so every change
printed with it comes from a rows event at or before `at`, and after the previous group's `at`.

Multi-line values: mariadb-binlog writes every byte below 0x20 of a string as `\\xNN`, so a value
never holds a newline and one `###   @N=` line is one value. Should a value ever span lines (another
build or version of the tool), the lines that follow it up to the one ending with the type comment
are joined back with `\\n`; the comment is the last ` /* ... */` of the joined text.

The output is read as bytes and decoded as UTF-8 with surrogateescape: strings are printed as their
stored bytes in whatever charset the column has, and `.encode("utf-8", "surrogateescape")` gives
them back exactly.

When mariadb-binlog cannot go on (a damaged file, an event it does not know, a column type it
cannot print), it stops: `OracleRun.stopped_at` is then the offset where it stopped, when known,
and the rows of a statement group still unprinted at that point are missing from `changes`.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

TOOL = "mariadb-binlog"
ARGS = ["--no-defaults", "-vv", "--base64-output=decode-rows"]

_AT = re.compile(r"^# at (\d+)$")
_HEAD = re.compile(r"^### (INSERT INTO|UPDATE|DELETE FROM) `((?:[^`]|``)*)`\.`((?:[^`]|``)*)`$")
_COLUMN = re.compile(r"^###   @(\d+)=(.*) /\* (.*?) \*/$", re.S)
_STOP_OFFSET = re.compile(r"Could not read entry at offset (\d+)")
_OPS = {"INSERT INTO": "c", "UPDATE": "u", "DELETE FROM": "d"}
_IMAGE = {("c", "SET"): "after", ("u", "WHERE"): "before", ("u", "SET"): "after",
          ("d", "WHERE"): "before"}
_MAX_JOINED_LINES = 10000


@dataclass
class OracleChange:
    """One row change as mariadb-binlog prints it."""

    op: str  # c insert, u update, d delete
    db: str
    table: str
    before: Optional[dict] = None  # {column number: (text, type comment)}
    after: Optional[dict] = None
    at: Optional[int] = None  # `# at` offset of the event whose output holds this change
    line: int = 0  # line number (1-based) of its `###` header in the output


@dataclass
class OracleRun:
    """The parsed output of one mariadb-binlog run."""

    path: str
    returncode: int
    stderr: str
    changes: list = field(default_factory=list)
    positions: list = field(default_factory=list)  # every `# at` offset, in order
    problems: list = field(default_factory=list)  # `###` lines that could not be parsed

    @property
    def stopped_at(self) -> Optional[int]:
        """Where mariadb-binlog stopped reading, or None when it read the whole file: the offset
        its error names, else the last event it announced before exiting with an error."""
        m = _STOP_OFFSET.search(self.stderr)
        if m:
            return int(m[1])
        if self.returncode != 0:
            return self.positions[-1] if self.positions else 4
        return None

    @property
    def last_flush(self) -> Optional[int]:
        """`at` of the last group of changes printed."""
        return self.changes[-1].at if self.changes else None


def tool() -> Optional[str]:
    """Path of mariadb-binlog, or None when it is not installed."""
    return shutil.which(TOOL)


def _unquote_ident(text: str) -> str:
    return text.replace("``", "`")


def parse(output: str, path: str = "", returncode: int = 0, stderr: str = "") -> OracleRun:
    """Parse mariadb-binlog -vv output (already decoded to str) into an OracleRun."""
    run = OracleRun(path, returncode, stderr)
    lines = output.split("\n")
    at = None
    current = None
    image = None
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        m = _AT.match(line)
        if m:
            at = int(m[1])
            run.positions.append(at)
            current = image = None
            continue
        if not line.startswith("###"):
            current = image = None
            continue
        m = _HEAD.match(line)
        if m:
            current = OracleChange(_OPS[m[1]], _unquote_ident(m[2]), _unquote_ident(m[3]), at=at,
                                   line=i)
            run.changes.append(current)
            image = None
            continue
        if line in ("### SET", "### WHERE"):
            key = _IMAGE.get((current.op, line[4:])) if current is not None else None
            if key is None:
                run.problems.append((i, line, "image clause outside a change"))
                continue
            image = {}
            setattr(current, key, image)
            continue
        if line.startswith("###   @"):
            text, first = line, i
            m = _COLUMN.match(text)
            while m is None and i < len(lines) and i - first < _MAX_JOINED_LINES:
                nxt = lines[i]
                if nxt.startswith("###") or _AT.match(nxt):
                    break
                text += "\n" + nxt
                i += 1
                m = _COLUMN.match(text)
            if m is None:
                run.problems.append((first, line, "column value without a type comment"))
                continue
            if image is None:
                run.problems.append((first, line, "column value outside an image"))
                continue
            image[int(m[1])] = (m[2], m[3])
            continue
        run.problems.append((i, line, "unknown ### line"))
    return run


@lru_cache(maxsize=None)
def run(path) -> OracleRun:
    """Run mariadb-binlog on one binlog file and parse what it prints."""
    exe = tool()
    if exe is None:
        raise FileNotFoundError(f"{TOOL} is not installed")
    env = dict(os.environ, TZ="UTC", LC_ALL="C")
    proc = subprocess.run([exe, *ARGS, os.fspath(path)], capture_output=True, env=env,
                          timeout=300)
    return parse(proc.stdout.decode("utf-8", "surrogateescape"), os.fspath(path),
                 proc.returncode, proc.stderr.decode("utf-8", "replace"))
