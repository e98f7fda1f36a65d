"""The replication client against a real MariaDB 10.11 on loopback (binlog_grammar.testing.mariadb).

What a replica receives must be what the server wrote: every event the stream delivers is compared
with the server's binlog files on disk read by reader.BinlogFile (same events, same order, same
bytes; the fake ROTATE and FORMAT_DESCRIPTION events the dump protocol adds are left out, and the
LOG_EVENT_BINLOG_IN_USE_F flag the dump thread clears in an FDE is masked). The server rotates
every 64 KiB, a concurrent workload runs while the stream is read, one row makes a 17 MiB event
(packets split at 16 MiB and joined), and the server is killed and restarted twice in the middle
of a stream. Failures (bad password, missing privilege, unknown binlog file, statement-based
logging, an untrusted TLS certificate) end in one line without the password.

Skipped when mariadbd is absent, unless BINLOG_GRAMMAR_REQUIRE_SERVICES=1 (then they fail).
"""
from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from binlog_grammar.testing import mariadb
from binlog_grammar.errors import ReplicationError
from binlog_grammar.binlog.reader import FLAGS_AT, BinlogFile
from binlog_grammar.replication import (
    Connection, ReplicationSource, TLSOptions, open_replication_stream, position_key)
from binlog_grammar.binlog.stream import Filters, open_stream

from helpers.certs import make_certs
from helpers.services import REQUIRE_SERVICES, need_mariadb

pytestmark = pytest.mark.server

PASSWORD = "Rpl-pw_93x"
ED_PASSWORD = "Ed-pw_41z"
BIG = 17 << 20  # one row larger than a 16 MiB packet


def _need_server():
    need_mariadb()


USERS = f"""
SET sql_log_bin=0;
CREATE USER repl@'%' IDENTIFIED BY '{PASSWORD}';
GRANT REPLICATION SLAVE, BINLOG MONITOR, SELECT ON *.* TO repl@'%';
CREATE USER norepl@'%' IDENTIFIED BY '{PASSWORD}';
"""
ED_USER = f"""
SET sql_log_bin=0;
CREATE USER ed@'%' IDENTIFIED VIA ed25519 USING PASSWORD('{ED_PASSWORD}');
GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO ed@'%';
"""


def start_server(options, tls_dir=None):
    opts = ["--max-binlog-size=65536", "--max-allowed-packet=64M", *options]
    if tls_dir is not None:
        opts += [f"--ssl-ca={tls_dir / 'ca.pem'}", f"--ssl-cert={tls_dir / 'server.pem'}",
                 f"--ssl-key={tls_dir / 'server.key'}"]
    db = mariadb.MariaDB(opts)
    try:
        db.start()
        db.sql(USERS)
    except BaseException:
        db.cleanup()
        raise
    return db


@pytest.fixture(scope="module")
def tls_dir(tmp_path_factory):
    return make_certs(tmp_path_factory.mktemp("server-certs"))


@pytest.fixture(scope="module")
def server(tls_dir):
    _need_server()
    db = start_server(["--plugin-load-add=auth_ed25519"], tls_dir)
    try:
        db.sql(ED_USER)
    except BaseException:
        db.cleanup()
        raise
    yield db
    db.cleanup()


def client(db):
    return db._client() + ["--max-allowed-packet=64M"]


def workload(tag, n, big=False, flush_every=0, sleep=0.0) -> str:
    """SQL for n transactions on shop.orders_<tag>: multi-row inserts and updates in one
    transaction, deletes, DDL, rolled-back transactions, optional binlog flushes and a 17 MiB row."""
    t = f"shop.orders_{tag}"
    out = ["CREATE DATABASE IF NOT EXISTS shop;",
           f"CREATE TABLE IF NOT EXISTS {t} (id INT PRIMARY KEY AUTO_INCREMENT, item VARCHAR(100), "
           f"qty INT, note TEXT, price DECIMAL(10,2), at DATETIME(3)) ENGINE=InnoDB;"]
    for i in range(n):
        out.append(f"BEGIN; INSERT INTO {t} (item, qty, note, price, at) VALUES ('item{i}', {i}, "
                   f"REPEAT('n', {i % 300}), {i}.25, NOW(3)), ('x{i}', {i + 1}, NULL, NULL, NULL); "
                   f"UPDATE {t} SET qty = qty + 1 WHERE id % 5 = {i % 5}; COMMIT;")
        if i % 7 == 3:
            out.append(f"DELETE FROM {t} WHERE id % 11 = {i % 11} LIMIT 2;")
        if i % 25 == 10:
            out.append(f"ALTER TABLE {t} COMMENT 'v{i}';")
        if i % 9 == 5:
            out.append(f"BEGIN; INSERT INTO {t} (item) VALUES ('rolled back'); ROLLBACK;")
        if flush_every and i % flush_every == flush_every - 1:
            out.append("FLUSH BINARY LOGS;")
        if sleep:
            out.append(f"DO SLEEP({sleep});")
    if big:
        out.append("CREATE TABLE IF NOT EXISTS shop.big (id INT PRIMARY KEY, b LONGBLOB);")
        out.append(f"INSERT INTO shop.big VALUES ({n}, REPEAT('z', {BIG}));")
    return "\n".join(out)


