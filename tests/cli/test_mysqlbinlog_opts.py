"""dump takes mysqlbinlog's selection and remote options (cli/mysqlbinlog_opts.py, issue 28 item
1) with their names, short forms and meaning: the same `# at N` events as mariadb-binlog with the
same options, on the corpus and on a real server's own binlogs, and `-R` reading that server
giving what `dump` gives of its files. One server for the module (about 15 s)."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from helpers.paths import ROOT, corpus_files
from helpers.services import need_mariadb, need_mariadb_binlog

pytestmark = pytest.mark.server

SAMPLE = str(ROOT / "samples" / "mariadb-10.11-sample.000001")
DECODE = ["-vv", "--base64-output=decode-rows"]
AT = re.compile(r"^# at (\d+)$", re.M)
# an event printed (its header line after its `# at`) that carries data: mariadb-binlog -d
# prints `# at N` alone for an event it leaves out, and the GTID and COMMIT of every transaction
# where dump leaves out whole transactions (DESIGN: filters never cut a transaction); its
# Table_map header follows the Annotate_rows' `# at`, so Table_maps are left out here
PRINTED = re.compile(r"^# at (\d+)\n#\d{6} [^\n]*\t(?:Query|(?:Write|Update|Delete)"
                     r"(?:_compressed)?_rows)", re.M)

WORKLOAD = """
CREATE DATABASE a; CREATE DATABASE b;
CREATE TABLE a.t (id INT PRIMARY KEY, v VARCHAR(20));
CREATE TABLE b.t (id INT PRIMARY KEY, v VARCHAR(20));
INSERT INTO a.t VALUES (1, 'a1'), (2, 'a2');
USE a; SET SESSION gtid_domain_id = 1; INSERT INTO b.t VALUES (1, 'b from a');
USE b; SET SESSION gtid_domain_id = 2; INSERT INTO b.t VALUES (2, 'b2');
SET SESSION gtid_domain_id = 1; UPDATE a.t SET v = 'a from b' WHERE id = 1;
FLUSH BINARY LOGS;
USE a; DELETE FROM a.t WHERE id = 2; ALTER TABLE a.t ADD COLUMN w INT;
USE b; SET SESSION gtid_domain_id = 2; INSERT INTO b.t VALUES (3, 'b3');
SET SESSION gtid_domain_id = 0;
FLUSH BINARY LOGS;
INSERT INTO a.t VALUES (5, 'a5', 5);
"""


def dump(*words, check=True):
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", *words],
                       capture_output=True, text=True, cwd=ROOT, stdin=subprocess.DEVNULL)
    if check:
        assert r.returncode == 0, r.stderr
    return r


def oracle(*words):
    r = subprocess.run(["mariadb-binlog", "--no-defaults", *words], capture_output=True,
                       text=True)
    return r


ENVELOPE = re.compile(r"(BEGIN|COMMIT|SAVEPOINT|ROLLBACK)\b", re.I)


def positions(text):
    return [int(m) for m in AT.findall(text)]


def selected(text):
    """The statements and row changes printed, by position; BEGIN, COMMIT, SAVEPOINT and
    ROLLBACK (TO), which mariadb-binlog -d prints whatever the database, left out."""
    found = []
    for block in re.split(r"(?m)^(?=# at \d+$)", text):
        m = PRINTED.match(block)
        if m is None:
            continue
        body = [ln for ln in block.splitlines()[2:]
                if not ln.startswith(("SET ", "/*", "#", "use "))]
        if body and ENVELOPE.match(body[0]):
            continue
        found.append(int(m[1]))
    return found


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    need_mariadb()
    need_mariadb_binlog()
    from binlog_grammar.testing.mariadb import MariaDB

    db = MariaDB(basedir=tmp_path_factory.mktemp("mariadb"))
    db.start()
    try:
        db.sql(WORKLOAD)
        yield db
    finally:
        db.cleanup()


def remote(db):
    return ["-R", "--no-defaults", "-h", "127.0.0.1", "-P", str(db.port), "-u", "root"]


def selections(first, second):
    """Option sets of the selection options, in both programs' spellings."""
    return [[], ["-d", "a"], ["-d", "b"], ["--database=a"], ["-j", str(first)],
            ["--start-position", str(first), "--stop-position", str(second)],
            ["-j", str(first), "-d", "b"], ["-F"], ["--force-if-open", "-d", "a"], ["-o", "3"],
            ["--offset=6", "--stop-position", str(second)], ["--server-id", "1"],
            ["--server-id=2"], ["-o", "4", "--server-id", "1"], ["--do-server-ids=2,1"],
            ["--ignore-server-ids=1"], ["--ignore-server-ids", "2,3"],
            ["--server-id=1", "--do-server-ids=3"], ["--do-domain-ids=1"],
            ["--ignore-domain-ids=0,2"], ["--do-domain-ids", "0,2", "-j", str(first)]]


