"""Hostile names and values through `binlog-grammar repair`: what tests/repair/test_repair_hostile.py
and `tools/repair_soak.py --hostile` run on a `replicas.ReplicaPair`.

A `Case` is one table whose database, table and column names and whose key and row values are
drawn from an alphabet of dangerous pieces (`PIECES`: line breaks, CR LF, NUL in values,
quotes and backquotes, backslashes, `*/`, `/*!`, `--`, `#`, `;`, the client commands `\\!` and
`\\C`, UTF-8 whose last byte is a gbk/big5/sjis lead byte followed by a quote or a backslash,
characters whose gbk or sjis encoding has 0x5C as its trail byte, and bytes that are not UTF-8 in
binary columns). The key is a utf8mb4 string (no-pad binary collation), with a unique VARBINARY
column, a utf8mb4, a gbk and an sjis TEXT column and a BLOB.

`check_case` makes the replica stop on error 1032 with conflicts that need every kind of fix (a
missing row inserted from its before-image, a row deleted for the primary key, another for the
unique key), then:

- the dry run's whole output and the undo file written by `--apply --no-start` are piped into the
  replica through the real `mariadb` client under each client character set of `CLIENT_RUNS`
  (some with the replica's global sql_mode set to NO_BACKSLASH_ESCAPES,ANSI_QUOTES): the client
  exits 0, the canary table `canary.pwned` survives, no file appears in the client's working
  folder (the pieces hold `\\! touch pw`), the undo file gives back the replica's rows exactly and
  the plan makes them exactly what `--apply` made them;
- replication is then started and must catch up, with CHECKSUM TABLE equal on both servers.

Everything the test itself sends to a server goes through the project's protocol client
(replication.Connection), never through a client that splits lines, so the names reach the
servers as drawn.
"""
from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass

from hypothesis import strategies as st

from .drift import repair_cli
from .replicas import ReplicaPair

# pieces of names and values; a drawn text is a few of them joined
PIECES = (
    "\n", "\r\n", "\r", "'", '"', "`", "``", "\\", "\\'", "*/", "/*", "/*!", "--", "-- ", "#", ";",
    "\\! touch pw\n", "\ndrop table canary.pwned;\n#", "'); drop table canary.pwned; -- ",
    "*/ drop table canary.pwned; /*", "\\C latin1\n", "€'", "€\\", "é\\'", "\x1a", "\t", "a",
    "Z", "é", "\u2028", "\x85", "ソ", "表", "乗", "\\G", "delimiter //\n", ".", "/",
)
VALUE_PIECES = PIECES + ("\0", "😀", "\0'", "\\0")
# characters whose encoding in the column's charset has 0x5C (a backslash) as its trail byte
SJIS_EXTRA = ("ソ", "表", "能", "十", "予")
GBK_EXTRA = ("乗", "俓", "僜")
BYTE_PIECES = (b"\x00", b"'", b"\\", b"\xff", b"\xfe\xff", b"\xc3", b"\x81\\", b"\x83\\'",
               b"\xe2\x82\xac'", b"\n", b"\r\n", b"\x1a", b"*/", b"#", b";", b"a", b"\x80")

# (client --default-character-set, the replica's global sql_mode while the client runs)
HOSTILE_MODE = "NO_BACKSLASH_ESCAPES,ANSI_QUOTES"
CLIENT_RUNS = (("utf8mb4", ""), ("gbk", ""), ("sjis", ""), ("big5", ""), ("cp932", ""),
               ("latin1", HOSTILE_MODE), ("gbk", HOSTILE_MODE))
CANARY = ("SET sql_log_bin=0; CREATE DATABASE IF NOT EXISTS canary; "
          "CREATE TABLE IF NOT EXISTS canary.pwned (x INT) ENGINE=InnoDB")


GBK_VALUE_PIECES = tuple(p for p in VALUE_PIECES if p.isascii()) + GBK_EXTRA
SJIS_VALUE_PIECES = tuple(p for p in VALUE_PIECES if p.isascii()) + SJIS_EXTRA
IDENT_PIECES = PIECES  # no NUL (the server refuses it in a name), nothing outside the BMP


def q(name: str) -> str:
    """A backquoted name, for statements this test sends over the protocol (no client)."""
    return "`" + name.replace("`", "``") + "`"


def hexed(data: bytes, charset: str = "") -> str:
    return (f"_{charset} " if charset else "") + (f"X'{data.hex()}'" if data else "''")


def _texts(pieces, max_size=5):
    return st.lists(st.sampled_from(pieces), max_size=max_size).map("".join)


def _name(prefix: str, limit: int = 60):
    def fix(text):
        text = (prefix + text)[:limit] or "t"
        return text + "_" if text[-1:].isspace() else text  # the server refuses trailing spaces
    return _texts(IDENT_PIECES, 6).map(fix)