def run_sql(db, sql):
    r = subprocess.run(client(db), input=sql, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def masked(ev) -> bytes:
    raw = ev.raw
    if ev.name == "FORMAT_DESCRIPTION_EVENT":  # the dump thread clears LOG_EVENT_BINLOG_IN_USE_F
        raw = raw[:FLAGS_AT] + bytes([raw[FLAGS_AT] & 0xFE]) + raw[FLAGS_AT + 1:]
    return raw


def on_disk(db, until=None):
    out = []
    for path in db.binlogs():
        for ev in BinlogFile(path):
            if until is not None and position_key(path.name, ev.end) > position_key(*until):
                return out
            out.append((path.name, ev.offset, ev.name, masked(ev)))
    return out


def received(events):
    return [(e.file, e.offset, e.name, masked(e)) for e in events if not e.extra.get("artificial")]


def source(db, **kw):
    kw.setdefault("heartbeat", 0.5)
    kw.setdefault("read_timeout", 5.0)
    kw.setdefault("connect_timeout", 5.0)
    return ReplicationSource("127.0.0.1", db.port, kw.pop("user", "repl"), kw.pop("password", PASSWORD), **kw)


def master_status(db):
    f, p = db.sql("SHOW MASTER STATUS").split()[:2]
    return f, int(p)


# -- what the stream delivers is what is on disk -----------------------------------------------

def test_until_now_equals_the_binlog_files_under_a_concurrent_workload(server, caplog):
    caplog.set_level(logging.DEBUG, logger="binlog_grammar")
    run_sql(server, workload("a", 60, big=True, flush_every=25))
    busy = subprocess.Popen(client(server), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        busy.stdin.write(workload("b", 150, flush_every=70, sleep=0.004))
        busy.stdin.close()
        time.sleep(0.3)  # the workload is under way when the source connects
        src = source(server, until_now=True)
        events = list(src)
    finally:
        assert busy.wait(60) == 0, busy.stderr.read()
    target = src.target
    # the workload went on writing after the target was taken: the stream stopped there
    assert position_key(*master_status(server)) > position_key(*target)
    assert src.position == target
    expected = on_disk(server, until=target)
    got = received(events)
    assert got == expected
    assert len({(f, o) for f, o, _n, _r in got}) == len(got)
    assert len({f for f, *_ in got}) >= 4  # rotations, by size and by FLUSH BINARY LOGS
    assert max(len(r) for *_x, r in got) > BIG  # the 17 MiB event came in several packets
    assert {n for *_f, n, _r in got} >= {"GTID_EVENT", "ANNOTATE_ROWS_EVENT", "TABLE_MAP_EVENT",
                                          "WRITE_ROWS_EVENT_V1", "UPDATE_ROWS_EVENT_V1", "DELETE_ROWS_EVENT_V1",
                                          "XID_EVENT", "QUERY_EVENT", "ROTATE_EVENT",
                                          "BINLOG_CHECKPOINT_EVENT", "GTID_LIST_EVENT"}
    assert events[0].name == "ROTATE_EVENT" and events[0].extra["artificial"]
    assert PASSWORD not in caplog.text and PASSWORD not in repr(src)


def test_stream_api_and_cli_give_what_the_files_give(server, tmp_path):
    """Row changes through stream.Stream over the source equal those read from the files, and
    `binlog-grammar stream --until-now --format jsonl` prints what `dump --format jsonl` prints."""
    run_sql(server, workload("c", 20))
    target = master_status(server)
    names = [p.name for p in server.binlogs()]
    files = [str(server.datadir / n) for n in names]

    def txs(stream):
        return [(tx.gtid, tx.end, tx.file.rsplit("/", 1)[-1], tx.start_pos, tx.end_pos,
                 [(c.op, c.db, c.table, c.before, c.after) for c in tx.changes])
                for tx in stream.transactions()]

    # one table's rows are decoded (every event was compared byte for byte above)
    flt = Filters(tables=["shop.orders_c"])
    live = txs(open_replication_stream(source(server, until_now=True), flt))
    assert live == txs(open_stream(files, flt)) and sum(1 for tx in live if tx[-1]) > 20
    env = dict(os.environ, REPL_PW=PASSWORD)
    common = ["--table", "shop.orders_c"]
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "stream", "--port", str(server.port),
                        "--user", "repl", "--password-env", "REPL_PW", "--until-now", "--heartbeat", "0.5",
                        "--format", "jsonl", *common], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    d = subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", "--format", "jsonl", *common,
                        *names], capture_output=True, text=True, cwd=server.datadir, timeout=120)
    assert d.returncode == 0, d.stderr
    assert r.stdout.splitlines() == d.stdout.splitlines()
    assert master_status(server) == target
    assert PASSWORD not in r.stdout + r.stderr


