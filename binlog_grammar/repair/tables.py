"""What the repair knows of a table, and how one column value is written and compared in SQL.

`TableInfo` comes from the replica's information_schema (columns in order, their types and
charsets, generated columns, the primary key, every unique key with its prefix lengths, the
engine and whether it is transactional, triggers). The replica's own definition is what decides
which of its rows conflict with a new row, so keys are read there, not from the binlog (which,
with the default binlog_row_metadata, names neither columns nor keys). `TableInfo.schema()` gives
the mapping rows.RowDecoder takes, so the binlog's row images decode with the replica's names,
signedness and charsets.

A value is a `Val`: its SQL literal, the exact bytes it is stored as when it is a string, a
binary string or a geometry (so that a match on every column of a table without a primary key is
byte for byte, as the server's own record comparison is), and a short text for comments. Values
come either from a decoded row image (`binlog_val`, through sqlgen.sql_literal) or from the
server (`server_val`, from the expression `read_expr` selects for the column type: HEX() of
strings, the exact double of a FLOAT, the integer of a BIT, text for the rest), so a row read from
the replica can be written back exactly (the undo file).

Names and values come from the binlog and the replica, that is from every application user:
identifiers, literals and comment text are written only through binlog_grammar.output.quoting.
`show` and the `row_text`/`key_text` texts are raw text; whoever prints them in a script passes
them through `quoting.comment`.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from typing import Optional

from ..runtime.values import Geometry, codec_of, errors_of
from ..output.quoting import charset_literal, hex_literal, ident, string
from ..output.sql import sql_literal

STRING_TYPES = {"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set",
                "json"}
BINARY_TYPES = {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"}
GEOMETRY_TYPES = {"geometry", "point", "linestring", "polygon", "multipoint", "multilinestring",
                  "multipolygon", "geometrycollection", "geomcollection"}
NUMBER_TYPES = {"tinyint", "smallint", "mediumint", "int", "integer", "bigint", "decimal",
                "numeric", "float", "double", "real", "year", "bit"}


@dataclass
class ColumnInfo:
    name: str
    data_type: str  # information_schema DATA_TYPE, lower case
    column_type: str
    nullable: bool
    charset: Optional[str]
    generated: bool

    @property
    def unsigned(self) -> bool:
        return "unsigned" in self.column_type.lower()

    def members(self) -> Optional[list]:
        """ENUM / SET members from the column type."""
        m = re.match(r"^(?:enum|set)\((.*)\)$", self.column_type, re.S | re.I)
        if not m:
            return None
        return [s.replace("''", "'").replace("\\\\", "\\")
                for s in re.findall(r"'((?:[^']|'')*)'", m[1])]


@dataclass
class TableInfo:
    db: str
    table: str
    columns: list
    primary_key: list = field(default_factory=list)  # column names
    unique_keys: dict = field(default_factory=dict)  # index name -> [(column, prefix length)]
    pk_prefix: dict = field(default_factory=dict)  # column -> prefix length (a PK on a prefix)
    engine: str = ""
    transactional: bool = True
    triggers: int = 0

    @property
    def name(self) -> str:
        return f"{self.db}.{self.table}"

    @property
    def key(self) -> tuple:
        """(db, table): unambiguous where "db.table" is not (names may hold dots)."""
        return (self.db, self.table)

    @property
    def sql_name(self) -> str:
        return f"{ident(self.db)}.{ident(self.table)}"

    @property
    def names(self) -> list:
        """Every identifier a statement on this table may name (quoting.statement_lines checks
        them: a name a client line cannot carry makes the statement run from its hex)."""
        return [self.db, self.table, *(c.name for c in self.columns)]

    @property
    def written(self) -> list:
        """Columns an INSERT names (generated columns are computed by the server)."""
        return [c.name for c in self.columns if not c.generated]

    def column(self, name) -> Optional[ColumnInfo]:
        return next((c for c in self.columns if c.name == name), None)

    def keys(self) -> list:
        """Every unique constraint as (name, [(column, prefix)]), the primary key first."""
        out = []
        if self.primary_key:
            out.append(("PRIMARY", [(c, self.pk_prefix.get(c)) for c in self.primary_key]))
        out += list(self.unique_keys.items())
        return out

    def schema(self) -> dict:
        """The table schema rows.RowDecoder takes for this table."""
        cols = []
        for c in self.columns:
            entry = {"name": c.name, "unsigned": c.unsigned}
            if c.data_type in STRING_TYPES and c.charset:
                entry["charset"] = c.charset
            elif c.data_type in BINARY_TYPES:
                entry["charset"] = "binary"  # BINARY(n) values come back padded to n bytes
            if c.data_type == "enum":
                entry["enum_values"] = c.members()
            elif c.data_type == "set":
                entry["set_values"] = c.members()
            cols.append(entry)
        return {"columns": cols, "primary_key": list(self.primary_key)}


def _q(conn, sql) -> list:
    return conn.query_dicts(sql)


def read_table_info(conn, db: str, table: str) -> Optional[TableInfo]:
    """The table as the server's information_schema describes it; None when it has no such table."""
    where = f"TABLE_SCHEMA={string(db)} AND TABLE_NAME={string(table)}"
    rows = _q(conn, "SELECT COLUMN_NAME AS n, DATA_TYPE AS t, COLUMN_TYPE AS ct, IS_NULLABLE AS nl, "
                    "CHARACTER_SET_NAME AS cs, EXTRA AS x FROM information_schema.COLUMNS WHERE "
                    f"{where} ORDER BY ORDINAL_POSITION")
    if not rows:
        return None
    cols = [ColumnInfo(r["n"], (r["t"] or "").lower(), r["ct"] or "", r["nl"] == "YES", r["cs"],
                       "GENERATED" in (r["x"] or "").upper()) for r in rows]
    info = TableInfo(db, table, cols)
    for r in _q(conn, "SELECT INDEX_NAME AS i, COLUMN_NAME AS n, SUB_PART AS p FROM "
                      f"information_schema.STATISTICS WHERE {where} AND NON_UNIQUE=0 "
                      "ORDER BY INDEX_NAME, SEQ_IN_INDEX"):
        prefix = int(r["p"]) if r["p"] else None
        if r["i"] == "PRIMARY":
            info.primary_key.append(r["n"])
            if prefix:
                info.pk_prefix[r["n"]] = prefix
        else:
            info.unique_keys.setdefault(r["i"], []).append((r["n"], prefix))
    t = _q(conn, "SELECT t.ENGINE AS e, e.TRANSACTIONS AS tx FROM information_schema.TABLES t LEFT "
                 "JOIN information_schema.ENGINES e ON e.ENGINE=t.ENGINE WHERE "
                 f"t.TABLE_SCHEMA={string(db)} AND t.TABLE_NAME={string(table)}")
    if t:
        info.engine = t[0]["e"] or ""
        info.transactional = (t[0]["tx"] or "").upper() == "YES"
    n = _q(conn, "SELECT COUNT(*) AS n FROM information_schema.TRIGGERS WHERE "
                 f"EVENT_OBJECT_SCHEMA={string(db)} AND EVENT_OBJECT_TABLE={string(table)}")
    info.triggers = int(n[0]["n"]) if n else 0
    return info


