"""`dump --flashback` (-B): rows events inverted by the grammar (binlog/invert.py) as BINLOG
statements (output/flashback_binlog.py), held to `mariadb-binlog --flashback` and a real server.

1. Event for event against mariadb-binlog: the BINLOG statements of both scripts, decoded from
   base64, are the same events in the same statements in the same order; FORMAT_DESCRIPTION and
   TABLE_MAP events byte for byte, inverted rows events byte for byte but for their CRC32 (ours is
   that of the new bytes, mariadb-binlog leaves the original's: checked both ways). On the
   samples and the corpus's rows events (no server), and on drawn workloads of a real MariaDB.
2. Replayed: drawn tables (the differential suite's layouts and workloads, binlog_schema.cases)
   in several databases, a snapshot of every table's CHECKSUM TABLE, a workload of
   multi-statement, multi-table and autocommit transactions (compressed rows events in some
   examples), then `dump --flashback FILE | mariadb` returns every checksum to the snapshot;
   `mariadb-binlog FILE | mariadb` replays the workload again and `mariadb-binlog --flashback FILE
   | mariadb` undoes it as well (the baseline).
3. A property on rows events drawn from the specs (helpers.rows): inverting twice gives the
   event's bytes back (v1 and v2, update images with different column bitmaps).

BINLOG_GRAMMAR_FLASHBACK_EXAMPLES sets the drawn workloads of 2 (default 3).
"""
from __future__ import annotations

import base64
import os
import re
import struct
import subprocess
import sys
import zlib

import pytest
from hypothesis import HealthCheck, event, example, given, reject, settings
from hypothesis import strategies as st

from binlog_grammar.binlog.invert import invert_rows_event
from binlog_grammar.binlog.parse import parse_event
from binlog_grammar.binlog.reader import BinlogFile
from binlog_grammar.binlog.rows import Table
from binlog_grammar.errors import BinlogError
from binlog_grammar.generated import types as T
from binlog_grammar.generated.catalog import EVENTS
from binlog_grammar.testing.schema import Case, Settings, Statement, cases

from helpers.paths import ROOT, CORPUS
from binlog_grammar.testing.strategies import column_value, columns_strategy
from helpers.rows import SPECS, TYPE_CODES, tables_and_rows
from helpers.services import need_mariadb, need_mariadb_binlog

SAMPLES = sorted((ROOT / "samples").glob("mariadb-10.11-sample.*"))
EXAMPLES = int(os.environ.get("BINLOG_GRAMMAR_FLASHBACK_EXAMPLES", "3"))
ROWS_CODES = {23, 24, 25, 30, 31, 32}
FDE_CODE, TABLE_MAP_CODE = 15, 19


# -- the two scripts, decoded -------------------------------------------------------------------

def binlog_blocks(script: str) -> list:
    """The events of each BINLOG statement of a script: [[event bytes, ...], ...]. Each event is
    its own base64 text (mariadb-binlog's my_base64_encode, ours the same), so its length is read
    from the header of the first 21 bytes decoded."""
    out = []
    for m in re.finditer(r"^BINLOG '\n(.*?)'", script, re.S | re.M):
        chars = "".join(m.group(1).split())
        events, i = [], 0
        while i < len(chars):
            n = struct.unpack_from("<I", base64.b64decode(chars[i:i + 28]), 9)[0]
            k = (n + 2) // 3 * 4
            events.append(base64.b64decode(chars[i:i + k]))
            i += k
        out.append(events)
    return out


def ours(paths, *extra) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", "--flashback", *extra,
                           *map(str, paths)], capture_output=True, text=True, cwd=ROOT)


def theirs(paths) -> subprocess.CompletedProcess:
    return subprocess.run(["mariadb-binlog", "--no-defaults", "--flashback", *map(str, paths)],
                          capture_output=True, text=True)