@pytest.mark.parametrize("fmt", ["text", "jsonl"])
def test_stream_prints_what_dump_prints_of_the_servers_binlog(server, fmt):
    """`stream --until-now` prints, line for line, what `dump` prints of the server's binlog files
    (every event, positions and all): the ROTATE and FORMAT_DESCRIPTION events the dump protocol
    makes up (log position 0, LOG_EVENT_ARTIFICIAL_F) are not in the files and not in the output."""
    run_sql(server, workload(f"p{fmt}", 15, flush_every=6))
    target = master_status(server)
    names = [p.name for p in server.binlogs()]
    env = dict(os.environ, REPL_PW=PASSWORD)
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "stream", "--port", str(server.port),
                        "--user", "repl", "--password-env", "REPL_PW", "--until-now", "--heartbeat", "0.5",
                        "--format", fmt], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert master_status(server) == target  # the files hold what the stream read, no more
    # stream's text is the ### text: dump's since its default became the replay script
    text = ["--format", "text"] if fmt == "text" else []
    d = subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", *text, "--format", fmt,
                        *names],
                       capture_output=True, text=True, cwd=server.datadir, timeout=120)
    assert d.returncode == 0, d.stderr
    streamed, dumped = r.stdout.splitlines(), d.stdout.splitlines()
    assert len(names) >= 3 and len(dumped) > 300
    diff = next((i for i, (a, b) in enumerate(zip(streamed, dumped)) if a != b), None)
    at = max(0, (diff or 0) - 1)
    assert diff is None and len(streamed) == len(dumped), (
        diff, len(streamed), len(dumped), streamed[at:at + 3], dumped[at:at + 3])
    # from a position inside a file (the server repeats the file's FDE, made up): as dump
    # --start-position of the files from there on
    disk = on_disk(server)
    f, p = next((f, o) for f, o, n, _r in disk[len(disk) // 2:] if n == "GTID_EVENT")
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "stream", "--port", str(server.port),
                        "--user", "repl", "--password-env", "REPL_PW", "--until-now", "--heartbeat", "0.5",
                        "--format", fmt, "--file", f, "--pos", str(p)], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    text = ["--format", "text"] if fmt == "text" else []  # stream's ### text
    d = subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", *text, "--format", fmt,
                        "--start-position", str(p), *names[names.index(f):]], capture_output=True,
                       text=True, cwd=server.datadir, timeout=120)
    assert d.returncode == 0, d.stderr
    def seqless(text):  # tx_seq counts the transactions the reader has seen: dump --start-position
        # reads (and counts) the first file from its start, the stream starts at the position
        return [re.sub(r'"tx_seq": \d+', '"tx_seq": _', ln) for ln in text.splitlines()]
    assert seqless(r.stdout) == seqless(d.stdout) and len(d.stdout.splitlines()) > 50


