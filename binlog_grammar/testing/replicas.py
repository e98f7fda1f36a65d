"""A MariaDB primary and a replica on loopback, for the repair tests and tools/repair_soak.py.

    with ReplicaPair() as pair:
        pair.configure(gtid=True, parallel=4, row_image="MINIMAL")
        pair.primary.sql("CREATE DATABASE shop; ...")
        pair.wait_caught_up()
        pair.replica.sql("SET sql_log_bin=0; DELETE FROM shop.items WHERE id=2")   # drift

Both servers are throwaway `binlog_grammar.testing.mariadb.MariaDB`s (temporary data directories, stopped
by their pids). The replica writes its own binlog with log_slave_updates and gtid_strict_mode, as
production replicas do, so a repair that forgets sql_log_bin=0 shows up (error 1950 on the next
transaction). One pair is reused across many examples: `configure()` puts both servers back to an
empty state (test databases dropped without binlogging, RESET MASTER on both, the replica's
connection made afresh with the requested settings) in a fraction of a second.

Accounts (TCP, loopback): ADMIN on both servers (everything; what `repair` connects with) and
REPL on the primary (REPLICATION SLAVE, BINLOG MONITOR, SELECT: the replica's IO thread, and
`repair --primary-user`). Their passwords are PASSWORD.
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

from ..errors import ReplicationError
from .mariadb import MariaDB
from ..replication import Connection

PASSWORD = "Rpr-pw_27q"
ADMIN = "repair_admin"
REPL = "repair_repl"
TEST_DB_PREFIX = "rp_"  # configure() drops the databases whose names start with this

_ACCOUNTS = """
SET sql_log_bin=0;
CREATE USER IF NOT EXISTS {admin}@'%' IDENTIFIED BY '{pw}';
GRANT ALL ON *.* TO {admin}@'%' WITH GRANT OPTION;
CREATE USER IF NOT EXISTS {repl}@'%' IDENTIFIED BY '{pw}';
GRANT REPLICATION SLAVE, BINLOG MONITOR, SELECT ON *.* TO {repl}@'%';
"""


class ReplicaError(RuntimeError):
    """The pair did not reach the state asked for (the replica did not catch up in time, ...)."""


class ReplicaPair:
    """A primary (server id 1) and a replica (server id 2) replicating from it."""

    def __init__(self, primary_options=(), replica_options=()):
        common = ["--gtid-strict-mode=1", "--innodb-flush-log-at-trx-commit=2",
                  "--sync-binlog=0", "--max-connections=200"]
        pbase, rbase = self._folder("primary"), self._folder("replica")
        self.primary = MariaDB([*common, *primary_options], basedir=pbase)
        self.replica = MariaDB([*common, "--server-id=2",
                                "--relay-log=relay-bin", "--log-slave-updates=1",
                                "--skip-slave-start", "--slave-net-timeout=10", *replica_options],
                               basedir=rbase)
        self.settings: dict = {}
        self.connection_name = ""
        self._status_conn = None

    @staticmethod
    def _folder(role) -> Path:
        """A folder of the server's own (MariaDB keeps its temporary files inside it)."""
        return Path(tempfile.mkdtemp(prefix=f"binlog-grammar-{role}-"))

    # -- life cycle ----------------------------------------------------------------------------
    def start(self) -> "ReplicaPair":
        try:
            for db in (self.primary, self.replica):
                db.start()
                db.sql(_ACCOUNTS.format(admin=ADMIN, repl=REPL, pw=PASSWORD))
            self.configure()
        except BaseException:
            self.cleanup()
            raise
        return self

    def cleanup(self):
        if self._status_conn is not None:
            self._status_conn.close()
            self._status_conn = None
        for db in (self.replica, self.primary):
            db.cleanup()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.cleanup()

    # -- settings ------------------------------------------------------------------------------
    def configure(self, gtid=True, parallel=0, row_image="FULL", metadata="NO_LOG",
                  parallel_mode="optimistic", connection_name=""):
        """Empty both servers and replicate again with these settings: GTID (`master_use_gtid=
        slave_pos`) or file and position; `parallel` applier threads (0: the serial applier);
        the primary's binlog_row_image and binlog_row_metadata (for the sessions opened after);
        the replica's connection name (MariaDB multi-source; '' is the default connection)."""
        r, p = self.replica, self.primary
        r.sql("STOP ALL SLAVES")
        names = self.connection_names()
        drop = self._drop_test_databases
        r.sql("SET sql_log_bin=0;" + drop(r) + "".join(
            f"RESET SLAVE '{n}' ALL;" for n in names if n) + "RESET SLAVE ALL; RESET MASTER; "
              "SET GLOBAL gtid_slave_pos='';"
              f"SET GLOBAL slave_parallel_threads={int(parallel)};"
              f"SET GLOBAL slave_parallel_mode='{parallel_mode}';")
        p.sql("SET sql_log_bin=0;" + drop(p) + "RESET MASTER;"
              f"SET GLOBAL binlog_row_image='{row_image}';"
              f"SET GLOBAL binlog_row_metadata='{metadata}';")
        self.settings = dict(gtid=gtid, parallel=parallel, row_image=row_image, metadata=metadata,
                             connection_name=connection_name)
        self.connection_name = connection_name
        if gtid:
            where = "master_use_gtid=slave_pos"
        else:
            where = "master_use_gtid=no, master_log_file='mariadb-bin.000001', master_log_pos=4"
        name = f"'{connection_name}' " if connection_name else ""
        r.sql(f"CHANGE MASTER {name}TO master_host='127.0.0.1', master_port={p.port}, "
              f"master_user='{REPL}', master_password='{PASSWORD}', master_connect_retry=1, "
              f"{where}; START SLAVE {name};")
        return self

    def connection_names(self) -> list:
        """The replica's replication connections (MariaDB multi-source; '' is the default)."""
        out = self.replica.sql("SHOW ALL SLAVES STATUS")
        return [line.split("\t", 1)[0] for line in out.splitlines() if line.strip()]

    @staticmethod
    def _drop_test_databases(db: MariaDB) -> str:
        names = db.sql(f"SELECT schema_name FROM information_schema.schemata WHERE schema_name "
                       f"LIKE '{TEST_DB_PREFIX}%'").split()
        return "".join(f"DROP DATABASE `{n}`;" for n in names)

    # -- status --------------------------------------------------------------------------------
    def connect(self, which="replica", user=ADMIN) -> Connection:
        """A connection (the project's own client, over TCP) to the replica or the primary."""
        db = self.replica if which == "replica" else self.primary
        return Connection("127.0.0.1", db.port, user, PASSWORD, read_timeout=60).connect()

    def status(self) -> dict:
        """SHOW SLAVE STATUS of the replica's connection (configure's connection_name), as
        {column: text}."""
        conn = self._status_conn
        if conn is None:
            conn = self._status_conn = self.connect()
        try:
            name = self.connection_name
            rows = conn.query_dicts(f"SHOW SLAVE '{name}' STATUS" if name else "SHOW SLAVE STATUS")
        except ReplicationError:
            self._status_conn = None
            conn.close()
            raise
        return {k: ("" if v is None else v) for k, v in rows[0].items()} if rows else {}

    def _at_primary_end(self, st: dict) -> bool:
        """Whether the replica has executed up to the primary's current end. The end is read
        anew on every check: MariaDB's binlog background thread writes a BINLOG_CHECKPOINT_EVENT
        some time after a FLUSH BINARY LOGS, so an end read once, before it, can be passed by
        the replica and never equalled."""
        target = self.primary.sql("SHOW MASTER STATUS").split()
        return len(target) >= 2 and st.get("Relay_Master_Log_File") == target[0] and \
            st.get("Exec_Master_Log_Pos") == target[1]

    def wait_caught_up(self, timeout=30.0) -> dict:
        """Wait until the replica has applied everything the primary has written (both threads
        running, the executed position at the primary's end). The status, or ReplicaError."""
        deadline = time.monotonic() + timeout
        st = {}
        while time.monotonic() < deadline:
            st = self.status()
            if st.get("Slave_SQL_Running") == "No" and st.get("Last_SQL_Errno", "0") != "0":
                raise ReplicaError(f"the replica stopped: {st.get('Last_SQL_Error')}")
            if st.get("Slave_SQL_Running") == "Yes" and self._at_primary_end(st):
                return st
            time.sleep(0.05)
        raise ReplicaError(f"the replica did not catch up in {timeout:g} s: {st}")

    def wait_settled(self, timeout=30.0) -> dict:
        """Wait until the replica has either applied everything the primary wrote or stopped;
        its status."""
        deadline = time.monotonic() + timeout
        st = {}
        while time.monotonic() < deadline:
            st = self.status()
            if st.get("Slave_SQL_Running") == "No" or self._at_primary_end(st):
                return st
            time.sleep(0.05)
        raise ReplicaError(f"the replica neither caught up nor stopped in {timeout:g} s: {st}")

    def wait_stopped(self, timeout=30.0) -> dict:
        """Wait until the replica's SQL thread has stopped (on an error, usually); its status."""
        deadline = time.monotonic() + timeout
        st = {}
        while time.monotonic() < deadline:
            st = self.status()
            if st.get("Slave_SQL_Running") == "No":
                return st
            time.sleep(0.05)
        raise ReplicaError(f"the replica's SQL thread did not stop in {timeout:g} s")

    def checksums(self, database: str) -> tuple:
        """(primary, replica): {table: CHECKSUM TABLE value} of every table of the database."""
        out = []
        for db in (self.primary, self.replica):
            tables = db.sql(f"SELECT table_name FROM information_schema.tables WHERE "
                            f"table_schema='{database}' ORDER BY table_name").split()
            sums = {}
            if tables:
                text = db.sql("CHECKSUM TABLE " + ", ".join(f"`{database}`.`{t}`" for t in tables)
                              + " EXTENDED")
                for line in text.splitlines():
                    name, _, value = line.rpartition("\t")
                    sums[name.split(".", 1)[-1]] = value
            out.append(sums)
        return tuple(out)
