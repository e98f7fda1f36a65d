"""Debezium's schema-change records (`include.schema.changes`): for each table or database DDL
statement of the binlog, the record the MySQL/MariaDB connector writes to its schema-change topic
(`topic.prefix`), with the table as its DDL parser models it in `tableChanges`.

`SchemaModel.see(statement, default_db, server_charset)` follows CREATE/ALTER/DROP/RENAME TABLE
and CREATE/ALTER/DROP DATABASE (read, never run) and returns the records' parts:
`(db, table, ddl, table_changes)`, one per record, in the order the connector writes them. What
the connector writes, as captured from Debezium 3.6.3 against MariaDB 10.11 (tests/debezium):

- a CREATE TABLE: one CREATE change with the whole table; CREATE TABLE IF NOT EXISTS of a table
  that exists: no record; CREATE TABLE ... LIKE: the source table's columns;
- an ALTER TABLE: one ALTER change with the whole table after it (RENAME TO: under the new
  name); a RENAME TABLE of n pairs: n records, each `RENAME TABLE a TO b` and an ALTER change;
- a DROP TABLE of n tables: n records, each `DROP TABLE [IF EXISTS] `db`.`t``, table null (also
  for a table that did not exist);
- CREATE DATABASE, DROP DATABASE: a record with no table change; ALTER DATABASE only changes the
  default charset of the tables created after it; TRUNCATE, CREATE INDEX, views, routines,
  users: no record;
- `source.table` is the table's name, for a statement of several tables their names joined by
  "," in the order of Java's HashSet of `db.table` ids (`java_set_order`), null for a database.

A column is `{name, jdbcType, nativeType, typeName, typeExpression, charsetName, length, scale,
position, optional, autoIncremented, generated, comment, defaultValueExpression, enumValues}`:
the type word(s) upper case with UNSIGNED/ZEROFILL, the java.sql.Types code (`JDBC`), the
declared length and scale (DECIMAL without them 10 and 0, BIT 1; ENUM's length 1, a SET's of n
members 2n-1), the charset of text, ENUM and SET columns (the column's CHARACTER SET, else the
table's CHARSET, else its database's when the table was created: COLLATE alone is not read),
optional unless NOT NULL or in the primary key, autoIncremented and generated for AUTO_INCREMENT
and ON UPDATE CURRENT_TIMESTAMP (a column AS (...) is not `generated`), the DEFAULT literal's text
inside its quotes as written (CURRENT_TIMESTAMP as "1970-01-01 00:00:00", X'..'/b'..' their
digits), ENUM/SET members with their quotes. Comments are null (`include.schema.comments`
false). The primary key is the PRIMARY KEY's columns, else the first UNIQUE key of NOT NULL
columns.
"""
from __future__ import annotations

from typing import Optional

from .debezium_ddl import token_spans

# java.sql.Types of each type name the connector's DDL parser gives
JDBC = {
    "TINYINT": 5, "SMALLINT": 5, "INT1": 5, "INT2": 5, "MEDIUMINT": 4, "INT3": 4, "MIDDLEINT": 4,
    "INT": 4, "INTEGER": 4, "INT4": 4, "YEAR": 4, "BIGINT": -5, "INT8": -5, "SERIAL": -5,
    "REAL": 7, "DOUBLE": 8, "DOUBLE PRECISION": 8, "FLOAT": 6, "FLOAT4": 6, "FLOAT8": 8,
    "DECIMAL": 3, "DEC": 3, "FIXED": 3, "NUMERIC": 2, "BOOL": 16, "BOOLEAN": 16, "BIT": -7,
    "CHAR": 1, "CHARACTER": 1, "ENUM": 1, "SET": 1, "NATIONAL CHAR": -15, "NCHAR": -15,
    "NATIONAL CHARACTER": -15, "NVARCHAR": -9, "NATIONAL VARCHAR": -9, "VARCHAR": 12,
    "CHARACTER VARYING": 12, "TINYTEXT": 12, "TEXT": 12, "MEDIUMTEXT": 12, "LONGTEXT": 12,
    "LONG": 12, "LONG VARCHAR": 12, "BINARY": -2, "VARBINARY": -3, "TINYBLOB": 2004,
    "BLOB": 2004, "MEDIUMBLOB": 2004, "LONGBLOB": 2004, "DATE": 91, "TIME": 92, "DATETIME": 93,
    "TIMESTAMP": 2014, "JSON": 1111,
}
_MULTI = {("DOUBLE", "PRECISION"), ("NATIONAL", "CHAR"), ("NATIONAL", "CHARACTER"),
          ("NATIONAL", "VARCHAR"), ("CHARACTER", "VARYING"), ("LONG", "VARCHAR")}
