"""Hostile content for the replay-safety suite (issue 25): names, values, statements and comments
drawn from the bytes and sequences that end a literal, a comment or a line, or that the `mariadb`
client reads as its own commands; and the workload that puts them into a real MariaDB's binlog.

`cases()` draws a `Case`: a database, a table with one column of each kind below and a second table
made by a hostile DDL (a DEFAULT string literal, a table and a column COMMENT), ENUM and SET member
names, rows inserted, updated and deleted, and two statements carrying hostile comments
(`ANALYZE TABLE t /* .. */` and `ANALYZE TABLE t # ..`). `Case.schema()` and `Case.dml()` are the
statements that make it, as bytes: each runs from its hex on the source (`prepared`), so exactly
the drawn bytes reach the server whatever the client would make of them, and values are hex
literals in the column's own character set (`_gbk X'..'`, `X'..'`), as a parameterised INSERT
would store them. binlog_grammar.testing.hostile_harness runs them and checks the outputs.

The alphabet (`PIECES`) holds the token `@CANARY@`, which the harness replaces by its canary file
path: `\\! touch @CANARY@` run by a client creates the file.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import List, Optional, Tuple

from hypothesis import strategies as st

CANARY_TOKEN = b"@CANARY@"
CANARY_LEN = 15  # the harness's canary file path is this long (names must stay under 64)
CANARY_DB, CANARY_TABLE = "canary", "pwned"
DROP_CANARY = b"DROP TABLE canary.pwned;"

# -- the alphabet ---------------------------------------------------------------------------------

SYNTAX = [b"'", b'"', b"`", b"\\", b"\0", b"\x1a", b"\r", b"\n", b"\r\n", b"*/", b"/*", b"/*!",
          b"--", b"-- ", b"#", b";", b"/*!*/;", b"\\!", b"\\C", b"\\G", b"\\q", b"DELIMITER",
          b"use", b" ", b"\t", b"\\'", b"''", b"\\\\"]
ATTACKS = [b"\\! touch @CANARY@\n", b"\nsystem touch @CANARY@\n", DROP_CANARY,
           b"'); " + DROP_CANARY + b" #", b"), (5, 0); " + DROP_CANARY + b" #",
           b"\n" + DROP_CANARY + b"\n", b"*/ " + DROP_CANARY + b" /*", b"\\C gbk\n",
           b"DELIMITER ;;\n", b"/*!*/;\n" + DROP_CANARY + b"\n", b"\nuse canary\n"]
# UTF-8 whose last byte, followed by a backslash or quote, is one gbk/big5 character (AC 5C), and
# characters whose gbk/big5/sjis/cp932 bytes end in 0x5C (ソ 83 5C and 表 95 5C in sjis, 乗 81 5C
# in gbk, 功 A5 5C in big5)
MULTIBYTE = [t.encode() for t in ("€", "€'", "€\\", "ソ", "表", "十", "能", "予", "乗", "俓",
                                  "功", "么", "é", "Ж")]
LETTERS = [b"a", b"Z", b"x", b"0", b"NULL"]
ASTRAL = ["😀".encode()]  # not in identifiers (MariaDB refuses characters beyond the BMP there)
INVALID_UTF8 = [b"\xff", b"\xc3", b"\xe2\x82", b"\x80", b"\xed\xa0\x80", b"\xc0\xaf", b"\xac\\",
                b"\x83\\", b"\x95'"]
PIECES = SYNTAX + ATTACKS + MULTIBYTE + LETTERS + ASTRAL + INVALID_UTF8
TEXT_PIECES = [p for p in PIECES if p not in INVALID_UTF8]
NAME_PIECES = [p for p in TEXT_PIECES if p not in ASTRAL and b"\0" not in p]
# the charsets of the columns, with Python's codec for each (values are drawn as text, stored as
# the codec's bytes)
COLUMN_CODECS = {"gbk": "gbk", "big5": "big5", "sjis": "shift_jis", "cp932": "cp932"}


def hostile_bytes(max_pieces: int = 6, pieces=PIECES):
    return st.lists(st.sampled_from(pieces), max_size=max_pieces).map(b"".join)


def hostile_text(max_pieces: int = 6, pieces=TEXT_PIECES):
    return hostile_bytes(max_pieces, pieces).map(bytes.decode)


def _name_ok(name: str, limit: int) -> bool:
    """What MariaDB refuses in a name, checked before the server is asked: NUL, characters beyond
    the BMP, trailing white space (a space, tab, CR or LF), more than `limit` characters (64 for columns; table and database
    names become file names, @xxxx per special character, under 255 bytes)."""
    return (0 < len(name.replace(CANARY_TOKEN.decode(), "x" * CANARY_LEN)) <= limit
            and not name[-1].isspace() and "\0" not in name and all(ord(c) < 0x10000 for c in name))


def names(max_pieces: int = 4, limit: int = 40):
    return hostile_text(max_pieces, NAME_PIECES).filter(lambda n: _name_ok(n, limit))


def charset_text(codec: str, max_pieces: int = 6):
    """Text that `codec` can encode (its multi-byte characters ending in 0x5C among it)."""
    ok = []
    for p in TEXT_PIECES:
        try:
            p.decode().encode(codec)
        except UnicodeEncodeError:
            continue
        ok.append(p)
    return hostile_text(max_pieces, ok)


# -- a case ---------------------------------------------------------------------------------------

# the columns of the hostile table: (kind, SQL type); a kind's values are drawn by _values
KINDS = [("u4", "VARCHAR(200) CHARACTER SET utf8mb4"), ("tx", "TEXT CHARACTER SET utf8mb4"),
         ("l1", "VARCHAR(200) CHARACTER SET latin1"), ("gbk", "VARCHAR(200) CHARACTER SET gbk"),
         ("big5", "VARCHAR(200) CHARACTER SET big5"), ("sjis", "VARCHAR(200) CHARACTER SET sjis"),
         ("cp932", "VARCHAR(200) CHARACTER SET cp932"), ("vb", "VARBINARY(200)"), ("bl", "BLOB"),
         ("en", "ENUM"), ("st", "SET")]


def quote_ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def sql_string(text: str) -> str:
    """A string literal for the source's own statements (backslash escapes, sql_mode '')."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\0", "\\0") + "'"


