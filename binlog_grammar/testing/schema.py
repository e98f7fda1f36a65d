"""Hypothesis strategies: MariaDB table layouts, workloads and binlog settings.

`cases(settings)` draws a `Case`: one table (`CREATE TABLE t (...)`) whose columns come from every
column type family MariaDB 10.11 has, in random order, nullable or NOT NULL, some INVISIBLE, some
with a DEFAULT, with a primary key of one or two columns of several types (sometimes
AUTO_INCREMENT) or none; and a workload of multi-row INSERTs, UPDATEs (by key, of every row, with
LIMIT, changing the key) and DELETEs whose values are each type's edges or random values. With no
`settings`, the server settings are drawn too.

A Case holds only text (the CREATE TABLE and the statements, with the columns each statement names)
and its repr is valid Python, so a failing example printed by Hypothesis can be pasted into an
`@example(...)` or a fixed test as it is.

Values are SQL literals the server converts as it does any client's: strings as UTF-8 bytes behind
an introducer (`_utf8mb4 X'...'`, so no escaping is involved), binary strings as `X'...'`, numbers
as digits. Values out of a column's range or repertoire are allowed: the session runs with
sql_mode='' and the server stores what it stores; the checks compare with what SELECT shows, never
with the literal.
"""
from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from .columns import CHARSETS, ColumnType, column_types, quote_ident
from .literals import default_values, key_value, values

ROW_IMAGES = ("FULL", "MINIMAL", "NOBLOB")
METADATA = ("FULL", "MINIMAL")


@dataclass(frozen=True)
class Settings:
    """The server settings a binlog is written with."""

    row_image: str = "FULL"  # binlog_row_image: FULL, MINIMAL, NOBLOB
    metadata: str = "FULL"  # binlog_row_metadata: FULL, MINIMAL
    compress: bool = False  # log_bin_compress (with log_bin_compress_min_len=10)

    @property
    def label(self) -> str:
        return f"image={self.row_image},metadata={self.metadata},compress={'ON' if self.compress else 'OFF'}"

    @classmethod
    def parse(cls, label: str) -> "Settings":
        """The Settings of a label `image=MINIMAL,metadata=FULL,compress=ON`."""
        parts = dict(p.split("=", 1) for p in label.split(","))
        return cls(parts["image"].upper(), parts["metadata"].upper(),
                   parts["compress"].upper() in ("ON", "1", "TRUE"))

    def sql(self) -> str:
        """The statements that set them on a server (global: every new session follows)."""
        return (f"SET GLOBAL binlog_row_image = {self.row_image}; "
                f"SET GLOBAL binlog_row_metadata = {self.metadata}; "
                f"SET GLOBAL log_bin_compress = {'ON' if self.compress else 'OFF'}; "
                "SET GLOBAL log_bin_compress_min_len = 10;")


ALL_SETTINGS = [Settings(i, m, c) for i in ROW_IMAGES for m in METADATA for c in (False, True)]


@dataclass(frozen=True)
class Statement:
    """One workload statement: kind insert/update/delete, its SQL, and the columns it names (the
    INSERT column list, the columns an UPDATE assigns), which binlog_row_image=MINIMAL and NOBLOB
    images follow."""

    kind: str
    sql: str
    named: tuple = ()


@dataclass(frozen=True)
class Case:
    """One example: settings, the table (its CREATE TABLE names it `t`) and the workload."""

    settings: Settings
    create: str
    statements: tuple = ()

    def reproducer(self) -> str:
        """The example as SQL to paste into a mariadb client."""
        lines = [f"-- {self.settings.label}", self.settings.sql(),
                 "SET time_zone = '+00:00'; SET sql_mode = '';", self.create + ";"]
        lines += [s.sql + ";" for s in self.statements]
        return "\n".join(lines)



# -- tables ---------------------------------------------------------------------------------------

@dataclass
class Col:
    name: str
    type: ColumnType
    nullable: bool = True
    invisible: bool = False
    default: str | None = None
    auto_increment: bool = False

    def sql(self) -> str:
        out = f"{quote_ident(self.name)} {self.type.sql}"
        out += " NULL" if self.nullable else " NOT NULL"
        if self.auto_increment:
            out += " AUTO_INCREMENT"
        if self.default is not None:
            out += f" DEFAULT {self.default}"
        if self.invisible:
            out += " INVISIBLE"
        return out


