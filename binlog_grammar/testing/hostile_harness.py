"""The judge of the hostile-content suite: a real source MariaDB runs a `hostile.Case`, and every
output that can be executed is piped into a real target through the real `mariadb` client.

`Harness` holds two throwaway servers (started once, reused by dropping and recreating schemas):
- the source (binlog_format=ROW, binlog_row_metadata=FULL, binlog_row_image=FULL) runs the case's
  schema and workload, each statement from its hex (`SET @s = X'..'; PREPARE s FROM @s; EXECUTE
  s`), so exactly the drawn bytes are logged; its data is snapshotted before and after the DML
  (`SELECT HEX(..)` of every column of every table of the case's database, rows sorted) and its
  schema (`information_schema` rows, in hex);
- the target holds the canary table `canary.pwned`; each execution sets its GLOBAL sql_mode
  (default, NO_BACKSLASH_ESCAPES, ANSI_QUOTES), prepares it, and pipes the script into
  `mariadb --no-defaults --default-character-set=CS -h127.0.0.1 -P PORT -uroot` (what a DBA types).

`Harness.check(case, charsets, modes)` returns `Execution`s, one per output x charset x mode:
- `sql`: into an empty target, whose schema its replayed DDL makes (output/sql_statements.py);
  the target must then have the source's schema and equal the source after the workload, and
  `flashback` piped after it must bring it back to the source before the workload;
- `dump` (mariadb-binlog's reading form, `-vv --base64-output=decode-rows`) and `dump-text` (this
  project's `--format text`): into an empty target; only the binlog's own statements may run:
  afterwards every database and table there is one of the source's, with the same definition, and
  holds no row (the rows are comments);
- `dump-replay` (dump's default, BINLOG statements): into an empty target, which must then have
  the source's schema and equal the source after the workload;
- every run: the client exits 0, `canary.pwned` is still there, no canary file appeared.
An `Execution` with `problems` is a finding; `summary()` counts them the way tools/hostile.py prints.
"""
from __future__ import annotations

import os
import secrets
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from .hostile import CANARY_LEN, CANARY_DB, CANARY_TABLE, Case
from .mariadb import MariaDB

CLIENT_CHARSETS = ["utf8mb4", "latin1", "gbk", "big5", "sjis", "cp932"]
SQL_MODES = {"default": None, "NO_BACKSLASH_ESCAPES": "NO_BACKSLASH_ESCAPES",
             "ANSI_QUOTES": "ANSI_QUOTES"}
# flashback-binlog: `dump --flashback`'s BINLOG statements, piped after `sql` into the same target
# dump-replay: dump's default script (BINLOG statements of the events, as mariadb-binlog FILE)
# dump: mariadb-binlog's reading form; dump-text: this project's text (--format text)
OUTPUTS = ("sql", "dump", "dump-text", "flashback-binlog", "dump-replay")
SYSTEM_DBS = ("mysql", "information_schema", "performance_schema", "sys", CANARY_DB)
_CLI = "import sys\nfrom binlog_grammar.cli import main\nsys.exit(main(sys.argv[1:]))\n"


class Refused(Exception):
    """The source refused the case's schema (a name MariaDB does not accept): not a finding."""


@dataclass
class Execution:
    output: str  # sql (with its flashback), dump
    charset: str
    mode: str
    problems: List[str] = field(default_factory=list)
    injected: bool = False  # canary table dropped or canary file created
    differs: bool = False
    client_failed: bool = False

    def __str__(self):
        return f"{self.output} | mariadb --default-character-set={self.charset} " \
               f"(target sql_mode {self.mode}): " + "; ".join(self.problems)


def prepared(stmt: bytes) -> str:
    """Client text that runs `stmt` (any bytes) from its hex."""
    return f"SET @s = X'{stmt.hex()}'; PREPARE s FROM @s; EXECUTE s; DEALLOCATE PREPARE s;\n"