_TEXT = {"CHAR", "CHARACTER", "VARCHAR", "CHARACTER VARYING", "TINYTEXT", "TEXT", "MEDIUMTEXT",
         "LONGTEXT", "LONG", "LONG VARCHAR", "ENUM", "SET"}
_NATIONAL = {"NATIONAL CHAR", "NCHAR", "NATIONAL CHARACTER", "NVARCHAR", "NATIONAL VARCHAR"}
_DECIMALS = {"DECIMAL", "DEC", "FIXED", "NUMERIC"}
_NOW = {"CURRENT_TIMESTAMP", "NOW", "LOCALTIME", "LOCALTIMESTAMP"}
EPOCH = "1970-01-01 00:00:00"  # a CURRENT_TIMESTAMP default, as the connector writes it
_KEYS = {"PRIMARY", "KEY", "INDEX", "UNIQUE", "CONSTRAINT", "FOREIGN", "CHECK", "FULLTEXT",
         "SPATIAL", "PERIOD", "VECTOR"}


def _up(t) -> str:
    return t[1].upper() if t[0] == "word" else ""


def _is(t, ch) -> bool:
    return t[0] == "p" and t[1] == ch


def _group(toks, i):
    """The comma-separated token lists inside the parentheses at toks[i], and the index after."""
    parts, cur, depth = [], [], 0
    for k in range(i, len(toks)):
        t = toks[k]
        if _is(t, "("):
            depth += 1
            if depth == 1:
                continue
        elif _is(t, ")"):
            depth -= 1
            if depth == 0:
                parts.append(cur)
                return parts, k + 1
        if _is(t, ",") and depth == 1:
            parts.append(cur)
            cur = []
        else:
            cur.append(t)
    parts.append(cur)
    return parts, len(toks)


def _split(toks, i=0):
    """The clauses from toks[i] separated by commas at parenthesis depth 0."""
    out, cur, depth = [], [], 0
    for t in toks[i:]:
        depth += _is(t, "(") - _is(t, ")")
        if _is(t, ",") and depth == 0:
            out.append(cur)
            cur = []
        else:
            cur.append(t)
    out.append(cur)
    return [c for c in out if c]


def _names(parts) -> list:
    """Column names of an index's parentheses: `(a, b(10) DESC)` -> ["a", "b"]."""
    return [p[0][1] for p in parts if p]


class Column:
    __slots__ = ("name", "type", "jdbc", "length", "scale", "charset", "optional", "auto",
                 "default", "enum")

    def as_json(self, position: int) -> dict:
        return {"name": self.name, "jdbcType": self.jdbc, "nativeType": None,
                "typeName": self.type, "typeExpression": self.type, "charsetName": self.charset,
                "length": self.length, "scale": self.scale, "position": position,
                "optional": self.optional, "autoIncremented": self.auto, "generated": self.auto,
                "comment": None, "defaultValueExpression": self.default, "enumValues": self.enum}


def _default(toks) -> Optional[str]:
    """A DEFAULT's text as the connector keeps it (None for NULL or an expression)."""
    if not toks:
        return None
    t, sign = toks[0], ""
    if (_is(t, "-") or _is(t, "+")) and len(toks) > 1:
        sign, t = ("-" if t[1] == "-" else ""), toks[1]
        toks = toks[1:]
    word = _up(t)
    if t[0] == "str":
        return t[1][1:-1]
    if t[0] == "num" or (t[0] == "word" and t[1].isdigit()):
        return sign + t[1]
    if word in _NOW:
        return EPOCH
    if word.startswith("_") and len(toks) > 2 and _up(toks[1]) in ("X", "B"):
        toks, word = toks[1:], _up(toks[1])  # a charset introducer before X'..' / B'..'
    if word in ("X", "B") or word.startswith("_"):
        return toks[1][1][1:-1] if len(toks) > 1 and toks[1][0] == "str" else None
    if word in ("TRUE", "FALSE") or (t[0] == "word" and word.startswith(("0X", "0B"))):
        return t[1]
    return None