@dataclass
class Layout:
    columns: list
    key: list  # names of the primary key columns, in key order
    charset: str

    def create(self) -> str:
        parts = [c.sql() for c in self.columns]
        if self.key:
            parts.append("PRIMARY KEY (" + ", ".join(quote_ident(k) for k in self.key) + ")")
        return (f"CREATE TABLE t ({', '.join(parts)}) ENGINE=InnoDB DEFAULT CHARSET={self.charset}")

    def col(self, name) -> Col:
        return next(c for c in self.columns if c.name == name)


_NAMES = ["c{}", "c{}", "c{}", "Ü{}", "col {}", "x`{}", "Ωμ{}", "select{}"]


@st.composite
def layouts(draw, max_columns=10):
    n = draw(st.integers(1, max_columns))
    if draw(st.integers(0, 9)) == 0:  # now and then a wide table (null bitmaps of many bytes)
        n = draw(st.integers(max_columns, 4 * max_columns))
    cols = []
    budget = 40000  # bytes of CHAR/VARCHAR/BINARY columns (a row holds at most 65535)
    for i in range(n):
        name = draw(st.sampled_from(_NAMES)).format(i)
        ct = draw(column_types())
        if ct.family in ("string", "binary"):
            size = ct.params["n"] * CHARSETS.get(ct.params.get("charset"), (1,))[0] + 2
            budget -= size
            if budget < 0:
                ct = ColumnType("int", "INT", {"bits": 32, "unsigned": False})
        nullable = draw(st.integers(0, 3)) > 0
        c = Col(name, ct, nullable)
        if ct.defaultable and not ct.blob and draw(st.integers(0, 4)) == 0:
            c.default = draw(default_values(ct))
        if (nullable or c.default is not None) and draw(st.integers(0, 7)) == 0:
            c.invisible = True
        cols.append(c)
    if all(c.invisible for c in cols):  # a table needs a visible column
        cols[0].invisible = False
    key_shape = draw(st.sampled_from(["none", "one", "one", "one", "two", "auto"]))
    key = []
    if key_shape in ("one", "two", "auto"):
        for j in range(1 if key_shape != "two" else 2):
            if key_shape == "auto":
                ct = ColumnType("int", draw(st.sampled_from(["INT", "BIGINT", "SMALLINT"])),
                                {"bits": 16, "unsigned": False})
                kc = Col(f"id{j}", ct, False, auto_increment=True)
            else:
                kc = Col(f"k{j}", draw(column_types(key=True)), False)
            key.append(kc.name)
            cols.insert(draw(st.integers(0, len(cols))), kc)
    cs = draw(st.sampled_from(["utf8mb4", "latin1", "utf8mb3"]))
    return Layout(cols, key, cs)


# -- workloads ------------------------------------------------------------------------------------

@st.composite
def _row_values(draw, layout, names, keyvals):
    out = []
    for name in names:
        c = layout.col(name)
        if name in keyvals:
            out.append(keyvals[name])
        elif c.nullable and draw(st.integers(0, 6)) == 0:
            out.append("NULL")
        else:
            out.append(draw(values(c.type)))
    return out


def _where_key(layout, key):
    return " AND ".join(f"{quote_ident(k)} = {v}" for k, v in zip(layout.key, key))


def _tail(draw, layout, keys, ways):
    """What follows an UPDATE's SET or a DELETE's table: one of `ways` (in the order given; key
    and keys only once keys were inserted): WHERE one key, WHERE some keys, a LIMIT, or nothing."""
    where = draw(st.sampled_from(ways if keys else [w for w in ways if w not in ("key", "keys")]))
    if where == "key":
        return f" WHERE {_where_key(layout, draw(st.sampled_from(keys)))}"
    if where == "keys":
        chosen = draw(st.lists(st.sampled_from(keys), min_size=1, max_size=4, unique=True))
        return " WHERE " + " OR ".join(f"({_where_key(layout, k)})" for k in chosen)
    if where == "limit":
        return f" LIMIT {draw(st.integers(1, 3))}"
    return ""