def value_literal(kind: str, value) -> str:
    """The literal that stores `value` (bytes in the column's charset, or a member number)."""
    if value is None:
        return "NULL"
    if kind in ("en", "st"):
        return str(value)
    if not value:
        return "''"
    intro = {"u4": "_utf8mb4 ", "tx": "_utf8mb4 ", "l1": "_latin1 ", "vb": "", "bl": ""}
    return f"{intro.get(kind, '_' + kind + ' ')}X'{value.hex()}'"


@dataclass
class Case:
    """One drawn workload (see the module's docstring); names are str, values bytes."""

    db: str
    table: str
    table2: str
    columns: List[str]  # one per KINDS entry, each starting with its own letter (unique)
    enum: List[str]
    sets: List[str]
    rows: List[list] = field(default_factory=list)  # values per KINDS entry, ids 1..n
    updates: List[Tuple[int, int, object]] = field(default_factory=list)  # (row, kind, value)
    deletes: List[int] = field(default_factory=list)  # row numbers
    default: str = ""  # a DEFAULT string literal and a COMMENT in table2's DDL
    comment: bytes = b""  # in ANALYZE TABLE t /* .. */ (without */) and ANALYZE TABLE t # ..

    def resolved(self, canary_file: str) -> "Case":
        """The case with CANARY_TOKEN replaced by the harness's canary file path everywhere."""
        path = canary_file.encode()

        def fix(v):
            if isinstance(v, bytes):
                return v.replace(CANARY_TOKEN, path)
            if isinstance(v, str):
                return v.replace(CANARY_TOKEN.decode(), canary_file)
            if isinstance(v, (list, tuple)):
                return type(v)(fix(x) for x in v)
            return v
        return replace(self, **{f.name: fix(getattr(self, f.name)) for f in fields(self)})

    def qualified(self, table: str) -> str:
        return f"{quote_ident(self.db)}.{quote_ident(table)}"

    def schema(self) -> List[bytes]:
        """The statements that make the schema (before any row)."""
        cols = []
        for (kind, sql), name in zip(KINDS, self.columns):
            if kind == "en":
                sql = "ENUM(" + ",".join(map(sql_string, self.enum)) + ") CHARACTER SET utf8mb4"
            elif kind == "st":
                sql = "SET(" + ",".join(map(sql_string, self.sets)) + ") CHARACTER SET utf8mb4"
            cols.append(f"{quote_ident(name)} {sql}")
        lit = sql_string(self.default)
        return [f"CREATE DATABASE {quote_ident(self.db)}".encode(),
                f"CREATE TABLE {self.qualified(self.table)} (id INT PRIMARY KEY, {', '.join(cols)})"
                f" ENGINE=InnoDB DEFAULT CHARSET=utf8mb4".encode(),
                f"CREATE TABLE {self.qualified(self.table2)} (id INT PRIMARY KEY, "
                f"{quote_ident(self.columns[0])} VARCHAR(200) CHARACTER SET utf8mb4 DEFAULT {lit}"
                f" COMMENT {lit}) ENGINE=InnoDB COMMENT={lit}".encode()]

    def insert(self, ids) -> bytes:
        names = ", ".join(["id"] + [quote_ident(c) for c in self.columns])
        rows = ", ".join("(" + ", ".join([str(i)] + [value_literal(k, v) for (k, _), v in
                                                      zip(KINDS, self.rows[i - 1])]) + ")"
                         for i in ids)
        return f"INSERT INTO {self.qualified(self.table)} ({names}) VALUES {rows}".encode()

    def dml(self) -> List[Optional[bytes]]:
        """The workload after the schema: statements, with None for BEGIN and COMMIT around
        the middle transaction (the harness writes those as plain lines)."""
        n = len(self.rows)
        out = [self.insert(range(1, n + 1))] if n else []
        clean = self.comment.replace(b"*/", b"* /")
        t = self.qualified(self.table).encode()
        out.append(b"ANALYZE TABLE " + t + b" /* " + clean + b" */")
        out.append(b"ANALYZE TABLE " + t + b" # " + clean.replace(b"\n", b" ").replace(b"\r", b" "))
        out.append(None)
        for row, kind, value in self.updates:
            if row <= n:
                out.append(f"UPDATE {self.qualified(self.table)} SET "
                           f"{quote_ident(self.columns[kind])} = "
                           f"{value_literal(KINDS[kind][0], value)} WHERE id = {row}".encode())
        for row in self.deletes:
            out.append(f"DELETE FROM {self.qualified(self.table)} WHERE id = {row}".encode())
        out.append(None)
        out.append(f"INSERT INTO {self.qualified(self.table2)} (id) VALUES (1)".encode())
        return out