def _column(name: str, toks, table_charset: Optional[str]):
    """A column definition (the tokens after its name): (Column, primary key, unique)."""
    c = Column()
    c.name = name
    i = 2 if len(toks) > 1 and (_up(toks[0]), _up(toks[1])) in _MULTI else 1
    base = " ".join(_up(t) for t in toks[:i]) if toks else ""
    args = []
    if i < len(toks) and _is(toks[i], "("):
        args, i = _group(toks, i)
    mods = []
    while i < len(toks) and _up(toks[i]) in ("UNSIGNED", "SIGNED", "ZEROFILL"):
        if _up(toks[i]) != "SIGNED":
            mods.append(_up(toks[i]))
        i += 1
    c.type = " ".join([base] + mods)
    c.jdbc = JDBC.get(base, 1111)
    c.length = c.scale = c.enum = None
    if base in ("ENUM", "SET"):
        c.enum = [p[0][1] for p in args if p and p[0][0] == "str"]
        c.length = 1 if base == "ENUM" else max(2 * len(c.enum) - 1, 0)
    else:
        nums = [int(p[0][1]) for p in args if len(p) == 1 and p[0][1].isdigit()]
        if nums:
            # a length of 0 is 10 to the connector's parser (BINARY(0), CHAR(0), DECIMAL(0,0),
            # BIT(0), ...; seen with 3.6.3), but a temporal type's fraction digits
            c.length = nums[0] or (0 if base in ("TIME", "DATETIME", "TIMESTAMP") else 10)
            if len(nums) > 1:
                c.scale = nums[1]
        if base in _DECIMALS:
            c.length = 10 if c.length is None else c.length
            c.scale = 0 if c.scale is None else c.scale
        elif base == "BIT" and c.length is None:
            c.length = 1
    charset = None
    not_null = pk = unique = False
    c.auto = False
    c.default = None
    n = len(toks)
    while i < n:
        w = _up(toks[i])
        if w == "NOT" and i + 1 < n and _up(toks[i + 1]) == "NULL":
            not_null, i = True, i + 2
            continue
        if w in ("CHARSET", "CHARACTER") and i + 1 < n:
            j = i + 1 + (_up(toks[i + 1]) == "SET")
            if j < n:
                charset, i = toks[j][1].lower(), j + 1
                continue
        if w == "PRIMARY" or (w == "KEY" and _up(toks[i - 1]) != "UNIQUE"):
            pk = True
        elif w == "UNIQUE":
            unique = True
        elif w == "AUTO_INCREMENT":
            c.auto = True
        elif w == "ON" and i + 1 < n and _up(toks[i + 1]) == "UPDATE":
            c.auto = True
            i += 2
        elif w == "DEFAULT" and i + 1 < n:
            c.default = _default(toks[i + 1:])
        elif w in ("COLLATE", "COMMENT"):
            i += 1
        elif _is(toks[i], "("):  # AS (...), CHECK (...)
            _, i = _group(toks, i)
            continue
        i += 1
    if base in _NATIONAL:
        charset = "utf8"
    c.charset = (charset or table_charset) if base in _TEXT or base in _NATIONAL else None
    c.optional = not (not_null or pk)
    return c, pk, unique


def _placement(toks):
    """A definition without its trailing FIRST / AFTER col: (tokens, "first"|name|None)."""
    if toks and _up(toks[-1]) == "FIRST":
        return toks[:-1], "first"
    if len(toks) > 2 and _up(toks[-2]) == "AFTER":
        return toks[:-2], toks[-1][1]
    return toks, None