@st.composite
def workloads(draw, layout: Layout, max_statements=6, max_rows=6):
    salt = draw(st.integers(0, 2**30))
    counter = [0]
    keys = []  # key value tuples (literals) inserted so far
    statements = []
    auto = any(layout.col(k).auto_increment for k in layout.key)
    visible = [c.name for c in layout.columns]
    others = [c for c in visible if c not in layout.key]
    # NOT NULL columns whose implicit default the server refuses: every INSERT names them
    required = {c.name for c in layout.columns if not c.nullable and c.default is None
                and c.type.family in ("json", "geometry")}

    def fresh_key():  # (explicit keys of an AUTO_INCREMENT column are negative: never generated)
        counter[0] += 1
        return tuple(key_value(layout.col(k).type, counter[0], salt + j)
                     if not layout.col(k).auto_increment else str(-counter[0] - salt % 1000)
                     for j, k in enumerate(layout.key))

    n = draw(st.integers(1, max_statements))
    for i in range(n):
        kind = "insert" if i == 0 else draw(st.sampled_from(["insert", "update", "update", "delete"]))
        if kind == "insert":
            if others and draw(st.integers(0, 3)) == 0:
                named = [c for c in visible if c in layout.key or c in required or draw(st.booleans())]
            else:
                named = list(visible)
            omit_auto = auto and draw(st.booleans())
            if omit_auto:
                named = [c for c in named if c not in layout.key]
            if not named:
                named = list(visible)
                omit_auto = False
            rows = []
            for _ in range(draw(st.integers(1, max_rows))):
                key = fresh_key() if layout.key else ()
                if layout.key and not omit_auto:
                    keys.append(key)
                kv = dict(zip(layout.key, key)) if not omit_auto else {}
                rows.append("(" + ", ".join(draw(_row_values(layout, named, kv))) + ")")
            sql = (f"INSERT INTO t ({', '.join(quote_ident(c) for c in named)}) VALUES "
                   + ", ".join(rows))
            statements.append(Statement("insert", sql, tuple(named)))
        elif kind == "update":
            change_key = bool(layout.key) and bool(keys) and draw(st.integers(0, 4)) == 0
            if change_key or not others:
                if not keys:
                    continue
                old = draw(st.sampled_from(keys))
                new = fresh_key()
                keys.remove(old)
                keys.append(new)
                assigned = list(layout.key)
                sets = [f"{quote_ident(k)} = {v}" for k, v in zip(layout.key, new)]
                if others and draw(st.booleans()):
                    extra = draw(st.lists(st.sampled_from(others), min_size=1, max_size=2, unique=True))
                    vals = draw(_row_values(layout, extra, {}))
                    assigned += extra
                    sets += [f"{quote_ident(c)} = {v}" for c, v in zip(extra, vals)]
                sql = f"UPDATE t SET {', '.join(sets)} WHERE {_where_key(layout, old)}"
                statements.append(Statement("update", sql, tuple(assigned)))
                continue
            assigned = draw(st.lists(st.sampled_from(others), min_size=1, max_size=3, unique=True))
            vals = draw(_row_values(layout, assigned, {}))
            sets = ", ".join(f"{quote_ident(c)} = {v}" for c, v in zip(assigned, vals))
            tail = _tail(draw, layout, keys, ["key", "keys", "all", "limit"])
            statements.append(Statement("update", f"UPDATE t SET {sets}{tail}", tuple(assigned)))
        else:
            tail = _tail(draw, layout, keys, ["key", "keys", "limit", "all"])
            statements.append(Statement("delete", f"DELETE FROM t{tail}"))
    return tuple(statements)


settings_strategy = st.sampled_from(ALL_SETTINGS)


@st.composite
def cases(draw, settings: Settings | None = None, max_columns=10, max_statements=6, max_rows=6):
    """A Case: the given settings (or drawn ones), a table and a workload."""
    s = settings if settings is not None else draw(settings_strategy)
    layout = draw(layouts(max_columns))
    work = draw(workloads(layout, max_statements, max_rows))
    return Case(s, layout.create(), work)