def compare_blocks(our_script: str, their_script: str) -> int:
    """Assert both scripts' BINLOG statements hold the same events (see the module's text);
    the number of inverted rows events compared."""
    a, b = binlog_blocks(our_script), binlog_blocks(their_script)
    # mariadb-binlog writes every FORMAT_DESCRIPTION_EVENT of its input first (a relay log holds
    # two); the script writes the one in effect before the transactions it governs
    fdes = [e for blk in b if {x[4] for x in blk} == {FDE_CODE} for e in blk]
    for blk in a:
        if {x[4] for x in blk} == {FDE_CODE}:
            assert all(e in fdes for e in blk)
    a, b = ([blk for blk in x if {e[4] for e in blk} != {FDE_CODE}] for x in (a, b))
    assert [[e[4] for e in blk] for blk in a] == [[e[4] for e in blk] for blk in b]
    rows = 0
    for i, (x, y) in enumerate(zip(a, b)):
        for j, (e, f) in enumerate(zip(x, y)):
            where = f"statement {i}, event {j} (type {e[4]})"
            if e[4] not in ROWS_CODES and not (e[4] == TABLE_MAP_CODE and e != f):
                assert e == f, where
                continue
            # inverted rows events, and TABLE_MAPs --rewrite-db rebuilt (binlog/rewrite.py): the
            # CRC32 ours is that of the new bytes, mariadb-binlog's the one read
            rows += e[4] in ROWS_CODES
            if e == f:  # a file without CRC32 footers
                continue
            assert e[:-4] == f[:-4], f"{where}\n ours   {e.hex()}\n theirs {f.hex()}"
            assert struct.unpack("<I", e[-4:])[0] == zlib.crc32(e[:-4]), where
    return rows


# -- 1 without a server: the samples and the corpus ------------------------------------------

@pytest.mark.server
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_samples_as_mariadb_binlog_inverts_them(path):
    need_mariadb_binlog()
    mine, other = ours([path]), theirs([path])
    assert mine.returncode == 0, mine.stderr
    assert compare_blocks(mine.stdout, other.stdout) > 0


@pytest.mark.server
def test_several_files_last_transaction_first():
    """Both sample files at once: the last file's transactions first, each after the
    FORMAT_DESCRIPTION_EVENT of its own file, the events as mariadb-binlog's."""
    need_mariadb_binlog()
    mine, other = ours(SAMPLES), theirs(SAMPLES)
    assert mine.returncode == 0, mine.stderr
    assert compare_blocks(mine.stdout, other.stdout) == 8
    fdes = [blk[0] for blk in binlog_blocks(mine.stdout) if blk[0][4] == FDE_CODE]
    assert fdes == [next(iter(BinlogFile(p))).raw for p in reversed(SAMPLES)]


CORPUS_ROWS = ["mysql-enum-string-set.000001", "ver_trunk_row_v2.001", "bug32407.001",
               "minimal_row_metadata.000001", "rpl_unfiltered_hidden_gcol.000001"]


@pytest.mark.server
@pytest.mark.corpus
@pytest.mark.parametrize("name", CORPUS_ROWS)
def test_corpus_as_mariadb_binlog_inverts_it(name):
    """MySQL's v1 and v2 rows events, bitmaps with unused bits set (mysql-enum-string-set's
    UPDATE logs 0xff for 5 columns)."""
    need_mariadb_binlog()
    path = CORPUS / name
    if not path.exists():
        pytest.skip(f"{path} is not there")
    mine, other = ours([path]), theirs([path])
    assert mine.returncode == 0, mine.stderr
    assert compare_blocks(mine.stdout, other.stdout) > 0


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["write-full-row.binlog", "update-full-row.binlog",
                                  "write-partial-row.binlog"])
def test_partial_before_images_are_refused(name):
    """NDB's binlogs log a DELETE's before image with its key alone: the row an inverted event
    would put back lacks its other columns, so the transaction is a comment and a note (the
    flashback command refuses such images too; mariadb-binlog writes the partial row)."""
    path = CORPUS / name
    if not path.exists():
        pytest.skip(f"{path} is not there")
    r = ours([path])
    assert r.returncode == 0
    assert "before images lack columns" in r.stderr
    assert "# not inverted: " in r.stdout and "lack columns" in r.stdout