def _unhex(text: str) -> bytes:
    return bytes.fromhex(text) if text != "NULL" else b"NULL"


class Harness:
    """`with Harness() as h: h.check(case)`; `cli_path` runs another checkout's binlog-grammar."""

    def __init__(self, cli_path: Optional[str] = None):
        self.tmp = Path(tempfile.mkdtemp(prefix="binlog-grammar-hostile-"))
        self.client_dir = self.tmp / "client"
        # a short path in /tmp (names holding it must stay under MariaDB's 64 characters)
        self.canary_file = Path("/tmp") / f"bgh-{secrets.token_hex(3)}"
        assert len(str(self.canary_file)) == CANARY_LEN
        self.cli_env = dict(os.environ)
        if cli_path:
            self.cli_env["PYTHONPATH"] = cli_path
        self.source = MariaDB(["--binlog-row-metadata=FULL", "--binlog-row-image=FULL",
                               "--default-time-zone=+00:00"])
        self.target = MariaDB(["--default-time-zone=+00:00"])
        self._conns = {}  # port -> the harness's connection to that server (_select)

    def __enter__(self):
        self.source.start()
        try:
            self.target.start()
        except Exception:
            self.source.cleanup()
            raise
        self.target.sql(f"CREATE DATABASE {CANARY_DB}; CREATE TABLE {CANARY_DB}.{CANARY_TABLE} "
                        f"(id INT PRIMARY KEY); INSERT INTO {CANARY_DB}.{CANARY_TABLE} VALUES (1);")
        return self

    def __exit__(self, *exc):
        for conn in self._conns.values():
            conn.close()
        self.source.cleanup()
        self.target.cleanup()
        import shutil
        shutil.rmtree(self.tmp, ignore_errors=True)
        if self.canary_file.exists():
            self.canary_file.unlink()

    # -- servers ----------------------------------------------------------------------------------

    @staticmethod
    def _run(db: MariaDB, text: str):
        return subprocess.run(db._client() + ["--batch", "--skip-column-names"],
                              input=text.encode(), capture_output=True, timeout=120)

    def _sql(self, db: MariaDB, text: str) -> str:
        r = self._run(db, text)
        if r.returncode != 0:
            raise RuntimeError(f"SQL failed: {r.stderr.decode(errors='replace')[-1500:]}")
        return r.stdout.decode()

    def _select(self, db: MariaDB, text: str) -> str:
        """The rows of the harness's own read-only queries (HEX() texts and numbers), as the
        client's batch output would give them (a line per row, tab-separated), over one kept
        connection per server (a client process per query made most of a check's time). What
        changes a server (the cases, the scripts, the resets) goes through the client."""
        import pymysql
        from pymysql.constants import CLIENT

        conn = self._conns.get(db.port)
        try:
            conn.ping()
        except (AttributeError, pymysql.err.Error):  # none yet, or a script killed it
            conn = self._conns[db.port] = pymysql.connect(
                unix_socket=str(db.socket), user="root", charset="utf8mb4", autocommit=True,
                client_flag=CLIENT.MULTI_STATEMENTS)
        lines = []
        with conn.cursor() as cur:
            cur.execute(text)
            while True:
                lines.extend("\t".join("NULL" if v is None else str(v) for v in row)
                             for row in cur.fetchall())
                if not cur.nextset():
                    break
        return "".join(line + "\n" for line in lines)

    def _user_dbs(self, db: MariaDB) -> List[bytes]:
        out = self._select(db, "SELECT HEX(SCHEMA_NAME) FROM information_schema.SCHEMATA WHERE "
                            "SCHEMA_NAME NOT IN (" + ",".join(f"'{d}'" for d in SYSTEM_DBS) + ")")
        return [bytes.fromhex(h) for h in out.split()]

    def _drop_all(self, db: MariaDB, binlog: bool = True, then: str = ""):
        """Drop every user database of `db`, then run `then`, in one client session."""
        stmts = [b"DROP DATABASE `" + d.replace(b"`", b"``") + b"`" for d in self._user_dbs(db)]
        if stmts or then:
            self._sql(db, ("" if binlog else "SET sql_log_bin=0;\n") + "".join(map(prepared,
                                                                                  stmts)) + then)

    def schema_of(self, db: MariaDB) -> List[str]:
        """The user databases, tables and columns with their definitions, as hex rows."""
        where = "NOT IN (" + ",".join(f"'{d}'" for d in SYSTEM_DBS) + ")"
        return sorted(self._select(db, (
            f"SELECT HEX(SCHEMA_NAME), HEX(DEFAULT_CHARACTER_SET_NAME) FROM "
            f"information_schema.SCHEMATA WHERE SCHEMA_NAME {where};"
            f"SELECT HEX(TABLE_SCHEMA), HEX(TABLE_NAME), HEX(TABLE_COMMENT), HEX(ENGINE), "
            f"HEX(TABLE_COLLATION) FROM information_schema.TABLES WHERE TABLE_SCHEMA {where};"
            f"SELECT HEX(TABLE_SCHEMA), HEX(TABLE_NAME), HEX(COLUMN_NAME), ORDINAL_POSITION, "
            f"HEX(COLUMN_TYPE), HEX(IFNULL(COLUMN_DEFAULT, 'NULL')), HEX(COLUMN_COMMENT), "
            f"HEX(IFNULL(COLLATION_NAME, '')) FROM information_schema.COLUMNS "
            f"WHERE TABLE_SCHEMA {where};")).splitlines())

    def data_of(self, db: MariaDB) -> Dict[tuple, List[str]]:
        """{(db, table): sorted rows of HEX() of every column}."""
        cols = {}
        where = "NOT IN (" + ",".join(f"'{d}'" for d in SYSTEM_DBS) + ")"
        for line in self._select(db, f"SELECT HEX(TABLE_SCHEMA), HEX(TABLE_NAME), HEX(COLUMN_NAME) "
                                  f"FROM information_schema.COLUMNS WHERE TABLE_SCHEMA {where} "
                                  f"ORDER BY 1, 2, ORDINAL_POSITION").splitlines():
            s, t, c = (bytes.fromhex(h) for h in line.split("\t"))
            cols.setdefault((s, t), []).append(c)
        out = {}
        for (s, t), cs in sorted(cols.items()):
            q = lambda n: b"`" + n.replace(b"`", b"``") + b"`"  # noqa: E731
            sel = b"SELECT CONCAT_WS(',', " + b", ".join(
                b"IFNULL(HEX(" + q(c) + b"), 'NULL')" for c in cs) + b") AS r FROM " + \
                q(s) + b"." + q(t) + b" ORDER BY r"
            out[(s, t)] = self._select(db, prepared(sel)).splitlines()
        return out

    # -- one case ---------------------------------------------------------------------------------

    def run_source(self, case: Case) -> dict:
        """Run the case on a fresh source; its binlog and snapshots."""
        self._drop_all(self.source, binlog=False)
        self._sql(self.source, "RESET MASTER;")
        case = case.resolved(str(self.canary_file))
        schema = case.schema()
        r = self._run(self.source, "SET sql_mode='';\n" + "".join(map(prepared, schema)))
        if r.returncode != 0:
            raise Refused(r.stderr.decode(errors="replace").strip()[-300:])
        before = self.data_of(self.source)
        script, in_tx = ["SET sql_mode='';\n"], False
        for stmt in case.dml():
            if stmt is None:
                script.append("COMMIT;\n" if in_tx else "BEGIN;\n")
                in_tx = not in_tx
            else:
                script.append(prepared(stmt))
        r = self._run(self.source, "".join(script))
        if r.returncode != 0:  # e.g. a NUL in a `#` comment ends the statement for the server
            raise Refused(r.stderr.decode(errors="replace").strip()[-300:])
        after = self.data_of(self.source)
        self._sql(self.source, "FLUSH BINARY LOGS;")
        files = [str(p) for p in self.source.binlogs()[:-1]]
        return {"schema": schema, "before": before, "after": after, "files": files,
                "source_schema": self.schema_of(self.source)}

    def output(self, command: str, files: List[str], *options: str) -> bytes:
        r = subprocess.run([sys.executable, "-c", _CLI, command, *options, "--no-progress",
                            *files], capture_output=True, env=self.cli_env, timeout=300,
                           cwd=self.tmp)  # not the checkout's folder: PYTHONPATH decides
        if r.returncode != 0:
            raise RuntimeError(f"binlog-grammar {command} exited {r.returncode}: "
                               f"{r.stderr.decode(errors='replace')[-1500:]}")
        return r.stdout

    def pipe(self, script: bytes, charset: str):
        # in a folder of its own, which must stay empty: a shell command that ran with a mangled
        # or unreplaced canary path (a relative `touch @CANARY@`) leaves its file there
        self.client_dir.mkdir(exist_ok=True)
        return subprocess.run(["mariadb", "--no-defaults", f"--default-character-set={charset}",
                               "-h127.0.0.1", f"-P{self.target.port}", "-uroot"], input=script,
                              capture_output=True, timeout=300, cwd=self.client_dir)

    def _prepare_target(self, mode: str, schema: Optional[List[bytes]]):
        if self.canary_file.exists():
            self.canary_file.unlink()
        self._drop_all(self.target, then=(
            f"CREATE DATABASE IF NOT EXISTS {CANARY_DB}; CREATE TABLE IF NOT EXISTS "
            f"{CANARY_DB}.{CANARY_TABLE} (id INT PRIMARY KEY); INSERT IGNORE INTO "
            f"{CANARY_DB}.{CANARY_TABLE} VALUES (1); SET GLOBAL sql_mode = {self._mode_sql(mode)};"))
        if schema:
            self._sql(self.target, "SET sql_mode='';\n" + "".join(map(prepared, schema)))

    @staticmethod
    def _mode_sql(mode: str) -> str:
        # the server's own default, or that default plus the mode
        return "DEFAULT" if SQL_MODES[mode] is None else \
            f"CONCAT(@@GLOBAL.sql_mode, ',{SQL_MODES[mode]}')"

    def _piped(self, ex: Execution, what: str, script: bytes):
        r = self.pipe(script, ex.charset)
        if r.returncode != 0:
            ex.client_failed = True
            err = r.stderr.decode(errors="replace").strip().splitlines() or [""]
            errors = [line for line in err if line.startswith("ERROR")] or err[-1:]
            ex.problems.append(f"{what}: the client exited {r.returncode}: {errors[0][:300]}")
        if self.canary_file.exists():
            ex.injected = True
            ex.problems.append(f"{what}: the canary file {self.canary_file} was created")
        stray = sorted(p.name for p in self.client_dir.iterdir())
        if stray:
            ex.injected = True
            ex.problems.append(f"{what}: files appeared where the client ran: {stray[:3]}")
            for name in stray:
                (self.client_dir / name).unlink()
        alive = self._select(self.target, f"SELECT COUNT(*) FROM information_schema.TABLES WHERE "
                                       f"TABLE_SCHEMA='{CANARY_DB}' AND "
                                       f"TABLE_NAME='{CANARY_TABLE}'").strip()
        if alive != "1":
            ex.injected = True
            ex.problems.append(f"{what}: the canary table {CANARY_DB}.{CANARY_TABLE} was dropped")

    def _differs(self, ex: Execution, what: str, want: dict):
        got = self.data_of(self.target)
        if got != want:
            ex.differs = True
            keys = sorted(set(got) | set(want))
            diff = [f"{k[0]!r}.{k[1]!r}: source {want.get(k)} target {got.get(k)}"
                    for k in keys if got.get(k) != want.get(k)]
            ex.problems.append(f"{what}: the target's data differs: " + "; ".join(diff)[:600])

    def check(self, case: Case, charsets=CLIENT_CHARSETS, modes=tuple(SQL_MODES),
              outputs=OUTPUTS) -> List[Execution]:
        src = self.run_source(case)
        commands = {}  # output -> the command line's arguments
        if "sql" in outputs or "flashback-binlog" in outputs:
            commands["sql"] = ("sql",)
        if "sql" in outputs:
            commands["flashback"] = ("flashback",)
        if "dump" in outputs:  # mariadb-binlog's ### text, whose rows are comments
            commands["dump"] = ("dump", "-vv", "--base64-output=decode-rows")
        if "dump-text" in outputs:  # this project's ### text
            commands["dump-text"] = ("dump", "--format", "text")
        if "dump-replay" in outputs:
            commands["dump-replay"] = ("dump", "--base64-output=AUTO")
        if "flashback-binlog" in outputs:
            commands["flashback-binlog"] = ("dump", "--flashback")
        # the commands side by side (each a process of its own; most of their time is start-up)
        with ThreadPoolExecutor(max_workers=3) as pool:
            futures = {name: pool.submit(self.output, args[0], src["files"], *args[1:])
                       for name, args in commands.items()}
            scripts = {name: f.result() for name, f in futures.items()}
        done = []
        for mode in modes:
            for charset in charsets:
                if "sql" in outputs:
                    ex = Execution("sql", charset, mode)
                    self._prepare_target(mode, None)  # the script makes the schema (its DDL)
                    self._piped(ex, "sql", scripts["sql"])
                    self._same_schema(ex, "sql", src["source_schema"])
                    self._differs(ex, "sql", src["after"])
                    self._piped(ex, "flashback", scripts["flashback"])
                    self._differs(ex, "flashback", src["before"])
                    done.append(ex)
                for name in ("dump", "dump-text"):
                    if name in outputs:
                        ex = Execution(name, charset, mode)
                        self._prepare_target(mode, None)
                        self._piped(ex, name, scripts[name])
                        self._same_schema(ex, name, src["source_schema"])
                        self._no_rows(ex)
                        done.append(ex)
                if "dump-replay" in outputs:  # the binlog replayed: the source after the workload
                    ex = Execution("dump-replay", charset, mode)
                    self._prepare_target(mode, None)
                    self._piped(ex, "dump-replay", scripts["dump-replay"])
                    self._same_schema(ex, "dump-replay", src["source_schema"])
                    self._differs(ex, "dump-replay", src["after"])
                    done.append(ex)
                if "flashback-binlog" in outputs:  # the rows undone by the server's own events
                    ex = Execution("flashback-binlog", charset, mode)
                    self._prepare_target(mode, None)
                    self._piped(ex, "sql", scripts["sql"])
                    self._piped(ex, "flashback-binlog", scripts["flashback-binlog"])
                    self._differs(ex, "flashback-binlog", src["before"])
                    done.append(ex)
        return done

    def _same_schema(self, ex: Execution, what: str, source_schema: List[str]):
        got = self.schema_of(self.target)
        extra, missing = sorted(set(got) - set(source_schema)), sorted(set(source_schema) - set(got))
        if extra or missing:
            ex.differs = True
            ex.problems.append(f"{what}: the target's schema differs from the source's (hex rows "
                               f"of information_schema) extra: {extra} missing: {missing}"[:1200])

    def _no_rows(self, ex: Execution):
        rows = {k: v for k, v in self.data_of(self.target).items() if v}
        if rows:
            ex.differs = True
            ex.problems.append(f"dump: rows were inserted (they are comments): {rows}"[:800])


def summary(cases: int, executions: List[Execution], refused: int = 0) -> str:
    return (f"cases: {cases} (refused by the server: {refused}), executions: {len(executions)}, "
            f"injections: {sum(e.injected for e in executions)}, "
            f"differences: {sum(e.differs for e in executions)}, "
            f"client failures: {sum(e.client_failed for e in executions)}")
