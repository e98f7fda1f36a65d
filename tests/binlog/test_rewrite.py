"""`--rewrite-db='from->to'` (issue 28 item 1; binlog/rewrite.py): the TABLE_MAP events rebuilt
byte for byte by the spec (new name, length and CRC32; the same bytes when nothing is renamed),
mariadb-binlog's rule syntax, and `dump --rewrite-db` printing what `mariadb-binlog -vv
--base64-output=decode-rows --rewrite-db` prints (the `use`, the Table_map lines, the rows'
pseudo-SQL) on a real MariaDB's binlog and on the corpus files with TABLE_MAPs."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import zlib

import pytest

from binlog_grammar.binlog.parse import parse_event
from binlog_grammar.binlog.reader import read_events
from binlog_grammar.binlog.rewrite import Rules, parse_rule, rewrite_table_map
from binlog_grammar.testing import mariadb
from helpers.paths import corpus_files
from helpers.services import need_mariadb, need_mariadb_binlog


def dump(*argv):
    """dump's decoded text (-vv --base64-output=decode-rows), the form compared here."""
    return subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", "-vv",
                           "--base64-output=decode-rows", *map(str, argv)],
                          capture_output=True, text=True, env={**os.environ, "TZ": "UTC"})


def theirs(*argv):
    return subprocess.run(["mariadb-binlog", "-vv", "--base64-output=decode-rows", *map(str, argv)],
                          capture_output=True, text=True, env={**os.environ, "TZ": "UTC"})


def test_rule_syntax():
    assert parse_rule("a->b") == ("a", "b")
    assert parse_rule("  shop -> shop_restore ") == ("shop", "shop_restore")
    for bad in ("a", "->b", "a->", " -> "):
        with pytest.raises(ValueError):
            parse_rule(bad)
    rules = Rules([("a", "b"), ("a", "c"), ("x", "y")])
    assert (rules.db("a"), rules.db("x"), rules.db("q")) == ("b", "y", "q")
    r = dump("--rewrite-db", "nothing", "/nonexistent")
    assert r.returncode == 2 and "missing '->'" in r.stderr.strip().splitlines()[-1]


def table_maps():
    for path in corpus_files():
        try:
            for ev in read_events(str(path)):
                if ev.name == "TABLE_MAP_EVENT":
                    yield path, ev
        except Exception:  # damaged corpus files: their TABLE_MAPs before the damage were read
            continue


@pytest.mark.corpus
def test_table_maps_rebuilt_by_the_spec():
    seen = 0
    for path, ev in table_maps():
        raw, state = bytes(ev.raw), _state_of(path)
        db = ev.data["db"]
        db = db.decode() if isinstance(db, bytes) else db
        assert rewrite_table_map(raw, {"no such db": "x"}, state) == raw
        for new in ("b", db + "_restored_here", "ü" * 3):
            out = rewrite_table_map(raw, {db: new}, state)
            delta = len(new.encode()) - len(db.encode())
            assert len(out) == len(raw) + delta
            assert int.from_bytes(out[9:13], "little") == len(out)
            if ev.footer:
                assert zlib.crc32(out[:-4]) == int.from_bytes(out[-4:], "little")
            back = parse_event(out, state, verify_checksum=True)
            got = back.data["db"]
            assert (got.decode() if isinstance(got, bytes) else got) == new
            for key in ("table_id", "table", "column_count", "column_types"):
                assert back.data[key] == ev.data[key], key
            # and back again: the file's bytes but for the CRC32 of a checksummed event
            again = rewrite_table_map(out, {new: db}, state)
            assert again[:-4] == raw[:-4] if ev.footer else again == raw
        seen += 1
    if not seen:
        pytest.skip("no TABLE_MAP_EVENT in the corpus")


def _state_of(path):
    from binlog_grammar.binlog.reader import first_format_event

    return first_format_event(str(path))[1]


_TABLE_MAP = re.compile(r"CRC32 0x[0-9a-f]+ ")


def decoded(text: str, use=True) -> list:
    """What --rewrite-db changes: `use` lines, Table_map summaries and the rows' pseudo-SQL
    (mariadb-binlog prints a rewritten `use` before the event's header line, this project after
    it: the lines are compared in order, without the header lines)."""
    keep = []
    for ln in text.splitlines():
        if (use and ln.startswith("use ")) or ln.startswith("###"):
            keep.append(ln)
        elif "\tTable_map: " in ln:
            keep.append(ln.split("\t", 1)[1])
    return keep


@pytest.mark.server
@pytest.mark.corpus
def test_corpus_rewrite_is_mariadb_binlogs():
    need_mariadb_binlog()
    compared = 0
    for path in corpus_files():
        want = theirs(path)
        if want.returncode != 0:
            continue
        dbs = sorted(set(re.findall(r"Table_map: `([^`]*)`", want.stdout)))
        if not dbs:
            continue
        rules = [f"--rewrite-db={db}->{db}_new" for db in dbs[:2]]
        ours, want = dump(*rules, path), theirs(*rules, path)
        assert ours.returncode == 0, ours.stderr
        # the corpus's MySQL files: where mariadb-binlog prints `use` differs from this
        # project's without --rewrite-db already; the tables and rows are compared
        assert decoded(ours.stdout, False) == decoded(want.stdout, False), path.name
        assert decoded(ours.stdout, False) != decoded(dump(path).stdout, False), path.name
        compared += 1
    assert compared >= 3