@pytest.mark.corpus
def test_refused_events_are_comments_and_a_note():
    """PARTIAL_UPDATE_ROWS_EVENT (JSON diffs) cannot be inverted: its transaction is a comment,
    a note on stderr names it; the file is valid, so the exit status is 0 (as `flashback`'s)."""
    path = CORPUS / "json.binlog.000001"
    if not path.exists():
        pytest.skip(f"{path} is not there")
    r = ours([path])
    assert r.returncode == 0
    assert "note: 1 transaction could not be inverted" in r.stderr
    assert "PARTIAL_UPDATE_ROWS_EVENT" in r.stderr
    assert "# not inverted: " in r.stdout


# -- 3 the property --------------------------------------------------------------------------

def _state():
    f = BinlogFile(SAMPLES[0])
    next(iter(f))  # its FORMAT_DESCRIPTION_EVENT: MariaDB 10.11, CRC32 footers
    return f.state


@st.composite
def full_images(draw):
    """A table and rows whose images hold every column (binlog_row_image=FULL), the images
    flashback inverts; helpers.rows.tables_and_rows draws any bitmaps, mostly partial ones."""
    cols = draw(columns_strategy())
    code = draw(st.sampled_from(sorted(TYPE_CODES.values())))
    images = [[True] * len(cols) for _ in range(2 if code == TYPE_CODES["update"] else 1)]
    rows = []
    for _ in range(draw(st.integers(1, 3))):
        imgs = []
        for _img in images:
            nulls = [c.type_name == "NULL" or draw(st.booleans()) and draw(st.booleans())
                     for c in cols]
            cells = [None if null else draw(column_value(SPECS, c)) for c, null in zip(cols, nulls)]
            imgs.append({"value_options": None, "partial_bits": None, "null_bits": nulls,
                         "cells": cells})
        rows.append({"images": imgs})
    ctx = {"columns": cols, "images": images, "type_code": code,
           "json_columns": sum(c.json_index is not None for c in cols)}
    return ctx, {"rows": rows}


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(st.one_of(tables_and_rows(), full_images()), st.sampled_from(["v1", "v2"]),
       st.integers(0, 0xFFFF))
def test_inverting_twice_gives_the_event_back(case, version, flags):
    ctx, value = case
    code = ctx["type_code"] - (7 if version == "v1" else 0)  # 30..32 or 23..25
    state = _state()
    try:
        rows = T.row_images.build(value, **dict(state.context(code), **dict(ctx, type_code=code)))
    except Exception:  # noqa: BLE001 - values the struct cannot hold (too long for a column)
        reject()
    cols = {"columns_present": ctx["images"][0]}
    if len(ctx["images"]) == 2:
        cols["columns_present_after"] = ctx["images"][1]
    data = {"table_id": 70, "flags": flags, "columns": cols, "rows": rows}
    if version == "v2":
        data.update(extra_data_len=2, extra_info=[])
    body = EVENTS[code].build(data, state.context(code))
    header = {"timestamp": 1700000000, "type_code": code, "server_id": 1,
              "event_length": 19 + len(body) + 4, "log_pos": 1234, "flags": 0}
    head = T.common_header.build(header, **state.context(code))
    raw = head + body + struct.pack("<I", zlib.crc32(head + body))
    table = Table(70, "db", "t", ctx["columns"])
    ev = parse_event(raw, state)
    partial = [not all(img) for img in ctx["images"]]
    if ctx["type_code"] != 30 and partial[0]:  # a before image lacking columns: refused
        with pytest.raises(BinlogError, match="before images lack columns"):
            invert_rows_event(ev, table)
        return
    once = invert_rows_event(ev, table)
    assert len(once) == len(raw)
    inverted = parse_event(once, state)
    cols, inv = ev.data["columns"], inverted.data["columns"]
    if ctx["type_code"] == TYPE_CODES["update"]:  # the bitmaps swapped with the images
        assert list(inv["columns_present"]) == list(cols["columns_present_after"])
        assert list(inv["columns_present_after"]) == list(cols["columns_present"])
    if partial[-1] and ctx["type_code"] != 32:  # the inverse's before image is that image
        with pytest.raises(BinlogError, match="before images lack columns"):
            invert_rows_event(inverted, table)
        return
    event("inverted twice")
    assert invert_rows_event(inverted, table) == raw


