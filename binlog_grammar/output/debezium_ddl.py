"""What a binlog's DDL declared about columns that its rows events do not say, for the Debezium
envelope's schemas: which columns are JSON, and each column's DEFAULT literal.

MariaDB's JSON is LONGTEXT (with a json_valid CHECK): its rows events and TABLE_MAP say BLOB with a
text charset, nothing more, while the connector, which reads each table's DDL, names such a field
`io.debezium.data.Json`; and it writes a column's DEFAULT as the `default` of its field schema.
The DDL is in the binlog too (QUERY_EVENTs): `DeclaredColumns` follows the CREATE TABLE, ALTER
TABLE (ADD, MODIFY, CHANGE, DROP COLUMN, RENAME) and DROP TABLE statements of a stream and keeps,
per table, each column's declared type word and DEFAULT literal. Only the schemas depend on it
(the values are the rows events'), and the statements are only read, never run.
"""
from __future__ import annotations

import re
from typing import Optional

# a backquoted identifier (`` inside it), a '...' string, a "..." string, a comment, a number
# with a fraction or exponent, a word, one other character
_TOKEN = re.compile(r"`((?:[^`]|``)*)`|('(?:[^'\\]|\\.|'')*')|\"(?:[^\"\\]|\\.|\"\")*\""
                    r"|/\*.*?\*/|--[^\n]*|#[^\n]*"
                    r"|(\d+\.\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)"
                    r"|([A-Za-z0-9_$\u0080-\uffff]+)|(\S)", re.S)
_NOT_COLUMNS = {"PRIMARY", "KEY", "INDEX", "UNIQUE", "CONSTRAINT", "FOREIGN", "CHECK", "FULLTEXT",
                "SPATIAL", "PERIOD", "SYSTEM", "VECTOR"}
# what may follow a column's DEFAULT literal
_AFTER_DEFAULT = {"NOT", "NULL", "INVISIBLE", "COMMENT", "ON", "PRIMARY", "UNIQUE", "KEY",
                  "CHECK", "COLLATE", "AUTO_INCREMENT", "REFERENCES", "GENERATED", "AS",
                  "CONSTRAINT", "COLUMN_FORMAT", "STORAGE", "FIRST", "AFTER", "WITH"}


def _tokens(sql: str) -> list:
    """(kind, text): "id" (a backquoted name, unquoted), "str" ('...' as written), "num",
    "word", "p" (punctuation); comments and "..." strings left out."""
    out = []
    for m in _TOKEN.finditer(sql):
        kind = m.lastindex
        if kind == 1:
            out.append(("id", m.group(1).replace("``", "`")))
        elif kind == 2:
            out.append(("str", m.group(2)))
        elif kind == 3:
            out.append(("num", m.group(3)))
        elif kind == 4:
            out.append(("word", m.group(4)))
        elif kind == 5:
            out.append(("p", m.group(5)))
    return out


def token_spans(sql: str) -> list:
    """`_tokens` with where each token is: (kind, text, start, end), for statements that are
    cut into pieces and quoted back (the schema-change records' `ddl`)."""
    out = []
    for m in _TOKEN.finditer(sql):
        kind = {1: "id", 2: "str", 3: "num", 4: "word", 5: "p"}.get(m.lastindex)
        if kind is not None:
            text = m.group(1).replace("``", "`") if kind == "id" else m.group(m.lastindex)
            out.append((kind, text, m.start(), m.end()))
    return out


def _up(tok) -> str:
    return tok[1].upper() if tok[0] == "word" else ""


class Column:
    """What the DDL declared of one column: its type word (upper case), DEFAULT literal (None:
    none, or one that is not a literal) and the numbers in parentheses after the type word
    (FLOAT(7,3): ("7", "3"); none: ())."""

    __slots__ = ("type", "default", "size")

    def __init__(self, type_: str, default, size: tuple = ()):
        self.type = type_
        self.default = default
        self.size = size

    def __eq__(self, other):
        return isinstance(other, Column) and (self.type, self.default, self.size) == (
            other.type, other.default, other.size)

    def __hash__(self):
        return hash((self.type, self.default, self.size))

    def __repr__(self):
        return f"Column({self.type!r}, {self.default!r}, {self.size!r})"

    @property
    def double_float(self) -> bool:
        """A FLOAT with a scale (FLOAT(M,D)): the connector's DDL parser makes it a DOUBLE (its
        schema `double`, its value the 32-bit float the binlog holds, written as a double)."""
        return self.type in ("FLOAT", "FLOAT4") and len(self.size) == 2