def test_gtid_mode_resumes_by_gtid_after_a_drop(server):
    """Start after a MariaDB GTID (@slave_connect_state); the connection is cut mid-stream and the
    source reconnects from the GTID state of the complete transactions, delivering each event once."""
    run_sql(server, workload("d", 10))
    start = server.sql("SELECT @@gtid_binlog_pos").strip()
    domain, srv, seq = (int(x) for x in start.split("-"))
    run_sql(server, workload("e", 120, flush_every=50))
    src = source(server, gtid=start, until_now=True, heartbeat=0.2, backoff=(0.05, 0.2))
    events = []
    for ev in src:
        events.append(ev)
        if len(events) == 200:  # the connection breaks under the stream
            src._conn.sock.close()
    assert src.reconnects == 1
    got = received(events)
    assert len({(f, o) for f, o, _n, _r in got}) == len(got)
    disk = {(f, o): (n, r) for f, o, n, r in on_disk(server)}
    # in GTID mode the server zeroes the create timestamp of the FDEs it sends before reaching
    # the position (and fixes their CRC32): sql/sql_repl.cc, send_format_descriptor_event
    def fde_body(n, r):
        return r[:19 + 2 + 50] + r[19 + 2 + 54:-4] if n == "FORMAT_DESCRIPTION_EVENT" else r
    diff = [(f, o, n) for f, o, n, r in got if disk[(f, o)] != (n, r)
            and not (n == disk[(f, o)][0] == "FORMAT_DESCRIPTION_EVENT"
                     and fde_body(n, r) == fde_body(n, disk[(f, o)][1]))]
    assert not diff, diff
    gtids = [e for e in events if e.name == "GTID_EVENT"]
    assert int(gtids[0].data.seq_no) == seq + 1  # the first transaction after the position
    # from the first transaction on, everything up to the target, in order
    first = got.index(next(g for g in got if g[2] == "GTID_EVENT"))
    expected = on_disk(server, until=src.target)
    at = expected.index(got[first])
    assert got[first:] == expected[at:]
    assert str(src.gtid_state) == server.sql("SELECT @@gtid_binlog_pos").strip()


