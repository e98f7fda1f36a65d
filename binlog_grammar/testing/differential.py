"""Differential checks of the decoder against a real MariaDB server.

`DiffServer` keeps one throwaway MariaDB (binlog_grammar.testing.mariadb) for many examples: each `Case`
(binlog_grammar.testing.schema) runs in a fresh database and binlog files of its own, under the
case's settings (set with SET GLOBAL, so the server is never restarted). `DiffServer.check(case)`
runs it and returns a `Result`:

1. The workload runs statement by statement in autocommit, each statement given a GTID sequence
   number of its own (SET gtid_seq_no), and after each one the table is SELECTed with every column
   rendered unambiguously (HEX() of binary values, HEX(CONVERT(... USING utf8mb4)) of text,
   CAST(... AS CHAR) of numbers and temporal values, the index or bitmask of ENUM and SET,
   ST_SRID() and ST_AsBinary() of geometry). `expected_value` turns that text into the Python
   value the decoder's contract (README "Row changes and column values") gives.
2. The binlog files are decoded with the Python API (binlog_grammar.binlog.stream / rows, the fast path,
   iter_row_changes and the construct reference path must agree exactly) and the changes of each
   statement are applied to the table as it was before the statement: a before image must find
   its row (on the columns it holds), an after image becomes the row; the result must be the table
   SELECT shows after the statement, row for row and value for value. Each image must hold exactly
   the columns binlog_row_image says (`image_columns`). With binlog_row_metadata=MINIMAL the
   columns are `@1`, `@2`, ... and ENUM/SET values their index/bitmask.
3. `binlog-grammar dump --format jsonl --rows-only`: each record's images are the JSON forms
   (binlog_grammar.output.dump.json_value) of the values SELECT showed.
4. `binlog-grammar dump` (text): its `###` lines, parsed by tests/oracle.py's parser, are those
   `mariadb-binlog -vv --base64-output=decode-rows` prints, value for value and type comment for
   type comment (compressed columns' values excepted: mariadb-binlog prints their stored bytes).
   Done when an oracle module is given.
5. `binlog-grammar sql` (the CLI output is the API's `render_sql`) replayed into a second database
   holding the same empty table gives the same rows as the source; with binlog_row_image=FULL the
   flashback script then empties it again. With MINIMAL metadata the names and the primary key are
   supplied as a schema (`--schema`).

Every mismatch becomes a line of `Result.problems`; `Result.wrong` counts wrong values.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import os
import re
import subprocess
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from .schema import Case, Settings

UTC = dt.timezone.utc
SERVER_OPTIONS = ["--default-time-zone=+00:00", "--max-allowed-packet=64M",
                  "--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0",
                  "--binlog-row-metadata=FULL", "--log-bin-compress-min-len=10",
                  "--skip-innodb-adaptive-hash-index"]
SESSION = "SET time_zone = '+00:00'; SET sql_mode = ''; SET SESSION innodb_strict_mode = OFF;\n"

INTEGER_TYPES = {"tinyint", "smallint", "mediumint", "int", "bigint"}
GEOMETRY_TYPES = {"geometry", "point", "linestring", "polygon", "multipoint", "multilinestring",
                  "multipolygon", "geometrycollection"}
BLOB_TYPES = {"tinyblob", "blob", "mediumblob", "longblob", "tinytext", "text", "mediumtext",
              "longtext"}


# -- the SELECT side ------------------------------------------------------------------------------

@dataclass
class ColInfo:
    """A column as information_schema.COLUMNS states it."""

    name: str
    position: int  # 1-based
    data_type: str
    column_type: str
    charset: str | None
    nullable: bool
    key: bool  # part of the primary key
    extra: str

    @property
    def blob(self) -> bool:
        return self.data_type in BLOB_TYPES

    @property
    def compressed(self) -> bool:
        return "compressed" in self.column_type.lower()


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def render(c: ColInfo) -> str:
    """A SELECT expression that shows the stored value of column c unambiguously."""
    n = quote(c.name)
    t = c.data_type
    if t in INTEGER_TYPES or t in ("decimal", "date", "datetime", "timestamp", "time"):
        return f"CAST({n} AS CHAR)"
    if t in ("float", "double"):  # the exact stored value, as the shortest text of a double
        return f"CAST({n} AS DOUBLE)"  # (CAST AS CHAR rounds a DOUBLE(M,D) to D digits)
    if t in ("bit", "year"):
        return f"CAST({n} AS UNSIGNED)"
    if t in ("enum", "set"):  # index or bitmask, and the member text
        return f"CONCAT(CAST({n} + 0 AS UNSIGNED), ':', HEX(CONVERT({n} USING utf8mb4)))"
    if t in GEOMETRY_TYPES:
        return f"CONCAT(ST_SRID({n}), ':', HEX(ST_AsBinary({n})))"
    if c.charset is not None and c.charset != "binary":  # text: what the server means by it
        return f"HEX(CONVERT({n} USING utf8mb4))"
    return f"HEX({n})"  # binary strings, INET4, INET6, UUID


_DATETIME_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?$")
_TIME_RE = re.compile(r"^(-?)(\d+):(\d{2}):(\d{2})(?:\.(\d+))?$")


def _micro(frac):
    return int(frac.ljust(6, "0")) if frac else 0


def expected_value(c: ColInfo, text: str, full_metadata: bool):
    """The Python value the decoder must give for a column whose SELECT rendering is `text`."""
    if text == "NULL":
        return None
    t = c.data_type
    if t in INTEGER_TYPES or t in ("bit", "year"):
        return int(text)
    if t == "decimal":
        return Decimal(text)
    if t in ("float", "double"):
        return float(text)
    if t == "date":
        y, m, d = (int(x) for x in text.split("-"))
        try:
            return dt.date(y, m, d)
        except ValueError:
            return text
    if t in ("datetime", "timestamp"):
        m = _DATETIME_RE.match(text)
        if not m:
            raise ValueError(f"{c.name}: unexpected {t} text {text!r}")
        parts = [int(x) for x in m.groups()[:6]] + [_micro(m[7])]
        if t == "timestamp" and not any(parts):
            return text  # the zero timestamp
        try:
            return dt.datetime(*parts, tzinfo=UTC if t == "timestamp" else None)
        except ValueError:
            return text
    if t == "time":
        m = _TIME_RE.match(text)
        if not m:
            raise ValueError(f"{c.name}: unexpected TIME text {text!r}")
        td = dt.timedelta(hours=int(m[2]), minutes=int(m[3]), seconds=int(m[4]),
                          microseconds=_micro(m[5]))
        return -td if m[1] else td
    if t in ("enum", "set"):
        number, hexed = text.split(":", 1)
        if not full_metadata:  # no member names in the binlog: index / bitmask
            return int(number)
        s = bytes.fromhex(hexed).decode("utf-8")
        if t == "enum":
            return s
        return frozenset(s.split(",")) if s else frozenset()
    if t in GEOMETRY_TYPES:
        from ..binlog.rows import Geometry

        srid, wkb = text.split(":", 1)
        return Geometry(int(srid), bytes.fromhex(wkb))
    data = bytes.fromhex(text)
    if c.charset is None or c.charset == "binary":
        return data
    return data.decode("utf-8")


def canon(v):
    """A hashable form of a value that tells apart what `==` would not: types, DECIMAL scales,
    the sign of a zero float, time zones."""
    if isinstance(v, Decimal):
        return ("Decimal", str(v))
    if isinstance(v, float):
        return ("float", repr(v))
    if isinstance(v, dt.datetime):
        return ("datetime", v.isoformat())
    if isinstance(v, (dict, list)):
        return (type(v).__name__, json.dumps(v, sort_keys=True, default=str))
    if isinstance(v, (bytearray, memoryview)):
        return ("bytearray", bytes(v))
    return (type(v).__name__, v)


def short(v, limit=160):
    r = repr(v)
    return r if len(r) <= limit else f"{r[:limit - 30]}...({len(r)} chars)"


# -- which columns an image holds -------------------------------------------------------------

def image_columns(settings: Settings, cols: list, op: str, named) -> tuple:
    """(before, after) sets of column names MariaDB 10.11 writes in a row change's images (None
    for an image the change has not), for binlog_row_image FULL / MINIMAL / NOBLOB:

    - FULL, and any table without a primary key: every column in every image;
    - MINIMAL: before images the primary key; after images the columns the statement names (the
      INSERT's column list and an AUTO_INCREMENT key, the columns an UPDATE assigns);
    - NOBLOB: every column but the BLOB/TEXT ones (JSON included, GEOMETRY and VARCHAR COMPRESSED
      not), plus the primary key in before images and the named BLOB/TEXT columns in after images.
    """
    every = {c.name for c in cols}
    key = {c.name for c in cols if c.key}
    named = set(named or ())
    if op == "c":
        named |= {c.name for c in cols if "auto_increment" in c.extra}
    if settings.row_image == "FULL" or not key:
        before = after = every
    elif settings.row_image == "MINIMAL":
        before, after = key, named & every
    else:
        plain = {c.name for c in cols if not c.blob}
        before, after = plain | key, plain | (named & every)
    return (None if op == "c" else before), (None if op == "d" else after)


# -- running a case -------------------------------------------------------------------------------

@dataclass
class Run:
    """What the server did with a case."""

    db: str
    columns: list  # [ColInfo]
    primary_key: list  # names, in key order
    snapshots: list  # [rows], rows = [[SELECT text per column]]; [0] is the empty table
    files: list
    base_seq: int
    errors: list  # (statement index or None, error text) of the workload
    seconds: float = 0.0


@dataclass
class Result:
    """The outcome of checking one case."""

    case: Case
    statements: int = 0
    changes: int = 0
    values: int = 0  # decoded values compared with SELECT
    wrong: int = 0  # of them, wrong
    jsonl_values: int = 0
    jsonl_wrong: int = 0
    oracle_values: int = 0
    oracle_wrong: int = 0
    replayed: bool = False
    problems: list = field(default_factory=list)
    workload_errors: list = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems and not self.workload_errors

    def report(self, limit=40) -> str:
        lines = []
        if self.workload_errors:
            lines.append("the workload itself failed on the server (a generator problem):")
            lines += [f"  {e}" for e in self.workload_errors[:limit]]
        if self.problems:
            lines.append(f"{len(self.problems)} problems ({self.wrong} wrong values of {self.values}; "
                         f"jsonl {self.jsonl_wrong}/{self.jsonl_values}; mariadb-binlog "
                         f"{self.oracle_wrong}/{self.oracle_values}):")
            lines += [f"  {p}" for p in self.problems[:limit]]
            if len(self.problems) > limit:
                lines.append(f"  ... {len(self.problems) - limit} more")
        lines.append("reproduce (SQL):")
        lines += ["  " + line for line in self.case.reproducer().splitlines()]
        lines.append("as a regression example (Python):")
        lines.append("  " + repr(self.case))
        return "\n".join(lines)


def _mysql(db, script: str, database=None):
    """Run a script with the mariadb client, going on after errors: (stdout, [error lines])."""
    cmd = db._client() + ["--batch", "--skip-column-names", "--force"]
    if database:
        cmd.append(database)
    r = subprocess.run(cmd, input=script.encode("utf-8", "surrogateescape"), capture_output=True)
    errors = [line for line in r.stderr.decode("utf-8", "replace").splitlines()
              if line.startswith("ERROR")]
    return r.stdout.decode("utf-8", "surrogateescape"), errors


_ERROR_LINE = re.compile(r"^ERROR \d+ \(\w+\) at line (\d+)")


class DiffServer:
    """One MariaDB server for many cases: `with DiffServer() as s: result = s.check(case)`."""

    def __init__(self, db=None, oracle=None, basedir=None):
        from .mariadb import MariaDB

        self.own = db is None
        # a folder of its own name: tools that tidy up binlog-grammar-mariadb-* leave it alone
        base = Path(basedir or tempfile.mkdtemp(prefix="bg-diff-srv-"))
        self.db = db or MariaDB(SERVER_OPTIONS, basedir=base)
        self.oracle = oracle
        self.settings = None
        self.seq = 1_000_000
        self.count = 0
        self.tmp = self.db.tmp / "schemas"
        self.tmp.mkdir(parents=True, exist_ok=True)

    def __enter__(self):
        if self.own:
            self.db.start()
        return self

    def __exit__(self, *exc):
        if self.own:
            self.db.cleanup()
        import shutil

        shutil.rmtree(self.tmp, ignore_errors=True)

    def use(self, settings: Settings):
        if settings != self.settings:
            self.db.sql(settings.sql())
            self.settings = settings

    # -- the server side

    def run(self, case: Case) -> Run:
        db = self.db
        self.use(case.settings)
        self.count += 1
        name = f"dx{self.count}"
        started = time.monotonic()
        out, errors = _mysql(db, SESSION + f"SET sql_log_bin = 0; CREATE DATABASE {name} CHARACTER "
                             f"SET utf8mb4; SET sql_log_bin = 1;\nUSE {name};\n{case.create};\n"
                             "SELECT COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE, COLUMN_TYPE, "
                             "IFNULL(CHARACTER_SET_NAME, 'NULL'), IS_NULLABLE, COLUMN_KEY, EXTRA "
                             "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() "
                             "AND TABLE_NAME = 't' ORDER BY ORDINAL_POSITION;\n"
                             "SELECT '#K#', COLUMN_NAME FROM information_schema.STATISTICS WHERE "
                             "TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 't' AND INDEX_NAME = "
                             "'PRIMARY' ORDER BY SEQ_IN_INDEX;\n")
        cols, pk = [], []
        for line in out.split("\n")[:-1]:
            f = line.split("\t")
            if f[0] == "#K#":
                pk.append(f[1])
                continue
            cols.append(ColInfo(f[0], int(f[1]), f[2], f[3], None if f[4] == "NULL" else f[4],
                                f[5] == "YES", f[6] == "PRI", f[7].lower()))
        run = Run(name, cols, pk, [[]], [], self.seq, [(None, e) for e in errors])
        if errors or not cols:
            run.errors = run.errors or [(None, "no table was created")]
            return run
        select = "SELECT " + ", ".join(render(c) for c in cols) + " FROM t;\n"
        parts = [SESSION, f"SET SESSION binlog_row_image = {case.settings.row_image};\n"]
        line_of = {}
        for k, st in enumerate(case.statements):
            parts.append(f"SET gtid_seq_no = {self.seq + k};\n")
            line_of[sum(p.count("\n") for p in parts) + 1] = k
            parts.append(st.sql.replace("\n", " ") + ";\n")
            parts.append(f"SELECT '#S#', {k + 1};\n" + select)
        before = set(db.binlogs())
        db.sql("FLUSH BINARY LOGS")
        out, errors = _mysql(db, "".join(parts), name)
        db.sql("FLUSH BINARY LOGS")
        run.files = [f for f in db.binlogs() if f not in before][:-1]
        self.seq += len(case.statements) + 100
        for e in errors:
            m = _ERROR_LINE.match(e)
            run.errors.append((line_of.get(int(m[1])) if m else None, e))
        snaps = run.snapshots
        for line in out.split("\n")[:-1]:
            f = line.split("\t")
            if f[0] == "#S#":
                while len(snaps) < int(f[1]):
                    snaps.append(None)  # a statement whose SELECT gave nothing (an error)
                snaps.append([])
                continue
            if len(f) != len(cols):
                run.errors.append((None, f"a SELECT row of {len(f)} fields for {len(cols)} columns"))
                continue
            snaps[-1].append(f)
        run.seconds = time.monotonic() - started
        return run

    def cleanup(self, run: Run):
        self.db.sql(f"SET sql_log_bin = 0; DROP DATABASE IF EXISTS {run.db}; "
                    f"DROP DATABASE IF EXISTS {run.db}_r;")
        names = self.db.binlogs()
        if len(names) > 1:
            self.db.sql(f"PURGE BINARY LOGS TO '{names[-1].name}'")

    # -- checking

    def alive(self) -> bool:
        return (self.db.proc is not None and self.db.proc.poll() is None
                and self.db.socket.exists())

    def restart(self) -> str:
        """Start the server again after it died; the tail of its error log."""
        tail = self.db.log_tail()
        self.db.stop()
        self.db.start()
        if self.settings is not None:
            self.db.sql(self.settings.sql())
        return tail

    def check(self, case: Case, keep=False) -> Result:
        started = time.monotonic()
        res = Result(case, statements=len(case.statements))
        if not self.alive():
            self.restart()
        try:
            run = self.run(case)
        except RuntimeError as e:
            run = None
            res.workload_errors.append(f"{e}")
        if not self.alive():
            res.workload_errors.append("the server died: " + self.restart()[-1500:])
            return res
        if run is None:
            return res
        res.workload_errors = [e if k is None else f"statement {k + 1}: {e}" for k, e in run.errors]
        if not res.workload_errors:
            try:
                check_run(self, case, run, res)
            except Exception as e:  # noqa: BLE001 - any crash of the project is a finding
                import traceback

                res.problems.append(f"checking crashed: {type(e).__name__}: {e}\n"
                                    + traceback.format_exc(limit=8))
        if not keep:
            try:
                self.cleanup(run)
            except RuntimeError as e:
                res.problems.append(f"cleaning up failed: {e}")
        if not self.alive():
            res.workload_errors.append("the server died: " + self.restart()[-3000:])
        res.seconds = time.monotonic() - started
        return res


# -- the checks ---------------------------------------------------------------------------------

class _Wild:
    def __repr__(self):
        return "<not in the image>"


WILD = _Wild()


def _key_of(c: ColInfo, full: bool) -> str:
    return c.name if full else f"@{c.position}"


def _rows(run: Run, snap, full: bool) -> list:
    return [{c.name: expected_value(c, text, full) for c, text in zip(run.columns, row)}
            for row in snap]


def _decoded_changes(files, schemas=None):
    """Changes by the stream (what the CLI reads), iter_row_changes, and the construct path."""
    from ..binlog.reader import BinlogFile, inner_events
    from ..binlog.rows import RowDecoder, iter_row_changes
    from ..binlog.stream import open_stream

    stream = open_stream([str(f) for f in files], schemas=schemas)
    txs = list(stream.transactions())
    fallbacks = {os.path.basename(str(p)): dict(c) for p, c in
                 (getattr(stream, "fallbacks", None) or {}).items() if c}
    api = list(iter_row_changes([str(f) for f in files], schemas=schemas))
    slow = []
    for path in files:
        dec = RowDecoder(schemas, fast=False)
        bf = BinlogFile(str(path), fast=False)
        for ev in bf:
            evs = [ev]
            if ev.type is not None and any(d.target == "events" for d in ev.type.decode):
                evs += list(inner_events(ev, bf.state))
            for e in evs:
                if e.type is None:
                    continue
                if e.type.name == "TABLE_MAP_EVENT":
                    dec.table_map(e)
                elif e.type.row_op:
                    slow += dec.changes(e)
    return txs, api, slow, fallbacks


def _change_key(ch):
    def img(d):
        return None if d is None else tuple(sorted((k, canon(v)) for k, v in d.items()))

    return (ch.op, ch.db, ch.table, ch.pos, img(ch.before), img(ch.after))


def check_run(server: DiffServer, case: Case, run: Run, res: Result):
    settings = case.settings
    full = settings.metadata == "FULL"
    cols = run.columns
    by_key = {_key_of(c, full): c for c in cols}
    txs, api, slow, fallbacks = _decoded_changes(run.files)
    if fallbacks:  # a server's binlog is valid: the generated readers must take all of it
        res.problems.append(f"the fast readers fell back to the construct structs: {fallbacks}")
    changes = [ch for tx in txs for ch in tx.changes]
    res.changes = len(changes)
    # the three Python paths agree exactly
    ref = [_change_key(ch) for ch in changes]
    for label, other in (("iter_row_changes", api), ("the construct path (fast=False)", slow)):
        keys = [_change_key(ch) for ch in other]
        if keys != ref:
            bad = next((i for i, (a, b) in enumerate(zip(keys, ref)) if a != b), min(len(keys), len(ref)))
            res.problems.append(f"{label} gives other changes than the stream: {len(keys)} vs "
                                f"{len(ref)}, first difference at change {bad}")
    # changes by statement
    per_stmt = defaultdict(list)
    for tx in txs:
        chs = tx.changes
        if not chs:
            continue
        k = int(tx.gtid.rsplit("-", 1)[1]) - run.base_seq if tx.gtid else -1
        if not 0 <= k < len(case.statements):
            res.problems.append(f"row changes in a transaction of no statement (GTID {tx.gtid})")
            continue
        per_stmt[k] += chs
    expected_images = {}  # id(change) -> (before row, after row) as SELECT showed them
    for k, st in enumerate(case.statements):
        prev, cur = run.snapshots[k], run.snapshots[k + 1]
        _check_statement(res, settings, run, k, st, _rows(run, prev, full), _rows(run, cur, full),
                         per_stmt.get(k, []), by_key, expected_images)
    _check_jsonl(res, run, changes, expected_images, by_key)
    if server.oracle is not None:
        _check_oracle(res, server.oracle, run)
    _check_replay(res, server, case, run, full)


def _named(image, by_key):
    return {by_key[k].name: v for k, v in image.items() if k in by_key}


def _matches(row, image):
    return all(canon(row.get(n, WILD)) == canon(v) or row.get(n) is WILD for n, v in image.items())


def _diff(row, image):
    return [n for n, v in image.items() if row.get(n) is not WILD and canon(row.get(n)) != canon(v)]


def _nearest(rows, image):
    if not rows:
        return None, list(image)
    best = min(rows, key=lambda r: len(_diff(r, image)))
    return best, _diff(best, image)


def _describe(run, where, row, image, names):
    types = {c.name: c.column_type for c in run.columns}
    return "; ".join(f"{where} {n} ({types.get(n)}): SELECT {short(row.get(n) if row else None)}, "
                     f"decoded {short(image.get(n))}" for n in names)


def _check_statement(res, settings, run, k, st, prev, cur, chs, by_key, expected_images):
    label = f"statement {k + 1} ({st.kind})"
    if prev is None or cur is None:
        res.problems.append(f"{label}: no snapshot")
        return
    pool = list(prev)
    produced = []  # (row, change, decoded names)
    for i, ch in enumerate(chs):
        unknown = [k2 for img in (ch.before, ch.after) if img for k2 in img if k2 not in by_key]
        if unknown:
            res.problems.append(f"{label} change {i}: columns {unknown} the table has not")
        want_before, want_after = image_columns(settings, run.columns, ch.op, st.named)
        before = None if ch.before is None else _named(ch.before, by_key)
        after = None if ch.after is None else _named(ch.after, by_key)
        for side, got, want in (("before", before, want_before), ("after", after, want_after)):
            if (got is None) != (want is None):
                res.problems.append(f"{label} change {i} ({ch.op}): {side} image "
                                    f"{'missing' if got is None else 'unexpected'}")
            elif got is not None and set(got) != want:
                res.problems.append(f"{label} change {i} ({ch.op}): {side} image holds "
                                    f"{sorted(got)}, expected {sorted(want)} "
                                    f"(binlog_row_image={settings.row_image})")
        old = None
        if before is not None:
            res.values += len(before)
            j = next((j for j, r in enumerate(pool) if _matches(r, before)), None)
            if j is None:
                old, bad = _nearest(pool, before)
                res.wrong += len(bad)
                res.problems.append(f"{label} change {i} ({ch.op}): the before image matches no "
                                    f"row; " + _describe(run, "before", old, before, bad))
                if old is not None:
                    pool.remove(old)
                old = dict(old or {})
            else:
                old = pool.pop(j)
                expected_images[id(ch)] = (old, None)
        if after is not None:
            res.values += len(after)
            if ch.op == "u":
                new = dict(old or {})
                new.update(after)
            else:
                new = {c.name: after.get(c.name, WILD) for c in run.columns}
            produced.append((new, ch, set(after)))
    # the rows the statement did not touch, then the rows it made, against the SELECT
    left = {}
    for r in cur:
        left.setdefault(_row_key(r), []).append(r)
    for r in pool:
        key = _row_key(r)
        if left.get(key):
            left[key].pop()
        else:
            res.problems.append(f"{label}: a row the decoded changes leave as it was is not in the "
                                f"table: {short(r, 400)}")
    unmatched = []
    for new, ch, names in produced:
        if any(v is WILD for v in new.values()):
            unmatched.append((new, ch, names))
            continue
        key = _row_key(new)
        if left.get(key):
            row = left[key].pop()
            b = expected_images.get(id(ch), (None, None))[0]
            expected_images[id(ch)] = (b, row)
        else:
            unmatched.append((new, ch, names))
    rest = [r for rs in left.values() for r in rs]
    for new, ch, names in unmatched:
        cand = [r for r in rest if _matches(r, {n: v for n, v in new.items() if v is not WILD})]
        if cand:
            rest.remove(cand[0])
            b = expected_images.get(id(ch), (None, None))[0]
            expected_images[id(ch)] = (b, cand[0])
            continue
        image = {n: new[n] for n in names}
        row, bad = _nearest(rest, {n: v for n, v in new.items() if v is not WILD})
        bad_decoded = [n for n in bad if n in names]
        res.wrong += len(bad_decoded) or 1
        res.problems.append(f"{label} ({ch.op} at {os.path.basename(ch.file)}:{ch.pos}): the row "
                            "it makes is not in the table; "
                            + (_describe(run, "after", row, image, bad_decoded) if bad_decoded else
                               f"columns that differ: {bad}"))
        if row is not None:
            rest.remove(row)
    for r in rest:
        res.problems.append(f"{label}: a row of the table no decoded change gives: {short(r, 400)}")


def _row_key(row):
    return tuple(sorted((n, canon(v)) for n, v in row.items()))


def _capture(argv) -> tuple:
    from ..cli import main

    out = io.StringIO()
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _check_jsonl(res, run, changes, expected_images, by_key):
    from ..output.dump import json_value

    code, out, err = _capture(["dump", "--format", "jsonl", "--rows-only", *map(str, run.files)])
    if code != 0:
        res.problems.append(f"dump --format jsonl exited {code}: {err.strip()[:500]}")
        return
    try:
        # lines end with "\n" only: str.splitlines() would also split at U+0085, U+2028 ...,
        # which JSON strings may hold as they are
        records = [json.loads(line) for line in out.split("\n") if line]
    except ValueError as e:
        res.problems.append(f"dump --format jsonl printed a line that is not JSON: {e}")
        return
    if len(records) != len(changes):
        res.problems.append(f"dump --format jsonl: {len(records)} records for {len(changes)} changes")
        return
    for i, (rec, ch) in enumerate(zip(records, changes)):
        if (rec.get("op"), rec["source"].get("db"), rec["source"].get("table")) != (ch.op, ch.db, ch.table):
            res.problems.append(f"jsonl record {i}: op/db/table {rec.get('op')} "
                                f"{rec['source'].get('db')}.{rec['source'].get('table')}")
            continue
        exp = expected_images.get(id(ch))
        if exp is None:
            continue
        for side, row in zip(("before", "after"), exp):
            image = getattr(ch, side)
            if row is None or image is None:
                continue
            got = rec.get(side) or {}
            for key in image:
                c = by_key.get(key)
                if c is None:
                    continue
                want = json_value(row[c.name])
                res.jsonl_values += 1
                if got.get(key, WILD) != want or type(got.get(key)) is not type(want):
                    res.jsonl_wrong += 1
                    res.problems.append(f"jsonl record {i} {side} {key} ({c.column_type}): "
                                        f"expected {short(want)}, got {short(got.get(key, '<none>'))}")


UNCOMPARABLE = ("COMPRESSED",)  # mariadb-binlog prints the stored (compressed) bytes


def _check_oracle(res, oracle, run):
    code, out, err = _capture(["dump", *map(str, run.files)])
    if code != 0:
        res.problems.append(f"dump exited {code}: {err.strip()[:500]}")
        return
    ours = oracle.parse(out).changes
    theirs = []
    runner = getattr(oracle.run, "__wrapped__", oracle.run)
    for f in run.files:
        r = runner(f)
        if r.returncode != 0 or r.problems:
            res.problems.append(f"mariadb-binlog on {f.name}: exit {r.returncode} "
                                f"{r.stderr.strip()[:300]} {r.problems[:3]}")
        theirs += r.changes
    if len(ours) != len(theirs):
        res.problems.append(f"dump prints {len(ours)} changes, mariadb-binlog -vv {len(theirs)}")
        return
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if (a.op, a.db, a.table) != (b.op, b.db, b.table):
            res.problems.append(f"dump change {i}: {a.op} {a.db}.{a.table}, mariadb-binlog "
                                f"{b.op} {b.db}.{b.table}")
            continue
        for side in ("before", "after"):
            mine, other = getattr(a, side), getattr(b, side)
            if (mine is None) != (other is None):
                res.problems.append(f"dump change {i} {side}: one image, mariadb-binlog another")
                continue
            if mine is None:
                continue
            if set(mine) != set(other):
                res.problems.append(f"dump change {i} {side}: columns @{sorted(mine)}, "
                                    f"mariadb-binlog @{sorted(other)}")
            for n in sorted(set(mine) & set(other)):
                (vt, ct), (ovt, oct_) = mine[n], other[n]
                res.oracle_values += 1
                if ct != oct_:
                    res.oracle_wrong += 1
                    res.problems.append(f"dump change {i} {side} @{n}: type comment {ct!r}, "
                                        f"mariadb-binlog {oct_!r}")
                elif vt != ovt and not any(u in ct for u in UNCOMPARABLE):
                    res.oracle_wrong += 1
                    res.problems.append(f"dump change {i} {side} @{n} ({ct}): {short(vt)}, "
                                        f"mariadb-binlog {short(ovt)}")


def _check_replay(res, server, case, run, full):
    from ..output.sql import render_sql
    from ..binlog.stream import open_stream

    files = [str(f) for f in run.files]
    schemas = None
    argv = ["sql"]
    if not full:
        schemas = {f"{run.db}.t": {"columns": [c.name for c in run.columns],
                                   "primary_key": list(run.primary_key)}}
        path = server.tmp / f"{run.db}.json"
        path.write_text(json.dumps(schemas))
        argv += ["--schema", str(path)]
    code, out, err = _capture(argv + files)
    api = "".join(render_sql(open_stream(files, schemas=schemas).transactions()))
    if code != 0:
        res.problems.append(f"sql exited {code}: {err.strip()[:500]}")
    elif out != api:
        res.problems.append("the sql command prints another script than render_sql")
    target = f"{run.db}_r"
    script = "".join(render_sql(open_stream(files, schemas=schemas).transactions(),
                                db_map={run.db: target}))
    parts = [f"SET sql_log_bin = 0; CREATE DATABASE {target} CHARACTER SET utf8mb4; USE {target};\n",
             SESSION, case.create, ";\n", script, "SELECT '#R#';\n",
             "SELECT " + ", ".join(render(c) for c in run.columns) + f" FROM {target}.t;\n"]
    flash = case.settings.row_image == "FULL"
    if flash:
        parts += ["".join(render_sql(open_stream(files, schemas=schemas).transactions(),
                                     flashback=True, db_map={run.db: target})),
                  f"SELECT '#F#', COUNT(*) FROM {target}.t;\n"]
    out, errors = _mysql(server.db, "".join(parts))
    for e in errors:
        res.problems.append(f"replaying the sql output: {e[:500]}")
    rows, count, mode = [], None, None
    for line in out.split("\n")[:-1]:
        f = line.split("\t")
        if f[0] == "#R#":
            mode = "r"
        elif f[0] == "#F#":
            count = int(f[1])
        elif mode == "r":
            rows.append(f)
    want = sorted(run.snapshots[-1] or [])
    if sorted(rows) != want:
        only_r = [r for r in sorted(rows) if r not in want][:3]
        only_s = [r for r in want if r not in rows][:3]
        res.problems.append(f"replay of the sql output: {len(rows)} rows, the source {len(want)}; "
                            f"only in the replay {short(only_r, 600)}; only in the source "
                            f"{short(only_s, 600)}")
    elif flash and count != 0:
        res.problems.append(f"flashback of the sql output left {count} rows (expected 0)")
    else:
        res.replayed = True


# -- summaries ------------------------------------------------------------------------------------

@dataclass
class Tally:
    """Figures over many cases."""

    cases: int = 0
    statements: int = 0
    changes: int = 0
    values: int = 0
    wrong: int = 0
    jsonl_values: int = 0
    jsonl_wrong: int = 0
    oracle_values: int = 0
    oracle_wrong: int = 0
    replayed: int = 0
    failed: int = 0
    workload_errors: int = 0
    seconds: float = 0.0

    def add(self, r: Result):
        self.cases += 1
        self.statements += r.statements
        self.changes += r.changes
        self.values += r.values
        self.wrong += r.wrong
        self.jsonl_values += r.jsonl_values
        self.jsonl_wrong += r.jsonl_wrong
        self.oracle_values += r.oracle_values
        self.oracle_wrong += r.oracle_wrong
        self.replayed += r.replayed
        self.failed += bool(r.problems)
        self.workload_errors += bool(r.workload_errors)
        self.seconds += r.seconds

    def line(self) -> str:
        return (f"{self.cases} schemas, {self.statements} statements, {self.changes} row changes, "
                f"{self.values} values compared with SELECT ({self.wrong} wrong), jsonl "
                f"{self.jsonl_values} ({self.jsonl_wrong} wrong), mariadb-binlog {self.oracle_values} "
                f"({self.oracle_wrong} wrong), {self.replayed} replayed, {self.failed} failed, "
                f"{self.workload_errors} workload errors, {self.seconds:.0f}s")
