"""`sql --schema-from-server` (issue 28, item 6) on a real MariaDB whose binlog names no column
(binlog_row_metadata=MINIMAL, the servers' default): without it `sql` writes every transaction
as a comment; with it the script replays the workload into a copy of the tables, value for
value, and `flashback` undoes it. The login goes through the client's habits: -h/-P/-u over
TCP, -S and a password in MYSQL_PWD over the socket file, an option file's [client] group.

The table has what the server alone can tell: names, an UNSIGNED column beyond the signed
range, ENUM and SET members (one with a quote and a backslash), a latin1 column, a composite
primary key."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from binlog_grammar.replication.connection import Connection
from binlog_grammar.replication.schema import server_schemas
from binlog_grammar.testing import mariadb

from helpers.paths import ROOT
from helpers.services import need_mariadb

pytestmark = pytest.mark.server

TABLE = r"""CREATE TABLE anon.t (a INT UNSIGNED, b VARCHAR(20) CHARACTER SET latin1,
    e ENUM('x', 'it''s', 'b\\s'), s SET('p', 'q', 'r'), n BIGINT UNSIGNED, c INT,
    PRIMARY KEY (c, a)) ENGINE=InnoDB"""
WORKLOAD = """
INSERT INTO anon.t VALUES (4000000000, 'caf\xe9', 'it''s', 'p,r', 18446744073709551615, 1),
                          (1, 'x', 'b\\\\s', '', 0, 2);
