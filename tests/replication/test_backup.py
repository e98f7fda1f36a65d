"""Binlog backup over the replication protocol (replication/backup.py, issue 28 item 5): every
file of a real MariaDB equals its copy byte for byte (`cmp`) after rotations, a clean restart
and a crash of the server, the file being written included; and a backup killed while writing
(its last event cut short) goes on where it stopped and ends equal too."""
from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from binlog_grammar.replication.backup import RawBackup, resume_point
from binlog_grammar.testing.mariadb import MariaDB

from helpers.paths import ROOT
from helpers.services import need_mariadb

pytestmark = pytest.mark.server

OPTIONS = ["--binlog-format=MIXED"]  # a backup keeps statements and rows alike


def caught_up(db: MariaDB, out: Path, timeout=60):
    last = db.binlogs()[-1]
    deadline = time.time() + timeout
    while time.time() < deadline:
        copy = out / last.name
        if copy.exists() and copy.stat().st_size >= last.stat().st_size:
            return
        time.sleep(0.1)
    raise AssertionError(f"the backup did not reach the end of {last.name}")


def same_files(db: MariaDB, out: Path):
    names = [p.name for p in db.binlogs()]
    assert sorted(p.name for p in out.iterdir()) == sorted(names)
    for p in db.binlogs():
        r = subprocess.run(["cmp", str(p), str(out / p.name)], capture_output=True, text=True)
        assert r.returncode == 0, f"{p.name}: {r.stdout}{r.stderr}"


def test_rotations_restart_and_crash(tmp_path):
    need_mariadb()
    out = tmp_path / "backup"
    with MariaDB(OPTIONS) as db:
        db.sql("CREATE DATABASE b; CREATE TABLE b.t (id INT PRIMARY KEY, v TEXT)")
        bk = RawBackup(out, host="127.0.0.1", port=db.port, user="root", heartbeat=0.5,
                       backoff=(0.1, 0.5))
        th = threading.Thread(target=bk.run)
        th.start()
        try:
            for i in range(30):
                db.sql(f"INSERT INTO b.t VALUES ({i}, REPEAT('x', {i * 40}))")
            db.sql("FLUSH BINARY LOGS")
            db.sql("UPDATE b.t SET v = 'y' WHERE id % 3 = 0")
            db.sql("FLUSH BINARY LOGS")
            db.sql("DELETE FROM b.t WHERE id < 10")
            db.restart()  # a clean shutdown: STOP_EVENT, then a new file
            db.sql("INSERT INTO b.t VALUES (100, 'after the restart')")
            # the backup back and caught up first: else, on a loaded machine, one reconnection
            # after the crash could follow both restarts (a CI run saw 1 of the 2)
            caught_up(db, out)
            db.restart(sig=signal.SIGKILL)  # a crash: the file stays open (IN_USE)
            db.sql("INSERT INTO b.t VALUES (101, 'after the crash')")
            caught_up(db, out)
        finally:
            bk.stop()
            th.join(30)
        assert not th.is_alive()
        assert bk.source.reconnects >= 2 and len(db.binlogs()) >= 5
        same_files(db, out)


BACKUP = """
import sys
from binlog_grammar.replication.backup import RawBackup
RawBackup(sys.argv[1], host="127.0.0.1", port=int(sys.argv[2]), user="root", heartbeat=0.5).run()
"""


def test_a_killed_backup_goes_on_where_it_stopped(tmp_path):
    need_mariadb()
    out = tmp_path / "backup"
    with MariaDB(OPTIONS) as db:
        db.sql("CREATE DATABASE b; CREATE TABLE b.t (id INT PRIMARY KEY, v TEXT)")
        for i in range(20):
            db.sql(f"INSERT INTO b.t VALUES ({i}, REPEAT('z', 500))")
        proc = subprocess.Popen([sys.executable, "-c", BACKUP, str(out), str(db.port)], cwd=ROOT)
        try:
            caught_up(db, out)
        finally:
            proc.kill()
            proc.wait()
        copy = out / db.binlogs()[-1].name
        whole = copy.stat().st_size
        with open(copy, "r+b") as fh:  # as if killed while writing its last event
            fh.truncate(whole - 7)
        assert resume_point(out) == (copy.name, whole - len_of_last(db))  # cut back to a whole event
        db.sql("FLUSH BINARY LOGS")
        for i in range(20, 30):
            db.sql(f"INSERT INTO b.t VALUES ({i}, 'more')")
        proc = subprocess.Popen([sys.executable, "-c", BACKUP, str(out), str(db.port)], cwd=ROOT)
        try:
            caught_up(db, out)
        finally:  # every event is written by one unbuffered write: a kill loses nothing
            proc.kill()
            proc.wait(30)
        same_files(db, out)


def len_of_last(db: MariaDB) -> int:
    """The length of the last event of the server's last file (its header's event_length)."""
    data = db.binlogs()[-1].read_bytes()
    at, last = 4, 0
    while at + 19 <= len(data):
        last = int.from_bytes(data[at + 9:at + 13], "little")
        at += last
    return last


def cli(*words):
    return subprocess.run([sys.executable, "-m", "binlog_grammar", *map(str, words)],
                          capture_output=True, text=True, cwd=ROOT, stdin=subprocess.DEVNULL,
                          timeout=120)


def test_stream_raw_until_now_and_again(tmp_path):
    """`stream --raw -r DIR --until-now` copies up to the end the server has when it connects;
    a second run goes on from there."""
    need_mariadb()
    out = tmp_path / "backup"
    with MariaDB(OPTIONS) as db:
        db.sql("CREATE DATABASE b; CREATE TABLE b.t (id INT PRIMARY KEY); INSERT INTO b.t "
               "VALUES (1); FLUSH BINARY LOGS; INSERT INTO b.t VALUES (2)")
        login = ["--host", "127.0.0.1", "--port", db.port, "--user", "root"]
        r = cli("stream", "--raw", "--result-file", out, "--until-now", *login)
        assert r.returncode == 0 and r.stdout == "", r.stderr
        same_files(db, out)
        db.sql("INSERT INTO b.t VALUES (3); FLUSH BINARY LOGS; INSERT INTO b.t VALUES (4)")
        r = cli("stream", "--raw", "--result-file", out, "--until-now", *login)
        assert r.returncode == 0, r.stderr
        same_files(db, out)


@pytest.mark.parametrize("words, said", [
    (["--raw"], "--raw writes binlog files: give the folder with --result-file DIR"),
    (["--raw", "--result-file", "d", "--pos", "5"], "--pos do not apply"),
    (["--raw", "--result-file", "d", "--table", "a.b", "--format", "jsonl"], "--format, --table do not apply"),
    (["--result-file", "d"], "--result-file is the folder of --raw"),
])
def test_raw_takes_only_what_applies(words, said):
    r = cli("stream", *words)
    assert r.returncode == 2 and said in r.stderr, r.stderr