def headers(text: str) -> list:
    """Each event's `# at` line and its header line up to the tab (not the summary after it)."""
    return [ln.split("\t")[0].replace("  ", " ") for ln in text.splitlines()
            if ln.startswith("# at ") or re.match(r"^#\d{6} ", ln)]


def crcs(text: str) -> list:
    return re.findall(r"end_log_pos (\d+) CRC32 (0x[0-9a-f]+)", text)


@pytest.fixture(scope="module")
def server_binlog(tmp_path_factory):
    need_mariadb()
    db = mariadb.MariaDB(["--binlog-row-metadata=FULL"])
    try:
        db.start()
        db.sql("CREATE DATABASE a; CREATE DATABASE c; USE a; CREATE TABLE t (id INT PRIMARY KEY, "
               "v VARCHAR(10), e ENUM('x','y'), s SET('p','q'), u INT UNSIGNED); "
               "INSERT INTO t VALUES (1,'x','y','p,q',3); UPDATE t SET v='z'; USE c; "
               "INSERT INTO a.t VALUES (2,'w','x','',4); CREATE TABLE c.k (id INT PRIMARY KEY); "
               "INSERT INTO c.k VALUES (5); DELETE FROM a.t WHERE id=1; FLUSH BINARY LOGS;")
        yield db.binlogs()[-2]
    finally:
        db.cleanup()


@pytest.mark.server
def test_server_binlog_rewrite_is_mariadb_binlogs(server_binlog):
    need_mariadb_binlog()
    for rules in (["a->b"], ["a -> a_much_longer_name", "c->d"], ["c->a", "a->c"]):
        argv = [f"--rewrite-db={r}" for r in rules]
        ours, want = dump(*argv, server_binlog), theirs(*argv, server_binlog)
        assert ours.returncode == 0, ours.stderr
        assert decoded(ours.stdout) == decoded(want.stdout), rules
        # offsets, end_log_pos and CRC32s stay the file's, as mariadb-binlog prints them
        assert headers(ours.stdout) == headers(dump(server_binlog).stdout)
        assert crcs(ours.stdout) == crcs(want.stdout)
    # without the file's FormatState (as R's replay writer calls it): a v4 header, a CRC32 footer
    # found by its value
    for ev in read_events(str(server_binlog)):
        if ev.name == "TABLE_MAP_EVENT":
            out = rewrite_table_map(bytes(ev.raw), {"a": "bb"})
            assert out == rewrite_table_map(bytes(ev.raw), {"a": "bb"}, _state_of(server_binlog))
    # the compiled lane and --jobs stand by: the same text on both backends
    env = {**os.environ, "TZ": "UTC", "BINLOG_GRAMMAR_BACKEND": "python"}
    py = subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", "-vv",
                         "--base64-output=decode-rows", "--rewrite-db=a->b",
                         str(server_binlog)], capture_output=True, text=True, env=env)
    assert py.stdout == dump("--rewrite-db=a->b", "--jobs", "2", server_binlog).stdout


@pytest.mark.server
def test_restore_into_the_renamed_database():
    """A workload on `shop` (DDL and DML, two tables, a default database elsewhere) replayed by
    `sql --rewrite-db shop->shop_restore | mariadb`, and by dump's replay form (BINLOG blocks of
    the rebuilt TABLE_MAPs), into a fresh server each: every table of shop_restore has the
    source's CHECKSUM TABLE."""
    need_mariadb()
    opts = ["--binlog-row-metadata=FULL"]
    for command in (["sql"], ["dump", "--base64-output=AUTO"]):
        _restore(opts, command)


def _restore(opts, command):
    with mariadb.MariaDB(opts) as src, mariadb.MariaDB(opts) as dst:
        src.sql("RESET MASTER; CREATE DATABASE shop; CREATE DATABASE other; USE shop; "
                "CREATE TABLE o (id INT PRIMARY KEY AUTO_INCREMENT, who VARCHAR(20), n INT); "
                "CREATE TABLE i (id INT PRIMARY KEY, price DECIMAL(8,2), note TEXT);"
                "INSERT INTO o (who, n) VALUES ('a', 1), ('b', 2), ('c', 3); "
                "INSERT INTO i VALUES (1, 9.99, 'x'), (2, 0.5, NULL); "
                "ALTER TABLE o ADD COLUMN tag CHAR(3) DEFAULT 'new'; "
                "UPDATE o SET n = n * 10 WHERE id > 1; USE other; "
                "DELETE FROM shop.i WHERE id = 2; INSERT INTO shop.i VALUES (3, 1.25, 'y'); "
                "CREATE TABLE other.t (x INT); INSERT INTO other.t VALUES (1); FLUSH BINARY LOGS;")
        binlog = src.binlogs()[-2]
        script = subprocess.run([sys.executable, "-m", "binlog_grammar", *command,
                                 "--rewrite-db", "shop->shop_restore", str(binlog)],
                                capture_output=True, text=True)
        assert script.returncode == 0, script.stderr
        dst.sql("CREATE DATABASE shop_restore;")
        r = subprocess.run(dst._client(), input=script.stdout, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        for table in ("o", "i"):
            want = src.sql(f"CHECKSUM TABLE shop.{table}").split()[-1]
            got = dst.sql(f"CHECKSUM TABLE shop_restore.{table}").split()[-1]
            assert got == want != "NULL", (command, table)
        assert dst.sql("SELECT COUNT(*) FROM information_schema.tables "
                       "WHERE table_schema = 'shop'").strip() == "0"