@dataclass(frozen=True)
class Case:
    db: str
    table: str
    cols: tuple  # names of: key, unique, utf8mb4 text, gbk text, sjis text, blob
    keys: tuple  # the key texts of rows A (on the primary, missing on the replica), B (the
    #              replica's own row on the key the primary inserts), C (the replica's own row on
    #              the unique value the primary's B takes), D (a row left alone)
    uniques: tuple  # bytes: A, B on the replica, C (= B on the primary), D
    texts: tuple  # per row A..D: (utf8mb4 text, gbk text, sjis text, blob bytes)
    new_text: str  # what the primary's UPDATE writes into A's utf8mb4 column


@st.composite
def cases(draw):
    db = draw(_name("rp_"))
    table = draw(_name(""))
    cols = tuple(draw(_name(p)) for p in "kuvgsb")
    bodies = draw(st.lists(_texts(VALUE_PIECES, 4), min_size=4, max_size=4))
    keys = tuple(f"{'ABCD'[i]}{b}"[:60] for i, b in enumerate(bodies))
    uniques = tuple(draw(st.lists(st.lists(st.sampled_from(BYTE_PIECES), max_size=4).map(b"".join),
                                  min_size=4, max_size=4, unique=True)))
    texts = tuple((draw(_texts(VALUE_PIECES)), draw(_texts(GBK_VALUE_PIECES)),
                   draw(_texts(SJIS_VALUE_PIECES)),
                   draw(st.lists(st.sampled_from(BYTE_PIECES), max_size=5).map(b"".join)))
                  for _ in range(4))
    new = draw(_texts(VALUE_PIECES))
    # an UPDATE that changes nothing is not logged: replication would stop on B's 1062 instead
    return Case(db, table, cols, keys, uniques, texts, new if new != texts[0][0] else new + "N")


# The issue's example: the table name that ran SQL through the plan and the undo file.
ISSUE_CASE = Case(
    "rp_issue25", "r\ndrop table canary.pwned;\n#",
    ("k\\! touch pw\n_", "u`'\"", "v*/ drop table canary.pwned; /*", "g\r\n#", "s--", "b;"),
    ("A€'\\! touch pw\n", "B'); drop table canary.pwned; -- ", "C\0\r\n", "D"),
    (b"\xff'", b"\x81\\", b"\\\x00", b""),
    (("x\ndrop table canary.pwned;\n#", "乗'", "ソ\\'", b"\xfe\xff"),
     ("€'\\! touch pw\n", "a", "表", b"'"), ("\\C latin1\n", "", "", b""), ("d", "d", "d", b"d")),
    "€\\'); drop table canary.pwned; #")


# A dot in the database name: "db.table" no longer tells where the database name ends.
DOTTED_CASE = Case(
    "rp_a.b", "t.c", ("k", "u", "v", "g", "s", "b"), ("A", "B", "C", "D"),
    (b"a", b"b", b"c", b"d"), tuple(("x", "y", "z", b"") for _ in range(4)), "new")


# ---------------------------------------------------------------------------------------------
# running one

def _create(c: Case) -> str:
    k, u, v, g, s, b = (q(n) for n in c.cols)
    return (f"CREATE TABLE {q(c.db)}.{q(c.table)} ({k} VARCHAR(64) CHARACTER SET utf8mb4 COLLATE "
            f"utf8mb4_nopad_bin NOT NULL, {u} VARBINARY(64), {v} TEXT CHARACTER SET utf8mb4, {g} "
            f"TEXT CHARACTER SET gbk, {s} TEXT CHARACTER SET sjis, {b} BLOB, PRIMARY KEY ({k}), "
            f"UNIQUE KEY ({u})) ENGINE=InnoDB")


def _row(c: Case, i: int, unique: bytes) -> str:
    text, gbk, sjis, blob = c.texts[i]
    return (f"({hexed(c.keys[i].encode(), 'utf8mb4')}, {hexed(unique)}, "
            f"{hexed(text.encode(), 'utf8mb4')}, {hexed(gbk.encode('gbk'), 'gbk')}, "
            f"{hexed(sjis.encode('shift_jis'), 'sjis')}, {hexed(blob)})")


def _insert(c: Case, rows) -> str:
    return f"INSERT INTO {q(c.db)}.{q(c.table)} ({', '.join(q(n) for n in c.cols)}) VALUES " + \
        ", ".join(rows)


def rows_of(conn, c: Case) -> list:
    """Every row of the table as hex, in key order: what the undo file and the plan must make."""
    _, rows = conn.query("SELECT " + ", ".join(f"HEX({q(n)})" for n in c.cols) +
                         f" FROM {q(c.db)}.{q(c.table)} ORDER BY HEX({q(c.cols[0])})")
    return [tuple(None if v is None else bytes(v).decode() for v in r) for r in rows]


def checksum(conn, c: Case) -> str:
    _, rows = conn.query(f"CHECKSUM TABLE {q(c.db)}.{q(c.table)} EXTENDED")
    return bytes(rows[0][1]).decode()


def canary_alive(conn) -> bool:
    _, rows = conn.query("SELECT COUNT(*) FROM information_schema.TABLES WHERE "
                         "TABLE_SCHEMA='canary' AND TABLE_NAME='pwned'")
    return rows[0][0] == b"1"


