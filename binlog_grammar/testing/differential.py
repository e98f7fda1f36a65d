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
4. `binlog-grammar dump` (text): its `###` lines, parsed by tests/helpers/oracle.py's parser, are those
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

import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .checks import check_run
from .schema import Case, Settings
# the suite's names for its users (tests/, tools/differential.py), wherever they are defined
from .selects import INTEGER_TYPES, expected_value, image_columns  # noqa: F401
from .selects import SESSION, ColInfo, render, run_script

SERVER_OPTIONS = ["--default-time-zone=+00:00", "--max-allowed-packet=64M",
                  "--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0",
                  "--binlog-row-metadata=FULL", "--log-bin-compress-min-len=10",
                  "--skip-innodb-adaptive-hash-index"]


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
        out, errors = run_script(db, SESSION + f"SET sql_log_bin = 0; CREATE DATABASE {name} CHARACTER "
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
        out, errors = run_script(db, "".join(parts), name)
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
        for name in ("statements", "changes", "values", "wrong", "jsonl_values", "jsonl_wrong",
                     "oracle_values", "oracle_wrong", "replayed", "seconds"):
            setattr(self, name, getattr(self, name) + getattr(r, name))
        self.failed += bool(r.problems)
        self.workload_errors += bool(r.workload_errors)

    def line(self) -> str:
        return (f"{self.cases} schemas, {self.statements} statements, {self.changes} row changes, "
                f"{self.values} values compared with SELECT ({self.wrong} wrong), jsonl "
                f"{self.jsonl_values} ({self.jsonl_wrong} wrong), mariadb-binlog {self.oracle_values} "
                f"({self.oracle_wrong} wrong), {self.replayed} replayed, {self.failed} failed, "
                f"{self.workload_errors} workload errors, {self.seconds:.0f}s")