BOOL_TYPES = frozenset({"BOOL", "BOOLEAN"})  # TINYINT(1) in the binlog, booleans in Debezium


class DeclaredColumns:
    """(db, table) -> {column name (lower case): Column}, as the stream's DDL declared them."""

    def __init__(self):
        self.tables: dict = {}

    def get(self, db, table) -> dict:
        return self.tables.get((str(db).lower(), str(table).lower()), {})

    def json(self, db, table) -> frozenset:
        """The names (lower case) of the table's columns declared JSON."""
        return frozenset(n for n, c in self.get(db, table).items() if c.type == "JSON")

    def see(self, statement: str, default_db: Optional[str]) -> None:
        """Follow one statement (any: those that are not table DDL are passed over)."""
        try:
            toks = _tokens(statement)
        except (TypeError, re.error):
            return
        words = [_up(t) for t in toks[:8]]
        try:
            if words[:1] == ["CREATE"] and "TABLE" in words:
                self._create(toks, words.index("TABLE") + 1, default_db)
            elif words[:2] == ["ALTER", "TABLE"] or words[:3] == ["ALTER", "ONLINE", "TABLE"]:
                self._alter(toks, words.index("TABLE") + 1, default_db)
            elif words[:2] == ["DROP", "TABLE"] or words[:3] == ["DROP", "TEMPORARY", "TABLE"]:
                self._drop(toks, words.index("TABLE") + 1, default_db)
        except IndexError:  # a statement cut short: nothing learned from it
            return

    # -- statements

    def _name(self, toks, i, default_db):
        """The table name at toks[i] ([IF [NOT] EXISTS] [db.]table): ((db, table), next i)."""
        while _up(toks[i]) in ("IF", "NOT", "EXISTS"):
            i += 1
        first = toks[i][1]
        if i + 2 < len(toks) and toks[i + 1] == ("p", "."):
            return (first.lower(), toks[i + 2][1].lower()), i + 3
        return (str(default_db or "").lower(), first.lower()), i + 1

    def _create(self, toks, i, default_db):
        key, i = self._name(toks, i, default_db)
        if i < len(toks) and _up(toks[i]) == "LIKE":
            src, _ = self._name(toks, i + 1, default_db)
            self.tables[key] = dict(self.tables.get(src, {}))
            return
        if i >= len(toks) or toks[i] != ("p", "("):
            self.tables.pop(key, None)  # CREATE TABLE ... SELECT: types not declared here
            return
        self.tables[key] = dict(_definitions(toks, i))

    def _alter(self, toks, i, default_db):
        key, i = self._name(toks, i, default_db)
        cols = dict(self.tables.get(key, {}))
        for clause in _split(toks, i):
            words = [_up(t) for t in clause]
            j = 1
            while j < len(clause) and words[j] in ("COLUMN", "IF", "NOT", "EXISTS"):
                j += 1
            action = words[0] if words else ""
            if action == "ADD" and j < len(clause) and clause[j] == ("p", "("):
                cols.update(_definitions(clause, j))
            elif action in ("ADD", "MODIFY") and j + 1 < len(clause) and \
                    (words[1] == "COLUMN" or words[j] not in _NOT_COLUMNS):
                cols[clause[j][1].lower()] = _column(clause[j + 1:])
            elif action == "CHANGE" and j + 2 < len(clause):
                cols.pop(clause[j][1].lower(), None)
                cols[clause[j + 1][1].lower()] = _column(clause[j + 2:])
            elif action == "ALTER" and j + 2 < len(clause) and clause[j][1].lower() in cols:
                name = clause[j][1].lower()
                old = cols[name]
                if words[j + 1] == "SET" and _up(clause[j + 2]) == "DEFAULT":
                    cols[name] = Column(old.type, _literal(clause[j + 3:]), old.size)
                elif words[j + 1] == "DROP":
                    cols[name] = Column(old.type, None, old.size)
            elif action == "DROP" and j < len(clause) and words[1] not in _NOT_COLUMNS:
                cols.pop(clause[j][1].lower(), None)
            elif action == "RENAME" and words[1:2] in (["TO"], ["AS"]) and len(clause) > 2:
                new, _ = self._name(clause, 2, key[0])
                self.tables.pop(key, None)
                key = new
        self.tables[key] = cols

    def _drop(self, toks, i, default_db):
        for clause in _split(toks, i):
            if clause:
                key, _ = self._name(clause, 0, default_db)
                self.tables.pop(key, None)


