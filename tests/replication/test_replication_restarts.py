"""`binlog-grammar stream` in follow mode keeps every row change across server restarts.

A real MariaDB is restarted four times on the same data directory and port (SIGTERM twice: a clean
shutdown, whose dump thread ends with an EOF packet; SIGKILL twice: a crash) while a writer inserts
rows, retrying its own transactions while the server is down, and two `stream` subprocesses follow
the binlog: one from the first binlog file, one from a MariaDB GTID position (--gtid). At the end
the ids each stream printed must be exactly the ids in the table (SELECT): none lost, none twice,
and both streams still running; each reconnection is one line on stderr naming where it resumes.

Skipped when mariadbd is absent, unless BINLOG_GRAMMAR_REQUIRE_SERVICES=1 (then it fails).
"""
from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from binlog_grammar.testing import mariadb
from binlog_grammar.errors import ReplicationError
from binlog_grammar.replication import Connection, TLSOptions

from helpers.services import need_mariadb
from helpers.signals import interruptible

pytestmark = pytest.mark.server

PASSWORD = "Rst-pw_58k"
SETUP = f"""
SET sql_log_bin=0;
CREATE USER repl@'%' IDENTIFIED BY '{PASSWORD}';
GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO repl@'%';
CREATE USER writer@'%' IDENTIFIED BY '{PASSWORD}';
GRANT ALL ON shop.* TO writer@'%';
SET sql_log_bin=1;
CREATE DATABASE shop;
CREATE TABLE shop.ids (id INT PRIMARY KEY, pad VARCHAR(200)) ENGINE=InnoDB;
"""
RESTARTS = (signal.SIGTERM, signal.SIGKILL, signal.SIGTERM, signal.SIGKILL)


class Writer(threading.Thread):
    """Transactions of 1 to 3 rows with new ids (BEGIN, INSERT, INSERT, COMMIT), retried on any
    error until the server takes them; a retry that meets a duplicate key learns that the lost
    answer was a commit. `committed`: the ids known to be in the table."""

    def __init__(self, port, first_id):
        super().__init__(daemon=True)
        self.port = port
        self.next_id = first_id
        self.committed = set()
        self.retries = 0
        self.stop = threading.Event()
        self.conn = None

    def _connection(self):
        if self.conn is None:
            self.conn = Connection("127.0.0.1", self.port, "writer", PASSWORD, connect_timeout=3,
                                   read_timeout=5, tls=TLSOptions("disabled")).connect()
        return self.conn

    def _drop(self):
        if self.conn is not None:
            self.conn.close()
        self.conn = None

    def _transaction(self, ids):
        c = self._connection()
        c.query("BEGIN")
        c.query(f"INSERT INTO shop.ids VALUES ({ids[0]}, REPEAT('p', {ids[0] % 200}))")
        if len(ids) > 1:
            c.query("INSERT INTO shop.ids VALUES " + ", ".join(f"({i}, 'x')" for i in ids[1:]))
        c.query("COMMIT")

    def run(self):
        while not self.stop.is_set():
            n = 1 + self.next_id % 3
            ids = list(range(self.next_id, self.next_id + n))
            while True:
                try:
                    self._transaction(ids)
                    break
                except ReplicationError as e:
                    if e.code == 1062:  # the first insert's key is there: the last try committed
                        try:
                            self.conn.query("ROLLBACK")
                        except ReplicationError:
                            self._drop()
                        break
                    self.retries += 1
                    self._drop()
                    time.sleep(0.05)
            self.committed.update(ids)
            self.next_id += n
            time.sleep(0.003)
        self._drop()


class StreamProcess:
    """`binlog-grammar stream --format jsonl --rows-only` in a subprocess; the ids of the rows
    inserted, in the order printed, and the stderr lines."""

    def __init__(self, port, *extra):
        env = dict(os.environ, REPL_PW=PASSWORD)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "binlog_grammar", "stream", "--port", str(port), "--user", "repl",
             "--password-env", "REPL_PW", "--format", "jsonl", "--rows-only", "--table", "shop.ids",
             "--heartbeat", "0.5", "--connect-timeout", "3", "--read-timeout", "5", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            preexec_fn=interruptible)
        self.ids = []
        self.other = []
        self.stderr = []
        self._threads = [threading.Thread(target=self._out, daemon=True),
                         threading.Thread(target=self._err, daemon=True)]
        for t in self._threads:
            t.start()

    def _out(self):
        for line in self.proc.stdout:
            rec = json.loads(line)
            if rec.get("op") == "c":
                self.ids.append(rec["after"]["id"])
            else:
                self.other.append(rec)

    def _err(self):
        for line in self.proc.stderr:
            self.stderr.append(line.rstrip("\n"))

    def end(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            code = self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        for t in self._threads:
            t.join(10)
        return code


def table_ids(db):
    return {int(x) for x in db.sql("SELECT id FROM shop.ids").split()}


def test_follow_mode_loses_nothing_over_four_restarts():
    need_mariadb()
    started = time.monotonic()
    db = mariadb.MariaDB(["--max-binlog-size=65536", "--binlog-row-metadata=FULL"])
    streams = []
    writer = None
    try:
        db.start()
        db.sql(SETUP)
        db.sql("INSERT INTO shop.ids VALUES " + ", ".join(f"({i}, 'before')" for i in range(1, 21)))
        before = table_ids(db)
        gtid = db.sql("SELECT @@gtid_binlog_pos").strip()
        streams = [StreamProcess(db.port), StreamProcess(db.port, "--gtid", gtid)]
        writer = Writer(db.port, 100)
        writer.start()
        for sig in RESTARTS:
            time.sleep(2.0)
            assert writer.is_alive()
            db.restart(sig, down=0.7)
        time.sleep(1.5)
        writer.stop.set()
        writer.join(30)
        assert not writer.is_alive()
        in_table = table_ids(db)
        # every id the writer saw committed is in the table; rows were written between restarts
        assert writer.committed <= in_table and len(in_table - before) > 300
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline and any(
                set(s.ids) < in_table - (before if i else set()) for i, s in enumerate(streams)):
            time.sleep(0.2)
        running = [s.proc.poll() is None for s in streams]
        codes = [s.end() for s in streams]
        for i, s in enumerate(streams):
            want = in_table - (before if i else set())
            counts = collections.Counter(s.ids)
            twice = sorted(k for k, v in counts.items() if v > 1)
            lost = sorted(want - set(counts))
            extra = sorted(set(counts) - want)
            report = (f"stream {i}: written {len(want)}, received {len(s.ids)}, lost {len(lost)} "
                      f"{lost[:10]}, twice {len(twice)} {twice[:10]}, not in the table {extra[:10]}, "
                      f"stderr: {s.stderr[-8:]}")
            reconnects = [ln for ln in s.stderr if "reconnected" in ln]
            print(report, f"reconnections {len(reconnects)}, writer retries {writer.retries}")
            assert running[i], report  # the stream still follows: nothing but SIGINT ended it
            assert codes[i] == 130, report
            assert not lost and not twice and not extra, report
            assert len(reconnects) >= len(RESTARTS), s.stderr
            assert all(("resuming at GTID 0-1-" if i else "resuming at mariadb-bin.") in ln
                       for ln in reconnects), reconnects
            assert "Traceback" not in "\n".join(s.stderr) and PASSWORD not in "\n".join(s.stderr)
        print(f"restart test: {time.monotonic() - started:.1f} s")
    finally:
        if writer is not None:
            writer.stop.set()
        for s in streams:
            s.end()
        db.cleanup()