def pipe(pair: ReplicaPair, script: bytes, charset: str, workdir: str):
    """The script through the real `mariadb` client into the replica, as a DBA runs it."""
    r = subprocess.run(["mariadb", "--no-defaults", "-uroot", f"--socket={pair.replica.socket}",
                        f"--default-character-set={charset}"], input=script, cwd=workdir,
                       capture_output=True, timeout=120)
    return r.returncode, r.stderr.decode("utf-8", "replace")


def _drop(pair: ReplicaPair, c: Case):
    """Drop the case's database on both servers, and the replica's connection with an error that
    names it (ReplicaPair.configure reads SHOW ALL SLAVES STATUS as lines, which a name holding a
    line break splits)."""
    for which in ("replica", "primary"):
        conn = pair.connect(which)
        try:
            if which == "replica":
                conn.query("STOP ALL SLAVES")
                conn.query("RESET SLAVE ALL")
            conn.query("SET sql_log_bin=0")
            conn.query(f"DROP DATABASE IF EXISTS {q(c.db)}")
        finally:
            conn.close()


def _run(conn, *statements):
    for s in statements:
        conn.query(s)


def check_case(pair: ReplicaPair, c: Case, workdir: str) -> dict:
    """Run the case (see the module doc); the figures of the run, or AssertionError."""
    pair.configure(gtid=True)
    pair.replica.sql(CANARY)
    primary, replica = pair.connect("primary"), pair.connect("replica")
    runs = 0
    try:
        _run(primary, "SET NAMES utf8mb4", f"CREATE DATABASE {q(c.db)}", _create(c),
             _insert(c, [_row(c, 0, c.uniques[0]), _row(c, 3, c.uniques[3])]))
        pair.wait_caught_up()
        # drift: A missing, B on the key the primary inserts, C on the unique value it takes
        _run(replica, "SET NAMES utf8mb4", "SET sql_log_bin=0",
             f"DELETE FROM {q(c.db)}.{q(c.table)} WHERE {q(c.cols[0])}="
             f"{hexed(c.keys[0].encode(), 'utf8mb4')}",
             _insert(c, [_row(c, 1, c.uniques[1]), _row(c, 2, c.uniques[2])]))
        _run(primary, "BEGIN",
             f"UPDATE {q(c.db)}.{q(c.table)} SET {q(c.cols[2])}={hexed(c.new_text.encode(), 'utf8mb4')}"
             f" WHERE {q(c.cols[0])}={hexed(c.keys[0].encode(), 'utf8mb4')}",
             _insert(c, [_row(c, 1, c.uniques[2])]), "COMMIT")
        st = pair.wait_stopped()
        assert st.get("Last_SQL_Errno") in ("1032", "1062"), st.get("Last_SQL_Error")
        before = rows_of(replica, c)

        code, plan, err = repair_cli(pair)
        assert code == 0, f"dry run: exit {code}: {err}\n{plan}"
        assert rows_of(replica, c) == before, "the dry run changed the replica"
        undo_path = os.path.join(workdir, "undo.sql")
        code, out, err = repair_cli(pair, "--apply", "--no-start", "--undo", undo_path)
        assert code == 0, f"--apply --no-start: exit {code}: {err}\n{out}"
        applied = rows_of(replica, c)
        assert applied != before
        with open(undo_path, "rb") as fh:
            undo = fh.read()
        scripts = (("the undo file", undo, before),
                   ("the dry run's plan", plan.encode("utf-8", "surrogateescape"), applied))
        for charset, mode in CLIENT_RUNS:
            if mode:
                replica.query(f"SET GLOBAL sql_mode='{mode}'")
            try:
                for what, script, want in scripts:
                    folder = tempfile.mkdtemp(prefix="repair-hostile-client-", dir=workdir)
                    rc, stderr = pipe(pair, script, charset, folder)
                    runs += 1
                    where = f"{what} under --default-character-set={charset}" + \
                        (f", sql_mode {mode}" if mode else "")
                    assert canary_alive(replica), f"{where} dropped canary.pwned"
                    assert not os.listdir(folder), f"{where} ran a shell command: " \
                        f"{os.listdir(folder)}"
                    assert rc == 0, f"{where}: the client exited {rc}: {stderr}"
                    assert rows_of(replica, c) == want, f"{where}: the rows differ"
            finally:
                if mode:
                    replica.query("SET GLOBAL sql_mode=DEFAULT")
        # the plan ran last: replication applies the failing transaction on top of it
        replica.query("START SLAVE")
        pair.wait_caught_up()
        assert checksum(primary, c) == checksum(replica, c), "checksums differ after the plan"
        assert canary_alive(replica)
    finally:
        primary.close()
        replica.close()
        _drop(pair, c)
    return {"client_runs": runs}


__all__ = ["Case", "cases", "check_case", "ISSUE_CASE", "DOTTED_CASE", "PIECES", "CLIENT_RUNS", "pipe"]