# -- 1 and 2 on a real server ----------------------------------------------------------------

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    need_mariadb()
    need_mariadb_binlog()
    from binlog_grammar.testing.differential import SERVER_OPTIONS
    from binlog_grammar.testing.mariadb import MariaDB

    db = MariaDB(SERVER_OPTIONS, basedir=tmp_path_factory.mktemp("fbsrv"))
    db.start()
    db.count = 0
    yield db
    db.cleanup()


def _client(db):
    return ["mariadb", "--no-defaults", "-uroot", "-h127.0.0.1", f"-P{db.port}"]


def _pipe(db, script: str, cwd=None):
    r = subprocess.run(_client(db), input=script.encode("utf-8", "surrogateescape"),
                       capture_output=True, cwd=cwd)
    assert r.returncode == 0, r.stderr.decode("utf-8", "replace")[-2000:]


def _checksums(db, names) -> dict:
    out = db.sql("CHECKSUM TABLE " + ", ".join(f"{n}.t" for n in names) + ";")
    return dict(line.split("\t") for line in out.splitlines())


SETTINGS = Settings("FULL", "FULL", False)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much])
@given(tables=st.lists(cases(SETTINGS, max_columns=6, max_statements=6, max_rows=4),
                       min_size=2, max_size=3),
       compress=st.booleans())