class Table:
    def __init__(self, charset):
        self.charset = charset
        self.columns: list = []
        self.pk: list = []
        self.uniques: list = []

    def find(self, name) -> int:
        for k, c in enumerate(self.columns):
            if c.name.lower() == str(name).lower():
                return k
        return -1

    def place(self, col, where, old=-1):
        if old >= 0:
            del self.columns[old]
        if where == "first":
            self.columns.insert(0, col)
        elif where is not None and self.find(where) >= 0:
            self.columns.insert(self.find(where) + 1, col)
        elif old >= 0 and where is None:
            self.columns.insert(old, col)
        else:
            self.columns.append(col)

    def set_pk(self, names):
        self.pk = [self.columns[k].name for k in map(self.find, names) if k >= 0]
        for name in self.pk:
            self.columns[self.find(name)].optional = False

    def key(self):
        """The primary key, or the first UNIQUE key of NOT NULL columns."""
        if self.pk:
            return list(self.pk)
        for names in self.uniques:
            ks = [self.find(n) for n in names]
            if ks and all(k >= 0 and not self.columns[k].optional for k in ks):
                return [self.columns[k].name for k in ks]
        return []

    def as_json(self) -> dict:
        return {"defaultCharsetName": self.charset, "primaryKeyColumnNames": self.key(),
                "columns": [c.as_json(k + 1) for k, c in enumerate(self.columns)],
                "comment": None}

    def copy(self):
        t = Table(self.charset)
        t.columns = [_copy(c) for c in self.columns]
        t.pk, t.uniques = list(self.pk), list(self.uniques)
        return t


def _copy(c: Column) -> Column:
    new = Column()
    for k in Column.__slots__:
        setattr(new, k, getattr(c, k))
    return new


def table_id(db, table) -> str:
    """The connector's TableId in double quotes: "db"."table"."""
    return '"' + str(db).replace('"', '""') + '"."' + str(table).replace('"', '""') + '"'


def _java_hash(text: str) -> int:
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for k in range(0, len(data), 2):
        h = (31 * h + (data[k] << 8 | data[k + 1])) & 0xFFFFFFFF
    return h


def java_set_order(db, tables) -> list:
    """`tables` in the iteration order of a small java.util.HashSet of their `db.table` ids
    (16 buckets; equal buckets in insertion order): how the connector joins a statement's
    tables in `source.table`."""
    def bucket(t):
        h = _java_hash(f"{db}.{t}")
        return (h ^ (h >> 16)) & 15
    seen = list(dict.fromkeys(tables))
    return sorted(seen, key=bucket)