UPDATE anon.t SET b = 'neu', e = 'x', s = 'q' WHERE c = 1;
DELETE FROM anon.t WHERE c = 2;
INSERT INTO anon.t (a, b, c) VALUES (7, NULL, 3);
"""
SNAPSHOT = "SELECT a, HEX(b), e + 0, s + 0, n, c FROM anon.t ORDER BY c"


@pytest.fixture(scope="module")
def server():
    need_mariadb()
    with mariadb.MariaDB(["--binlog-row-metadata=MINIMAL"]) as db:
        db.sql(f"CREATE DATABASE anon; {TABLE}; CREATE USER 'app'@'localhost' IDENTIFIED BY "
               "'s3cret; pw'; GRANT SELECT ON *.* TO 'app'@'localhost';")
        before = db.sql(SNAPSHOT)
        db.sql("FLUSH BINARY LOGS")
        start = db.binlogs()[-1]
        r = subprocess.run(db._client(), input=WORKLOAD.encode(), capture_output=True)
        assert r.returncode == 0, r.stderr
        after = db.sql(SNAPSHOT)
        db.sql("FLUSH BINARY LOGS")
        files = [str(p) for p in db.binlogs()]
        files = files[files.index(str(start)):-1]
        yield db, files, before, after


def cli(*words, env=None):
    return subprocess.run([sys.executable, "-m", "binlog_grammar", *map(str, words)],
                          capture_output=True, cwd=ROOT, env={**os.environ, **(env or {})},
                          stdin=subprocess.DEVNULL)


def test_without_the_server_nothing_is_written(server):
    db, files, before, after = server
    r = cli("sql", *files)
    assert r.returncode == 0 and b"-- not replayed" in r.stdout and b"INSERT" not in r.stdout


@pytest.mark.parametrize("login", ["tcp", "socket", "option-file"])
def test_schema_from_server_replays_and_flashback_undoes(server, login, tmp_path):
    db, files, before, after = server
    env = {}
    if login == "tcp":
        words = ["-h", "127.0.0.1", "-P", db.port, "-u", "root", "--no-defaults"]
    elif login == "socket":
        words, env = ["-S", db.socket, "-u", "app", "--no-defaults"], {"MYSQL_PWD": "s3cret; pw"}
    else:
        cnf = tmp_path / "my.cnf"
        cnf.write_text(f"[client]\nuser=app\npassword='s3cret; pw'\nsocket={db.socket}\n")
        words = ["--defaults-file", cnf]
    r = cli("sql", "--schema-from-server", *words, *files, env=env)
    assert r.returncode == 0, r.stderr
    assert b"-- not replayed" not in r.stdout
    assert b"not from when the binlog was written" in r.stderr  # the one-line caveat
    fb = cli("flashback", "--schema-from-server", *words, *files, env=env)
    assert fb.returncode == 0 and b"-- not inverted" not in fb.stdout, fb.stderr
    db.sql("DROP DATABASE IF EXISTS anon_copy; CREATE DATABASE anon_copy; "
           + TABLE.replace("anon.t", "anon_copy.t") + ";"
           "INSERT INTO anon_copy.t SELECT * FROM anon.t; DELETE FROM anon_copy.t;")
    db.sql("SET sql_log_bin=0; DELETE FROM anon.t;")  # replay from the state before the workload
    try:
        assert db.sql(SNAPSHOT) == before
        apply = subprocess.run(db._client(), input=r.stdout, capture_output=True)
        assert apply.returncode == 0, apply.stderr
        assert db.sql(SNAPSHOT) == after
        apply = subprocess.run(db._client(), input=fb.stdout, capture_output=True)
        assert apply.returncode == 0, apply.stderr
        assert db.sql(SNAPSHOT) == before
    finally:
        undo = subprocess.run(db._client(), input=r.stdout, capture_output=True)  # back to after
        assert undo.returncode == 0


def test_a_wrong_password_is_one_line(server):
    db, files, _, _ = server
    r = cli("sql", "--schema-from-server", "-S", db.socket, "-u", "app", "-pwrong",
            "--no-defaults", *files)
    assert r.returncode == 1
    assert b"Traceback" not in r.stderr and len(r.stderr.decode().strip().splitlines()) == 1
    assert b"wrong" not in r.stderr


def test_what_the_server_says(server):
    db, _, _, _ = server
    conn = Connection("127.0.0.1", db.port, "root").connect()
    try:
        schema = server_schemas(conn, ["anon"])
    finally:
        conn.close()
    assert schema == {"anon.t": {"columns": [
        {"name": "a", "unsigned": True}, {"name": "b", "charset": "latin1"},
        {"name": "e", "charset": "latin1", "enum_values": ["x", "it's", "b\\s"]},
        {"name": "s", "charset": "latin1", "set_values": ["p", "q", "r"]},
        {"name": "n", "unsigned": True}, {"name": "c"}], "primary_key": ["c", "a"]}}


def test_a_bare_p_asks_on_the_terminal_without_echo(server):
    """`-p` alone: the password is asked on the terminal (a pseudo-terminal here), not echoed,
    and the word after -p is still the file to read."""
    import pty
    import select

    db, files, _, after = server
    pid, fd = pty.fork()
    if pid == 0:  # the child: the command on the terminal, its stdout to a file
        out = os.open(os.path.join(os.environ.get("TMPDIR", "/tmp"), f"bg-sql-{os.getppid()}.out"),
                      os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(out, 1)
        os.chdir(ROOT)
        os.execv(sys.executable, [sys.executable, "-m", "binlog_grammar", "sql",
                                  "--schema-from-server", "-S", str(db.socket), "-u", "app",
                                  "--no-defaults", "-p", *files])
    seen = b""
    try:
        while b"Enter password:" not in seen:
            ready, _, _ = select.select([fd], [], [], 30)
            assert ready, seen
            seen += os.read(fd, 1024)
        os.write(fd, b"s3cret; pw\n")
        while True:
            ready, _, _ = select.select([fd], [], [], 30)
            if not ready:
                break
            try:
                chunk = os.read(fd, 1024)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
    finally:
        _, status = os.waitpid(pid, 0)
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"bg-sql-{os.getpid()}.out")
    with open(path, "rb") as fh:
        script = fh.read()
    os.unlink(path)
    assert os.waitstatus_to_exitcode(status) == 0, seen
    assert b"s3cret" not in seen  # not echoed
    assert b"INSERT INTO `anon`.`t`" in script and b"-- not replayed" not in script