@example(tables=[  # a TEXT COMPRESSED value: the row images were once rebuilt from values
    Case(SETTINGS, "CREATE TABLE t (`c0` BIGINT NULL) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
         (Statement("insert", "INSERT INTO t (`c0`) VALUES (NULL), (1), (2)", ("c0",)),
          Statement("update", "UPDATE t SET `c0` = `c0` + 10", ("c0",)),
          Statement("delete", "DELETE FROM t WHERE `c0` = 11", ()))),
    Case(SETTINGS, "CREATE TABLE t (`c0` TEXT CHARACTER SET utf8mb4 COMPRESSED NOT NULL) "
                   "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
         (Statement("insert", "INSERT INTO t (`c0`) VALUES (REPEAT(_utf8mb4 X'27', 256))",
                    ("c0",)),
          Statement("insert", "INSERT INTO t (`c0`) VALUES ('a'), (REPEAT('b', 300))", ("c0",)),
          Statement("update", "UPDATE t SET `c0` = CONCAT(`c0`, REPEAT('c', 200))", ("c0",)))),
], compress=True)
@pytest.mark.server
def test_workload_undone_as_mariadb_binlog_undoes_it(server, tables, compress):
    from binlog_grammar.testing.selects import SESSION, run_script

    db = server
    db.count += 1
    names = [f"fb{db.count}_{i}" for i in range(len(tables))]
    setup = [SESSION]
    for name, case in zip(names, tables):
        setup.append(f"CREATE DATABASE {name} CHARACTER SET utf8mb4; USE {name}; {case.create};\n")
        half = len(case.statements) // 2
        setup += [s.sql.replace("\n", " ") + ";\n" for s in case.statements[:half]]
    run_script(db, "".join(setup))  # statements the server refuses (duplicate keys) are skipped
    before = _checksums(db, names)

    work = [SESSION]
    rest = [[f"USE {name};\n" + s.sql.replace("\n", " ") + ";\n"
             for s in case.statements[len(case.statements) // 2:]]
            for name, case in zip(names, tables)]
    # one transaction over every table, then the rest one statement at a time
    firsts = [r.pop(0) for r in rest if r]
    work += ["BEGIN;\n", *firsts, "COMMIT;\n"]
    if compress:
        work.append("SET GLOBAL log_bin_compress = ON;\n")
    work += [s for r in rest for s in r]
    files_before = set(db.binlogs())
    db.sql("FLUSH BINARY LOGS")
    try:
        run_script(db, "".join(work))
    finally:
        db.sql("SET GLOBAL log_bin_compress = OFF; FLUSH BINARY LOGS")
    files = [f for f in db.binlogs() if f not in files_before][:-1]
    after = _checksums(db, names)

    mine, other = ours(files), theirs(files)
    assert mine.returncode == 0, mine.stderr
    assert other.returncode == 0, other.stderr
    compare_blocks(mine.stdout, other.stdout)  # 1

    _pipe(db, mine.stdout)  # 2: ours undoes the workload
    assert _checksums(db, names) == before
    forward = subprocess.run(["mariadb-binlog", "--no-defaults", *map(str, files)],
                             capture_output=True, text=True)
    _pipe(db, forward.stdout)  # the workload again, as mariadb-binlog replays it
    assert _checksums(db, names) == after
    _pipe(db, other.stdout)  # and mariadb-binlog's flashback undoes it too
    assert _checksums(db, names) == before
    db.sql("SET sql_log_bin = 0; " + " ".join(f"DROP DATABASE {n};" for n in names))


@pytest.mark.server
def test_hostile_names_stay_in_comments(server, tmp_path):
    """Database and table names that would end a comment, run a client command or a statement
    reach the script only in comment lines (quoting.comment_line): piped into the client, the
    script undoes the rows, runs no shell command and drops nothing."""
    db = server
    canary = tmp_path / "fbcanary"  # the client runs in tmp_path: `touch fbcanary` makes it
    name = "t\n\\! touch fbcanary\n*/ DROP TABLE fbc.pwned; /*"
    ident = "`" + name.replace("`", "``") + "`"
    db.sql("CREATE DATABASE fbc; CREATE TABLE fbc.pwned (i INT); INSERT INTO fbc.pwned VALUES (1);"
           f"CREATE DATABASE `fb\n#*/;`;"
           f"CREATE TABLE `fb\n#*/;`.{ident} (k INT PRIMARY KEY, v TEXT);"
           f"INSERT INTO `fb\n#*/;`.{ident} VALUES (1, 'a'), (2, 'b');")
    before = db.sql(f"CHECKSUM TABLE `fb\n#*/;`.{ident};").split("\t")[-1]
    files_before = set(db.binlogs())
    db.sql("FLUSH BINARY LOGS")
    db.sql(f"UPDATE `fb\n#*/;`.{ident} SET v = CONCAT(v, '\\'*/'); DELETE FROM `fb\n#*/;`.{ident} "
           f"WHERE k = 1; INSERT INTO `fb\n#*/;`.{ident} VALUES (3, '\\n\\\\! touch fbcanary');")
    db.sql("FLUSH BINARY LOGS")
    files = [f for f in db.binlogs() if f not in files_before][:-1]
    mine = ours(files)
    assert mine.returncode == 0, mine.stderr
    assert "\\! touch" not in "".join(line for line in mine.stdout.splitlines(True)
                                      if not line.startswith("#"))
    _pipe(db, mine.stdout, cwd=tmp_path)
    assert not canary.exists()
    assert db.sql("SELECT i FROM fbc.pwned;").strip() == "1"
    assert db.sql(f"CHECKSUM TABLE `fb\n#*/;`.{ident};").split("\t")[-1] == before
    db.sql("SET sql_log_bin = 0; DROP DATABASE fbc; DROP DATABASE `fb\n#*/;`;")


def test_binlog_statement_is_base64_only():
    """quoting.binlog_statement: whatever the events' bytes (quotes, backslashes, NUL, line
    breaks, the delimiter, a client command), the statement's lines are base64 and decode back."""
    from binlog_grammar.output import quoting

    events = [b"'\\\x00\n\r/*!*/;\\! touch x" * 9, bytes(range(256)), b"x"]
    lines = quoting.binlog_statement(events, "/*!*/;")
    assert lines[0] == "BINLOG '\n" and lines[-1] == "'/*!*/;\n"
    body = lines[1:-1]
    assert all(re.fullmatch(r"[A-Za-z0-9+/=\n]*", part) for part in body)
    assert all(len(line) <= 76 for part in body for line in part.splitlines())
    assert [base64.b64decode(part) for part in body] == events
    with pytest.raises(ValueError):
        quoting.binlog_statement([])


@pytest.mark.server
def test_rewrite_db_undoes_the_renamed_database(server):
    """--rewrite-db with --flashback: the TABLE_MAPs in the BINLOG statements name the new
    database (as mariadb-binlog's), so the script undoes the workload replayed into that
    database and leaves the source alone."""
    db = server
    db.sql("CREATE DATABASE fbr_src; CREATE DATABASE fbr_dst;"
           "CREATE TABLE fbr_src.t (k INT PRIMARY KEY, v VARCHAR(20), d DECIMAL(10,2));"
           "INSERT INTO fbr_src.t VALUES (1, 'a', 1.5), (2, 'b', NULL), (3, 'c', 3);"
           "SET sql_log_bin = 0; CREATE TABLE fbr_dst.t LIKE fbr_src.t;"
           "INSERT INTO fbr_dst.t SELECT * FROM fbr_src.t;")
    before = _checksums(db, ["fbr_src", "fbr_dst"])
    files_before = set(db.binlogs())
    db.sql("FLUSH BINARY LOGS")
    db.sql("BEGIN; UPDATE fbr_src.t SET v = CONCAT(v, v), d = d * 2; DELETE FROM fbr_src.t "
           "WHERE k = 2; INSERT INTO fbr_src.t VALUES (4, 'd', 4), (5, 'e', NULL); COMMIT;"
           "DELETE FROM fbr_src.t WHERE k = 1;")
    db.sql("FLUSH BINARY LOGS")
    files = [f for f in db.binlogs() if f not in files_before][:-1]
    forward = subprocess.run(["mariadb-binlog", "--no-defaults", "--rewrite-db=fbr_src->fbr_dst",
                              *map(str, files)], capture_output=True, text=True)
    _pipe(db, forward.stdout)  # the workload replayed into fbr_dst
    after = _checksums(db, ["fbr_src", "fbr_dst"])
    assert after["fbr_dst.t"] == after["fbr_src.t"] != before["fbr_src.t"]
    mine = ours(files, "--rewrite-db=fbr_src->fbr_dst")
    assert mine.returncode == 0, mine.stderr
    other = subprocess.run(["mariadb-binlog", "--no-defaults", "--flashback",
                            "--rewrite-db=fbr_src->fbr_dst", *map(str, files)],
                           capture_output=True, text=True)
    assert compare_blocks(mine.stdout, other.stdout) == 4
    _pipe(db, mine.stdout)
    now = _checksums(db, ["fbr_src", "fbr_dst"])
    assert now == {"fbr_src.t": after["fbr_src.t"], "fbr_dst.t": before["fbr_dst.t"]}
    db.sql("SET sql_log_bin = 0; DROP DATABASE fbr_src; DROP DATABASE fbr_dst;")


@pytest.mark.server
def test_database_filter_undoes_one_database(server):
    """--database A with --flashback: the script undoes A's rows of transactions that also
    changed B, and B keeps the workload's state; its statements are mariadb-binlog --database's."""
    db = server
    db.sql("CREATE DATABASE fbd_a; CREATE DATABASE fbd_b;"
           "CREATE TABLE fbd_a.t (k INT PRIMARY KEY, v BLOB); CREATE TABLE fbd_b.t LIKE fbd_a.t;"
           "INSERT INTO fbd_a.t VALUES (1, 'x'), (2, 'y'); INSERT INTO fbd_b.t VALUES (1, 'p');")
    before = _checksums(db, ["fbd_a", "fbd_b"])
    files_before = set(db.binlogs())
    db.sql("FLUSH BINARY LOGS")
    db.sql("BEGIN; UPDATE fbd_a.t SET v = 'z'; INSERT INTO fbd_b.t VALUES (2, 'q'); DELETE FROM "
           "fbd_a.t WHERE k = 1; COMMIT; UPDATE fbd_b.t SET v = 'r';"
           "INSERT INTO fbd_a.t VALUES (3, '');")
    db.sql("FLUSH BINARY LOGS")
    files = [f for f in db.binlogs() if f not in files_before][:-1]
    after = _checksums(db, ["fbd_a", "fbd_b"])
    mine = ours(files, "--database", "fbd_a")
    assert mine.returncode == 0, mine.stderr
    other = subprocess.run(["mariadb-binlog", "--no-defaults", "--flashback", "--database=fbd_a",
                            *map(str, files)], capture_output=True, text=True)
    assert compare_blocks(mine.stdout, other.stdout) == 3
    _pipe(db, mine.stdout)
    assert _checksums(db, ["fbd_a", "fbd_b"]) == {"fbd_a.t": before["fbd_a.t"],
                                                  "fbd_b.t": after["fbd_b.t"]}
    db.sql("SET sql_log_bin = 0; DROP DATABASE fbd_a; DROP DATABASE fbd_b;")


def test_short_option_and_what_it_does_not_take():
    """-B is --flashback (mariadb-binlog's short form); with --hexdump or --format jsonl it is a
    usage error (exit 2), not another output."""
    path = SAMPLES[0]
    long_form, short = ours([path]), subprocess.run(
        [sys.executable, "-m", "binlog_grammar", "dump", "-B", str(path)], capture_output=True,
        text=True, cwd=ROOT)
    assert short.returncode == 0 and short.stdout == long_form.stdout
    assert "BINLOG '" in short.stdout
    for extra in (["--hexdump"], ["--format", "jsonl"]):
        r = ours([path], *extra)
        assert r.returncode == 2 and "--flashback" in r.stderr and not r.stdout


@pytest.mark.server
def test_statements_of_several_events_and_tables(server):
    """A statement logged as several rows events (an INSERT of 300 wide rows: rows events of at
    most 8 KiB) and statements over two tables (multi-table UPDATE and DELETE): each is one
    BINLOG statement with its events last first and STMT_END_F on the last written, as
    mariadb-binlog writes them, and the script undoes them."""
    db = server
    db.sql("CREATE DATABASE fbm; CREATE TABLE fbm.a (k INT PRIMARY KEY, v VARCHAR(200));"
           "CREATE TABLE fbm.b (k INT PRIMARY KEY, w INT);"
           "INSERT INTO fbm.a VALUES (1, 'one'), (2, 'two');"
           "INSERT INTO fbm.b VALUES (1, 10), (2, 20);")
    before = dict(line.split("\t") for line in db.sql("CHECKSUM TABLE fbm.a, fbm.b;").splitlines())
    files_before = set(db.binlogs())
    db.sql("FLUSH BINARY LOGS")
    db.sql("USE fbm; INSERT INTO fbm.a SELECT seq, REPEAT(CHAR(65 + seq % 26), 150) "
           "FROM seq_10_to_309;"
           "UPDATE fbm.a JOIN fbm.b USING (k) SET fbm.a.v = 'joined', fbm.b.w = fbm.b.w + 1;"
           "DELETE fbm.a, fbm.b FROM fbm.a JOIN fbm.b USING (k) WHERE fbm.a.k = 2;"
           "UPDATE fbm.a SET v = REPEAT('z', 190) WHERE k >= 10;")
    db.sql("FLUSH BINARY LOGS")
    files = [f for f in db.binlogs() if f not in files_before][:-1]
    mine, other = ours(files), theirs(files)
    assert mine.returncode == 0, mine.stderr
    compare_blocks(mine.stdout, other.stdout)
    blocks = binlog_blocks(mine.stdout)
    assert max(sum(e[4] in ROWS_CODES for e in blk) for blk in blocks) >= 4  # a split statement
    assert any(sum(e[4] == TABLE_MAP_CODE for e in blk) == 2 for blk in blocks)  # two tables
    for blk in blocks:
        rows = [e for e in blk if e[4] in ROWS_CODES]
        if rows:  # rows_flags after the 19-byte header and the 6-byte table id
            assert [struct.unpack_from("<H", e, 25)[0] & 1 for e in rows] == \
                [0] * (len(rows) - 1) + [1]
    _pipe(db, mine.stdout)
    assert dict(line.split("\t") for line in db.sql("CHECKSUM TABLE fbm.a, fbm.b;").splitlines()) \
        == before
    db.sql("SET sql_log_bin = 0; DROP DATABASE fbm;")