def _members(draw, count: int, setlike: bool) -> List[str]:
    out = []
    for i in range(count):
        m = draw(hostile_text(3, NAME_PIECES))
        if setlike:
            m = m.replace(",", "")
        out.append(chr(ord("a") + i) + m)
    return out


@st.composite
def _values(draw, kind: str, nenum: int, nset: int):
    if draw(st.integers(0, 9)) == 0:
        return None
    if kind in ("u4", "tx"):
        return draw(hostile_text()).encode()
    if kind == "l1":  # every byte is a latin1 character in MariaDB
        return draw(hostile_bytes())
    if kind in COLUMN_CODECS:
        return draw(charset_text(COLUMN_CODECS[kind])).encode(COLUMN_CODECS[kind])
    if kind in ("vb", "bl"):
        return draw(hostile_bytes())
    if kind == "en":
        return draw(st.integers(1, nenum))
    return draw(st.integers(0, (1 << nset) - 1))


@st.composite
def cases(draw, max_rows: int = 3):
    columns = [chr(ord("a") + i) + draw(hostile_text(3, NAME_PIECES).filter(
        lambda n: _name_ok("a" + n, 64))) for i in range(len(KINDS))]
    enum = _members(draw, draw(st.integers(1, 3)), False)
    sets = _members(draw, draw(st.integers(1, 3)), True)
    table = draw(names())
    table2 = "2" + draw(names(3, 30))
    nrows = draw(st.integers(1, max_rows))
    rows = [[draw(_values(k, len(enum), len(sets))) for k, _ in KINDS] for _ in range(nrows)]
    updates = []
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.integers(0, len(KINDS) - 1))
        updates.append((draw(st.integers(1, nrows)), kind,
                        draw(_values(KINDS[kind][0], len(enum), len(sets)))))
    deletes = draw(st.lists(st.integers(1, nrows), max_size=1, unique=True))
    return Case(db=draw(names(3, 30)), table=table, table2=table2, columns=columns, enum=enum,
                sets=sets, rows=rows, updates=updates, deletes=deletes,
                default=draw(hostile_text()), comment=draw(hostile_bytes()))