# ---------------------------------------------------------------------------------------------
# values

@dataclass(frozen=True)
class Val:
    """One column value: `sql` writes it; `raw` is its stored bytes when it is a string, binary
    string or geometry (None otherwise); `show` is a short text for comments."""

    sql: str
    raw: Optional[bytes] = None
    show: str = ""

    @property
    def null(self) -> bool:
        return self.sql == "NULL"


NULL = Val("NULL", None, "NULL")


def _show(text: str, limit: int = 40) -> str:
    text = " ".join(text.split()) if "\n" in text else text
    return text if len(text) <= limit else text[:limit - 3] + "..."


def binlog_val(value, col) -> Val:
    """The Val of a value rows.py decoded for the binlog column `col` (a rows.Column).
    ValueError for a value no column can hold."""
    if value is None:
        return NULL
    lit = sql_literal(value, col)
    raw = None
    type_name = col.get("type_name") if col is not None else None
    if isinstance(value, Geometry):
        raw = struct.pack("<I", value.srid) + bytes(value.wkb)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
    elif isinstance(value, str) and type_name not in ("ENUM", "SET"):
        codec = codec_of(col)
        if codec is not None:
            raw = value.encode(codec, errors_of(codec))
    return Val(lit, raw, _show(lit))


def read_expr(c: ColumnInfo) -> str:
    """What a SELECT reads of the column so that `server_val` can write it back exactly."""
    name = ident(c.name)
    t = c.data_type
    if t in STRING_TYPES or t in BINARY_TYPES or t in GEOMETRY_TYPES:
        return f"HEX({name})"
    if t == "float":
        return f"{name}+0e0"  # the exact value as a double (a FLOAT's text has 6 digits)
    if t == "bit":
        return f"CAST({name} AS UNSIGNED)"
    return name