class SchemaModel:
    """The tables and databases a stream's DDL made, as the connector's DDL parser keeps them."""

    def __init__(self):
        self.tables: dict = {}  # (db, table) -> Table; names as written, looked up lower case
        self.charsets: dict = {}  # db (lower case) -> its default charset, from its DDL

    def _get(self, db, table):
        return self.tables.get((str(db).lower(), str(table).lower()))

    def _put(self, db, table, t):
        self.tables[(str(db).lower(), str(table).lower())] = (db, table, t)

    def see(self, statement: str, default_db: Optional[str],
            server_charset: Optional[str] = None) -> list:
        """The schema-change records of one statement: [(db, source_table, ddl, changes)]
        (source_table None for a database; changes: the `tableChanges` list)."""
        try:
            toks = token_spans(statement)
        except (TypeError, ValueError):
            return []
        words = [_up(t) for t in toks[:6]]
        self.sql, self.default_db, self.server_charset = statement, default_db or "", server_charset
        try:
            if words[:1] == ["CREATE"] and "TABLE" in words[1:4]:
                return self._create(toks, words.index("TABLE") + 1)
            if words[:2] == ["ALTER", "TABLE"] or words[:3] in (["ALTER", "ONLINE", "TABLE"],
                                                                ["ALTER", "IGNORE", "TABLE"]):
                return self._alter(toks, words.index("TABLE") + 1)
            if words[:2] == ["DROP", "TABLE"]:
                return self._drop(toks, 2)
            if words[:2] == ["RENAME", "TABLE"]:
                return self._rename(toks, 2)
            if len(words) > 1 and words[0] in ("CREATE", "ALTER", "DROP") and \
                    words[1] in ("DATABASE", "SCHEMA"):
                return self._database(words[0], toks)
        except (IndexError, ValueError, TypeError, StopIteration):
            # a statement cut short or not followed: no record
            return []
        return []

    # -- names

    def _name(self, toks, i):
        """((db, table), next i) of the table name at toks[i] (after IF [NOT] EXISTS)."""
        while i < len(toks) and _up(toks[i]) in ("IF", "NOT", "EXISTS"):
            i += 1
        first = toks[i][1]
        if i + 2 < len(toks) and _is(toks[i + 1], "."):
            return (first, toks[i + 2][1]), i + 3
        return (self.default_db, first), i + 1

    def db_charset(self, db):
        return self.charsets.get(str(db).lower()) or self.server_charset

    # -- statements

    def _create(self, toks, i):
        exists = any(_up(t) == "EXISTS" for t in toks[i:i + 3])
        (db, name), i = self._name(toks, i)
        if exists and self._get(db, name) is not None:
            return []
        if i < len(toks) and _up(toks[i]) == "LIKE" or \
                (i + 1 < len(toks) and _is(toks[i], "(") and _up(toks[i + 1]) == "LIKE"):
            j = i + 1 if _up(toks[i]) == "LIKE" else i + 2
            (sdb, sname), _ = self._name(toks, j)
            src = self._get(sdb, sname)
            if src is None:
                return []
            t = src[2].copy()
        elif i < len(toks) and _is(toks[i], "("):
            defs, j = _group(toks, i)
            t = Table(self._table_charset(toks[j:]) or self.db_charset(db))
            pk = []
            for d in defs:
                pk = self._definition(t, d, pk)
            t.set_pk(pk)
        else:
            return []
        self._put(db, name, t)
        return [(db, name, self.sql, [self._change("CREATE", db, name, t)])]

    @staticmethod
    def _table_charset(toks) -> Optional[str]:
        """[DEFAULT] CHARSET|CHARACTER SET [=] x among table options (COLLATE alone is not read)."""
        for k, t in enumerate(toks):
            w = _up(t)
            if w in ("CHARSET", "CHARACTER"):
                j = k + 1 + (k + 1 < len(toks) and _up(toks[k + 1]) == "SET")
                j += j < len(toks) and _is(toks[j], "=")
                if j < len(toks):
                    return toks[j][1].lower()
        return None

    def _definition(self, t, d, pk):
        """One item of a CREATE TABLE's list into `t`; returns the primary key's names."""
        w = [_up(x) for x in d[:3]]
        if d[0][0] != "id" and w[0] in _KEYS:
            k = 0
            if w[0] == "CONSTRAINT":
                k = 1 if len(d) > 1 and _up(d[1]) in ("PRIMARY", "UNIQUE") else 2
            head = _up(d[k]) if k < len(d) else ""
            paren = next((j for j in range(k, len(d)) if _is(d[j], "(")), None)
            if paren is not None and head in ("PRIMARY", "UNIQUE"):
                names = _names(_group(d, paren)[0])
                if head == "PRIMARY":
                    return names
                t.uniques.append(names)
            return pk
        col, is_pk, unique = _column(d[0][1], d[1:], t.charset)
        t.columns.append(col)
        if unique:
            t.uniques.append([col.name])
        return [col.name] if is_pk else pk

    def _alter(self, toks, i):
        (db, name), i = self._name(toks, i)
        found = self._get(db, name)
        if found is None:
            return []
        t = found[2].copy()
        new = None
        self._pending_pk = None
        for clause in _split(toks, i):
            new = self._alter_clause(t, clause) or new
        if self._pending_pk:
            t.set_pk(self._pending_pk)
        if new is not None:
            self.tables.pop((str(db).lower(), str(name).lower()), None)
            db, name = new
        self._put(db, name, t)
        return [(db, name, self.sql, [self._change("ALTER", db, name, t)])]

    def _alter_clause(self, t, c):
        w = [_up(x) for x in c]
        act = w[0]
        j = 1
        while j < len(c) and w[j] in ("COLUMN", "IF", "NOT", "EXISTS"):
            j += 1
        if act == "ADD":
            if j < len(c) and _is(c[j], "("):
                for d in _group(c, j)[0]:
                    self._definition(t, d, [])
            elif w[1] != "COLUMN" and (c[j][0] != "id" and w[j] in _KEYS):
                pk = self._definition(t, c[1:], [])
                if pk:  # set once every clause is applied: it may name a column added later
                    self._pending_pk = pk
            else:
                body, where = _placement(c[j:])
                col, is_pk, unique = _column(body[0][1], body[1:], t.charset)
                t.place(col, where)
                if is_pk:
                    t.set_pk([col.name])
        elif act in ("MODIFY", "CHANGE"):
            old = c[j][1]
            if act == "CHANGE":
                j += 1
            body, where = _placement(c[j:])
            k = t.find(old)
            col, is_pk, unique = _column(body[0][1], body[1:], t.charset)
            if any(p.lower() == str(old).lower() for p in t.pk):
                t.pk = [col.name if p.lower() == str(old).lower() else p for p in t.pk]
                col.optional = False
            t.place(col, where, k)
        elif act == "DROP":
            if w[1] == "PRIMARY":
                t.pk = []
            elif c[j][0] == "id" or w[j] not in _KEYS:
                k = t.find(c[j][1])
                if k >= 0:
                    del t.columns[k]
        elif act == "ALTER" and t.find(c[j][1]) >= 0:
            col = t.columns[t.find(c[j][1])] = _copy(t.columns[t.find(c[j][1])])
            if w[j + 1:j + 3] == ["SET", "DEFAULT"]:
                col.default = _default(c[j + 3:])
            elif w[j + 1:j + 3] == ["DROP", "DEFAULT"]:
                col.default = None
        elif act == "RENAME" and w[1] == "COLUMN" and len(c) > 4:
            k = t.find(c[2][1])
            if k >= 0:
                t.columns[k] = _copy(t.columns[k])
                t.columns[k].name = c[4][1]
        elif act == "RENAME":
            (db, name), _ = self._name(c, 2 if w[1] in ("TO", "AS") else 1)
            return db, name
        elif act == "CONVERT" or "CHARSET" in w or "CHARACTER" in w:
            cs = self._table_charset(c)
            if cs:
                t.charset = cs
                if act == "CONVERT":
                    for k, col in enumerate(t.columns):
                        if col.charset is not None:
                            t.columns[k] = _copy(col)
                            t.columns[k].charset = cs
        return None

    def _drop(self, toks, i):
        if_exists = _up(toks[i]) == "IF"
        out, names = [], []
        for clause in _split(toks, i):
            if _up(clause[0]) in ("RESTRICT", "CASCADE"):
                break
            (db, name), _ = self._name(clause, 0)
            names.append((db, name))
        for db, name in names:
            self.tables.pop((str(db).lower(), str(name).lower()), None)
            ddl = f"DROP TABLE {'IF EXISTS ' if if_exists else ''}{_quote(db)}.{_quote(name)}"
            out.append([db, name, ddl, [{"type": "DROP", "id": table_id(db, name),
                                         "table": None}]])
        return self._joined(out)

    def _rename(self, toks, i):
        out = []
        for clause in _split(toks, i):
            to = next(k for k, x in enumerate(clause) if _up(x) == "TO")
            (db, name), _ = self._name(clause, 0)
            (ndb, nname), _ = self._name(clause, to + 1)
            found = self._get(db, name)
            if found is None:
                continue
            self.tables.pop((str(db).lower(), str(name).lower()), None)
            self._put(ndb, nname, found[2])
            ddl = "RENAME TABLE " + self.sql[clause[0][2]:clause[-1][3]]
            out.append([ndb, nname, ddl, [self._change("ALTER", ndb, nname, found[2])]])
        return self._joined(out)

    @staticmethod
    def _joined(out):
        """Every record of a statement of several tables names them all in source.table."""
        if len(out) > 1:
            by_db: dict = {}
            for db, name, _, _ in out:
                by_db.setdefault(db, []).append(name)
            for rec in out:
                rec[1] = ",".join(java_set_order(rec[0], by_db[rec[0]]))
        return [tuple(r) for r in out]

    def _database(self, verb, toks):
        k = 2
        while k < len(toks) and _up(toks[k]) in ("IF", "NOT", "EXISTS"):
            k += 1
        db = toks[k][1]
        if verb == "DROP":
            for key in [key for key in self.tables if key[0] == str(db).lower()]:
                del self.tables[key]
            self.charsets.pop(str(db).lower(), None)
            return [(db, None, self.sql, [])]
        cs = self._table_charset(toks[k + 1:])
        if cs:
            self.charsets[str(db).lower()] = cs
        return [(db, None, self.sql, [])] if verb == "CREATE" else []

    @staticmethod
    def _change(kind, db, name, t) -> dict:
        return {"type": kind, "id": table_id(db, name), "table": t.as_json()}


def _quote(name) -> str:
    return "`" + str(name).replace("`", "``") + "`"
