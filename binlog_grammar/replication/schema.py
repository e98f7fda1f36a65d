"""Table schemas from a live server's information_schema, for binlogs written without full
metadata (`sql --schema-from-server`, as binlog2sql asks the server).

A binlog written with binlog_row_metadata=MINIMAL (MySQL's default, MariaDB's too) names no
column, says no column is unsigned and gives no primary key: `sql` cannot write a statement
from it. `server_schemas(conn)` reads what the server says of its tables now, in the form
`binlog.rows` takes from `--schema FILE`:

    {"db.table": {"columns": [{"name": .., "unsigned": .., "charset": .., "enum_values": [..],
                               "set_values": [..]}, ...],
                  "primary_key": [..]}}

Columns are by position (information_schema.COLUMNS.ORDINAL_POSITION), as the row images have
them. This is the schema of today, not of when the binlog was written: a column added, dropped
or renamed since then makes the names wrong, which is why the command says so on stderr.
ENUM and SET members are read from COLUMN_TYPE (`enum('a','it''s')`), the only place
information_schema lists them.
"""
from __future__ import annotations

from typing import Iterable, List, Optional

__all__ = ["server_schemas", "type_members", "CAVEAT"]

CAVEAT = ("column names, signedness and keys come from the server's information_schema now, not "
          "from when the binlog was written: a table altered since then is decoded with its "
          "current columns")

SYSTEM = ("mysql", "information_schema", "performance_schema", "sys")


def type_members(column_type: str) -> Optional[List[str]]:
    """The members of `enum('a','b')` / `set(...)` as COLUMN_TYPE spells them (a quote doubled,
    a backslash doubled: information_schema writes them so), None for another type."""
    lower = column_type.lower()
    for kind in ("enum(", "set("):
        if lower.startswith(kind) and column_type.endswith(")"):
            body = column_type[len(kind):-1]
            break
    else:
        return None
    out, i, n = [], 0, len(body)
    while i < n:
        if body[i] != "'":
            raise ValueError(f"unexpected {body[i]!r} in the column type {column_type!r}")
        i += 1
        item = []
        while True:
            if i >= n:
                raise ValueError(f"an unterminated member in the column type {column_type!r}")
            c = body[i]
            if c == "'" and i + 1 < n and body[i + 1] == "'":
                item.append("'")
                i += 2
            elif c == "\\" and i + 1 < n:
                item.append(body[i + 1])
                i += 2
            elif c == "'":
                i += 1
                break
            else:
                item.append(c)
                i += 1
        out.append("".join(item))
        if i < n:
            if body[i] != ",":
                raise ValueError(f"unexpected {body[i]!r} in the column type {column_type!r}")
            i += 1
    return out


def server_schemas(conn, databases: Optional[Iterable[str]] = None) -> dict:
    """The schemas of the server's tables (of `databases` only, when given), by "db.table".
    The queries are constant text: the databases are picked from their answer."""
    keep = set(databases) if databases else None

    def wanted(r) -> bool:
        db = r["TABLE_SCHEMA"]
        return db not in SYSTEM if keep is None else db in keep

    rows = conn.query_dicts(
        "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, CHARACTER_SET_NAME "
        "FROM information_schema.COLUMNS ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION")
    out: dict = {}
    for r in filter(wanted, rows):
        key = f"{r['TABLE_SCHEMA']}.{r['TABLE_NAME']}"
        col = {"name": r["COLUMN_NAME"]}
        ctype = r["COLUMN_TYPE"] or ""
        if " unsigned" in ctype.lower():
            col["unsigned"] = True
        if r["CHARACTER_SET_NAME"]:
            col["charset"] = r["CHARACTER_SET_NAME"]
        members = type_members(ctype)
        if members is not None:
            col["enum_values" if ctype.lower().startswith("enum") else "set_values"] = members
        out.setdefault(key, {"columns": [], "primary_key": []})["columns"].append(col)
    keys = conn.query_dicts(
        "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE "
        "WHERE CONSTRAINT_NAME = 'PRIMARY' ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION")
    for r in filter(wanted, keys):
        table = out.get(f"{r['TABLE_SCHEMA']}.{r['TABLE_NAME']}")
        if table is not None:
            table["primary_key"].append(r["COLUMN_NAME"])
    return out