def test_selection_like_mariadb_binlog_on_a_servers_binlogs(server):
    files = [str(p) for p in server.binlogs()]
    for path in files:
        every = positions(oracle(*DECODE, path).stdout)
        assert every, path
        first, second = every[len(every) // 3], every[2 * len(every) // 3]
        for words in selections(first, second):
            ours = dump(*DECODE, *words, path).stdout
            theirs = oracle(*DECODE, *words, path)
            assert selected(ours) == selected(theirs.stdout), (path, words)
            if "-d" not in words and not any(w.startswith("--database") for w in words):
                assert positions(ours) == positions(theirs.stdout), (path, words)
                if "Row event for unknown table" not in theirs.stdout:
                    # byte for byte, but where the window left out a rows event's TABLE_MAP,
                    # whose rows mariadb-binlog cannot print (dump read it, and prints them)
                    assert ours == theirs.stdout, (path, words)
        for words in (["-o", "3"], ["--server-id", "2"], ["--do-server-ids=1,2"],
                      ["--ignore-server-ids=1", "-D"], ["--do-domain-ids=1"],
                      ["--ignore-domain-ids=1", "-vv"], ["--do-domain-ids=0,2", "-H"]):
            # the replay form, byte for byte (with a server id rule both end by setting the
            # session's server id and GTID domain back)
            assert dump(*words, path).stdout == oracle(*words, path).stdout, (path, words)


def test_selection_like_mariadb_binlog_on_the_corpus():
    need_mariadb_binlog()
    checked = 0
    for path in [SAMPLE, *map(str, corpus_files())]:
        plain = oracle(*DECODE, path)
        every = positions(plain.stdout)
        if plain.returncode != 0 or len(every) < 3:
            continue
        first, second = every[len(every) // 3], every[2 * len(every) // 3]
        for words in (["-j", str(first)], ["-j", str(first), "--stop-position", str(second)],
                      ["-d", "test"], ["-d", "shop"], ["-o", "4"], ["--server-id", "1"]):
            theirs = oracle(*DECODE, *words, path)
            if theirs.returncode != 0:
                continue
            ours = dump(*DECODE, *words, path)
            assert selected(ours.stdout) == selected(theirs.stdout), (path, words)
            if "-d" not in words:
                assert ours.stdout == theirs.stdout, (path, words)  # and byte for byte
        checked += 1
        if checked == 8:
            break
    assert checked >= 3


def test_remote_read_equals_the_local_files(server):
    files = server.binlogs()
    name = files[0].name
    for form in ([], DECODE, DECODE + ["-d", "b"]):
        local = dump(*form, str(files[0])).stdout
        assert dump(*form, *remote(server), name).stdout == local, form
    other = ["--read-from-remote-source"] + remote(server)[1:]  # MySQL 8's name
    assert dump(*DECODE, *other, name).stdout == dump(*DECODE, str(files[0])).stdout
    everything = dump(*DECODE, *map(str, files)).stdout
    got = dump(*DECODE, *remote(server), "--to-last-log", name).stdout
    assert got == everything


def test_remote_read_over_the_servers_socket_file(server, tmp_path):
    """-R with -S (and with localhost and an option file's socket, as the MySQL clients
    connect): the server's socket file, not TCP; the script is mariadb-binlog -R -S's."""
    name = server.binlogs()[0].name
    sock = ["-R", "--no-defaults", "-S", str(server.socket), "-u", "root"]
    got = dump(*sock, name)
    assert got.returncode == 0 and got.stdout, got.stderr
    theirs = oracle("-R", "-S", str(server.socket), "-u", "root", name)  # --no-defaults first
    assert got.stdout == theirs.stdout == dump(str(server.binlogs()[0])).stdout
    cnf = tmp_path / "my.cnf"
    cnf.write_text(f"[client]\nuser=root\nsocket={server.socket}\nport=1\n")
    via_file = dump("-R", f"--defaults-file={cnf}", "-h", "localhost", name)
    assert via_file.stdout == got.stdout, via_file.stderr


def test_raw_backup_and_result_file(server, tmp_path):
    files = server.binlogs()
    folder = tmp_path / "backup"
    dump(*remote(server), "--raw", "--to-last-log", "-r", f"{folder}/", files[0].name)
    assert sorted(os.listdir(folder)) == sorted(p.name for p in files)
    for p in files:
        assert (folder / p.name).read_bytes() == p.read_bytes(), p.name
    only = tmp_path / "one"
    dump(*remote(server), "--raw", "-r", f"{only}/", files[1].name)
    assert os.listdir(only) == [files[1].name]
    out = tmp_path / "out.sql"
    r = dump(*DECODE, "-r", str(out), "-d", "a", str(files[0]))
    assert r.stdout == "" and out.read_text() == dump(*DECODE, "-d", "a", str(files[0])).stdout
    assert selected(out.read_text()) == selected(oracle(*DECODE, "-d", "a", str(files[0])).stdout)


def test_remote_options_need_R():
    r = dump("--raw", SAMPLE, check=False)
    assert r.returncode == 2 and "give -R" in r.stderr


def test_version_help_host_and_nearest_option():
    r = dump("-V")
    assert re.fullmatch(r"binlog-grammar \S+ \(backend: (c|python)\b.*\n", r.stdout), r.stdout
    assert dump("--version").stdout == r.stdout
    h = dump("--help").stdout
    for word in ("-h HOST, --host HOST", "-R, --read-from-remote-server", "-r FILE",
                 "-d DATABASE", "-j [FILE:]N", "-H ", "--to-last-log", "--stop-never",
                 "--raw", "-F, --force-if-open", "-V, --version"):
        assert word in h, word
    for word in ("-o N, --offset N", "--server-id ID"):
        assert word in h, word
    # -h is the host, as mysqlbinlog's: an unreachable one is a connection error, not the help
    r = dump("-R", "--no-defaults", "-h", "127.0.0.1", "-P", "9", "-u", "x", "bin.000001",
             check=False)
    assert r.returncode == 1 and "usage:" not in r.stdout, r.stdout + r.stderr
    r = dump("--to-lastlog", SAMPLE, check=False)
    assert r.returncode == 2 and "did you mean --to-last-log?" in r.stderr
    assert "usage: binlog-grammar dump" in r.stderr
    for rules in (["--do-domain-ids=1", "--ignore-domain-ids=2"],
                  ["--server-id=1", "--ignore-server-ids=2"]):  # one kind of rule, as theirs
        r = dump(*rules, SAMPLE, check=False)
        assert r.returncode == 2 and "cannot be given with" in r.stderr, rules
    assert dump("--do-domain-ids=x", SAMPLE, check=False).returncode == 2


@pytest.mark.parametrize("command", ["generate", "docs", "verify", "dump", "stats", "sql",
                                     "flashback", "pipeline", "stream", "repair"])
def test_every_command_says_its_version_and_backend(command):
    env = {**os.environ, "BINLOG_GRAMMAR_BACKEND": "python"}
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", command, "--version"],
                       capture_output=True, text=True, cwd=ROOT, env=env)
    assert r.returncode == 0 and r.stdout.startswith("binlog-grammar ") and \
        r.stdout.endswith("(backend: python)\n"), r.stdout + r.stderr


def test_stop_never_follows_new_files(server, tmp_path):
    """-R --raw --stop-never -r DIR/: the copy follows a rotation the server makes while it runs
    (killed after; the files before the last are closed and byte-identical)."""
    import time

    folder = tmp_path / "live"
    first = server.binlogs()[0].name
    proc = subprocess.Popen([sys.executable, "-m", "binlog_grammar", "dump", *remote(server),
                             "--raw", "--stop-never", "-r", f"{folder}/", first], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        before = len(server.binlogs())
        server.sql("INSERT INTO a.t VALUES (9, 'live', 9); FLUSH BINARY LOGS;")
        files = server.binlogs()
        assert len(files) == before + 1
        deadline = time.time() + 30
        while time.time() < deadline and not all(
                (folder / p.name).exists() and (folder / p.name).stat().st_size >= p.stat().st_size
                for p in files):
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.2)
    finally:
        proc.kill()
        proc.wait()
    for p in files[:-1]:
        assert (folder / p.name).read_bytes() == p.read_bytes(), p.name