def test_start_inside_a_file_and_non_blocking_end(server):
    """From a file and position in the middle of a file, the server repeats the file's FDE (log_pos
    0); a non-blocking dump (BINLOG_DUMP_NON_BLOCK) ends at the end of the binlog with EOF."""
    disk = on_disk(server)
    f, p = disk[len(disk) // 2][:2]
    events = list(source(server, file=f, pos=p, until_now=True))
    assert [(e.name, e.extra.get("artificial")) for e in events[:2]] == \
        [("ROTATE_EVENT", True), ("FORMAT_DESCRIPTION_EVENT", True)]
    assert events[0].data.new_log_ident == f and events[1].offset == 4
    assert received(events) == [d for d in disk if position_key(d[0], d[1]) >= position_key(f, p)]
    src = source(server, file=f, pos=p, blocking=False)
    assert received(list(src)) == received(events) and src.position == master_status(server)


# -- authentication, TLS and failures ----------------------------------------------------------

def test_tls_verified_and_refused(server, tls_dir):
    c = Connection("127.0.0.1", server.port, "repl", PASSWORD,
                   tls=TLSOptions("verify-identity", ca=str(tls_dir / "ca.pem"))).connect()
    assert c.encrypted
    cipher = c.query_dicts("SHOW SESSION STATUS LIKE 'Ssl_cipher'")[0]["Value"]
    assert cipher
    c.quit()
    run_sql(server, workload("tls", 3))
    events = list(source(server, until_now=True, tls=TLSOptions("required")))
    assert "WRITE_ROWS_EVENT_V1" in {n for _f, _o, n, _r in received(events)}
    with pytest.raises(ReplicationError) as ei:
        Connection("127.0.0.1", server.port, "repl", PASSWORD,
                   tls=TLSOptions("verify-ca", ca=str(tls_dir / "other.pem"))).connect()
    assert "certificate" in str(ei.value) and "\n" not in str(ei.value)


LOGINS = {"mysql_native_password": ("repl", PASSWORD), "client_ed25519": ("ed", ED_PASSWORD)}


@pytest.mark.parametrize("tls", ["disabled", "preferred", "verify-identity"])
@pytest.mark.parametrize("method", list(LOGINS))
def test_every_login_the_server_offers(server, tls_dir, method, tls):
    """Each authentication method MariaDB 10.11 serves over TCP (mysql_native_password, ed25519 of
    the auth_ed25519 plugin), with TLS off, preferred (the default) and verified: the login, a
    replication stream on that connection kind, and a wrong password refused (1045) in one line
    without it."""
    user, password = LOGINS[method]
    opts = TLSOptions(tls, ca=str(tls_dir / "ca.pem"))
    c = Connection("127.0.0.1", server.port, user, password, tls=opts).connect()
    assert c.auth_plugin == method and c.encrypted == (tls != "disabled")
    cipher = c.query_dicts("SHOW SESSION STATUS LIKE 'Ssl_cipher'")[0]["Value"]
    assert bool(cipher) == (tls != "disabled")
    c.quit()
    run_sql(server, workload(f"l{len(method)}{len(tls)}", 3))
    events = list(source(server, user=user, password=password, until_now=True, tls=opts))
    assert "WRITE_ROWS_EVENT_V1" in {n for _f, _o, n, _r in received(events)}
    with pytest.raises(ReplicationError) as ei:
        Connection("127.0.0.1", server.port, user, "wrong-" + password, tls=opts).connect()
    text = str(ei.value)
    assert "Access denied" in text and ei.value.code == 1045 and "\n" not in text
    assert password not in text


def test_the_server_offers_no_other_login(server):
    """The authentication plugins the server has: the two above, unix_socket (a local socket's
    peer, never over TCP) and mysql_old_password, which this client refuses in one line."""
    plugins = set(server.sql("SELECT PLUGIN_NAME FROM information_schema.PLUGINS WHERE "
                             "PLUGIN_TYPE='AUTHENTICATION' AND PLUGIN_STATUS='ACTIVE'").split())
    assert plugins <= {"mysql_native_password", "ed25519", "unix_socket", "mysql_old_password"}, plugins
    server.sql("SET sql_log_bin=0; CREATE USER IF NOT EXISTS old@'%' IDENTIFIED VIA mysql_old_password "
               "USING '7b06e4ef2c3b4c54';")  # OLD_PASSWORD('Old-pw')
    server.sql("SET GLOBAL secure_auth=0")  # else the server itself refuses the old format
    try:
        with pytest.raises(ReplicationError) as ei:
            Connection("127.0.0.1", server.port, "old", "Old-pw", tls=TLSOptions("disabled")).connect()
    finally:
        server.sql("SET GLOBAL secure_auth=1")
    assert "mysql_old_password" in str(ei.value) and "\n" not in str(ei.value), str(ei.value)


def _one_line_error(make, **kw):
    started = time.monotonic()
    with pytest.raises(ReplicationError) as ei:
        list(make(**kw))
    text = str(ei.value)
    assert "\n" not in text and PASSWORD not in text and PASSWORD not in repr(ei.value)
    assert time.monotonic() - started < 10
    return ei.value


def test_failures_are_one_line(server):
    e = _one_line_error(lambda: source(server, password="not-" + PASSWORD))
    assert e.code == 1045 and "Access denied" in str(e)
    e = _one_line_error(lambda: source(server, user="norepl"))
    assert e.code == 1227 or "denied" in str(e)
    e = _one_line_error(lambda: source(server, file="mariadb-bin.999999"))
    assert e.code == 1236 and "Could not find first log file" in str(e)
    e = _one_line_error(lambda: source(server, gtid="0-1-999999999"))
    assert e.code == 1236
    server.sql("SET GLOBAL binlog_format=STATEMENT")
    try:
        e = _one_line_error(lambda: source(server))
        assert "binlog_format=STATEMENT" in str(e)
    finally:
        server.sql("SET GLOBAL binlog_format=ROW")


def test_cli_failures_print_one_line_and_no_password(server):
    env = dict(os.environ, REPL_PW="wrong-" + PASSWORD)
    for extra, code in ((["--port", str(server.port)], 1), (["--port", str(server.port), "--file", "x.1"], 1)):
        r = subprocess.run([sys.executable, "-m", "binlog_grammar", "stream", "--user", "repl",
                            "--password-env", "REPL_PW", "--until-now", *extra], capture_output=True,
                           text=True, env=env, timeout=60)
        assert r.returncode == code
        assert len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr
        assert PASSWORD not in r.stderr + r.stdout


# -- the server killed and restarted mid-stream ------------------------------------------------

def test_server_killed_and_restarted_twice_mid_stream():
    _need_server()
    db = start_server([])
    try:
        run_sql(db, workload("k", 30))
        stop = threading.Event()

        def busy():
            i = 0
            while not stop.is_set():  # small transactions; errors while the server is down
                i += 1
                subprocess.run(client(db), input=workload(f"w{i % 3}", 60, sleep=0.002),
                               capture_output=True, text=True)
                if not stop.is_set():
                    time.sleep(0.05)

        got, errors = [], []
        src = source(db, heartbeat=0.2, read_timeout=2.0, reconnect_timeout=30, backoff=(0.05, 0.5))

        def consume():
            try:
                for ev in src:
                    got.append(ev)
            except Exception as e:  # noqa: BLE001 - reported by the assertion below
                errors.append(e)

        w = threading.Thread(target=busy)
        c = threading.Thread(target=consume)
        w.start()
        c.start()
        for _ in range(2):
            time.sleep(1.0)
            before = len(got)
            os.kill(db.proc.pid, signal.SIGKILL)
            db.proc.wait()
            assert before > 0
            db.start()
        time.sleep(1.0)
        stop.set()
        w.join(60)
        src.stop_at(*master_status(db))
        c.join(60)
        assert not c.is_alive() and not errors, errors
        assert src.reconnects >= 2
        got_ = received(got)
        assert len({(f, o) for f, o, _n, _r in got_}) == len(got_)  # nothing twice
        assert got_ == on_disk(db)  # nothing lost, in order, byte for byte
    finally:
        db.cleanup()