def _split(toks, i) -> list:
    """The comma-separated clauses from toks[i] at parenthesis depth 0 (to the end)."""
    out, cur, depth = [], [], 0
    for t in toks[i:]:
        if t == ("p", "("):
            depth += 1
        elif t == ("p", ")"):
            depth -= 1
        if t == ("p", ",") and depth == 0:
            out.append(cur)
            cur = []
        else:
            cur.append(t)
    out.append(cur)
    return out


def _definitions(toks, i):
    """(column name lower case, Column) of the parenthesised list at toks[i]."""
    depth, cur, defs = 0, [], []
    for t in toks[i:]:
        if t == ("p", "("):
            depth += 1
            if depth == 1:
                continue
        elif t == ("p", ")"):
            depth -= 1
            if depth == 0:
                defs.append(cur)
                break
        if t == ("p", ",") and depth == 1:
            defs.append(cur)
            cur = []
        else:
            cur.append(t)
    for d in defs:
        if len(d) >= 2 and (d[0][0] == "id" or _up(d[0]) not in _NOT_COLUMNS):
            yield d[0][1].lower(), _column(d[1:])


def _column(toks) -> Column:
    """A column definition's tokens after its name: its type word and DEFAULT literal."""
    default = None
    depth = 0
    for k, t in enumerate(toks):
        if t == ("p", "("):
            depth += 1
        elif t == ("p", ")"):
            depth -= 1
        elif depth == 0 and _up(t) == "DEFAULT":
            default = _literal(toks[k + 1:])
            break
    size = ()
    if len(toks) > 2 and toks[1] == ("p", "("):
        end = next((k for k, t in enumerate(toks) if t == ("p", ")")), 0)
        size = tuple(t[1] for t in toks[2:end] if t[0] == "num" or t[0] == "word")
    return Column(_up(toks[0]) if toks else "", default, size)


def _literal(toks):
    """The DEFAULT literal at the head of toks as (kind, text): ("num", "-12.5"), ("str", the
    SQL string as written), ("hex", "ab01"), ("bits", "0101"), ("now", ...) for CURRENT_TIMESTAMP
    and its synonyms; None for NULL, an expression or anything else."""
    if not toks:
        return None
    t, rest = toks[0], toks[1:]
    sign = ""
    if t in (("p", "-"), ("p", "+")) and rest and rest[0][0] in ("num", "word"):
        sign = "-" if t[1] == "-" else ""
        t, rest = rest[0], rest[1:]
    if rest and not (rest[0][0] == "word" and _up(rest[0]) in _AFTER_DEFAULT) \
            and not (t[0] == "word" and rest[0][0] == "str") and rest[0] != ("p", "("):
        return None  # an expression, not a literal
    word = _up(t)
    if t[0] == "num" or (t[0] == "word" and t[1].isdigit()):
        return ("num", sign + t[1])
    if t[0] == "word" and re.fullmatch(r"0[xX][0-9A-Fa-f]+", t[1]):
        return ("hex", t[1][2:].lower())
    if t[0] == "word" and re.fullmatch(r"0[bB][01]+", t[1]):
        return ("bits", t[1][2:])
    if t[0] == "str":
        return ("str", t[1])
    if t[0] == "word" and rest and rest[0][0] == "str":
        body = rest[0][1][1:-1]
        if word == "X":
            return ("hex", body.lower())
        if word == "B":
            return ("bits", body)
        if word.startswith("_"):  # a charset introducer: _binary'..', _utf8mb4'..'
            return ("str", rest[0][1])
        return None
    if word in ("CURRENT_TIMESTAMP", "NOW", "LOCALTIME", "LOCALTIMESTAMP"):
        return ("now", word)
    if word in ("TRUE", "FALSE"):
        return ("num", "1" if word == "TRUE" else "0")
    return None