def server_val(text, c: ColumnInfo) -> Val:
    """The Val of what `read_expr(c)` selected (bytes or str from the text protocol, or None)."""
    if text is None:
        return NULL
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "surrogateescape")
    t = c.data_type
    if t in STRING_TYPES or t in BINARY_TYPES or t in GEOMETRY_TYPES:
        raw = bytes.fromhex(text)
        if t in GEOMETRY_TYPES:
            srid = int.from_bytes(raw[:4], "little") if len(raw) >= 4 else 0
            return Val(f"ST_GeomFromWKB({hex_literal(raw[4:])}, {srid})", raw,
                       _show(f"geometry({len(raw)} bytes)"))
        if t in BINARY_TYPES:
            hexed = hex_literal(raw)
            return Val(hexed, raw, _show(hexed))
        charset = c.charset or "utf8mb4"
        codec = codec_of({"charset": charset}) or "utf-8"
        shown = string(raw.decode(codec, "replace"))
        return Val(charset_literal(raw, charset), raw, _show(shown))
    if t in NUMBER_TYPES:
        if not re.fullmatch(r"[-+0-9.eE]+", text):
            raise ValueError(f"{c.name}: {text!r} is not a number")
        return Val(text, None, _show(text))
    lit = string(text)
    return Val(lit, None, _show(lit))


def key_term(name: str, v: Val, prefix: Optional[int] = None) -> str:
    """`col = value` as a unique index compares it (the column's collation; a prefix key
    compares the first `prefix` characters)."""
    col = ident(name)
    if v.null:
        return f"{col} IS NULL"
    if prefix:
        return f"LEFT({col}, {int(prefix)})=LEFT({v.sql}, {int(prefix)})"
    return f"{col}={v.sql}"


def exact_term(name: str, v: Val) -> str:
    """`col = value` byte for byte for strings (no collation, no padding), as the server compares
    the row images of a table without a primary key."""
    col = ident(name)
    if v.null:
        return f"{col} IS NULL"
    if v.raw is not None:
        return f"CAST({col} AS BINARY)={hex_literal(v.raw)}"
    return f"{col}={v.sql}"


def row_text(info: TableInfo, row: dict, limit: int = 200) -> str:
    """A row for a comment: (a=1, b='x', ...); raw text (quoting.comment makes it a comment)."""
    parts = [f"{c.name}={row[c.name].show}" for c in info.columns if c.name in row]
    text = "(" + ", ".join(parts) + ")"
    return text if len(text) <= limit else text[:limit - 4] + "...)"


def key_text(info: TableInfo, row: dict) -> str:
    """The row's primary key for a comment (every column of a table without one); raw text
    (quoting.comment makes it a comment)."""
    names = info.primary_key or [c.name for c in info.columns]
    parts = [f"{n}={row[n].show}" for n in names if n in row]
    text = ", ".join(parts)
    return text if len(text) <= 120 else text[:116] + " ..."


__all__ = ["ColumnInfo", "TableInfo", "Val", "NULL", "read_table_info", "binlog_val", "read_expr",
           "server_val", "key_term", "exact_term", "row_text", "key_text"]
