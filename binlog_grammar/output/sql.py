"""Row changes as replayable SQL, forwards (`sql`) or inverted (`flashback`).

`render_sql(transactions)` turns the row changes of binlog transactions back into the statements
that make them, one transaction at a time, with the binlog's own transaction boundaries:

    -- GTID 0-1-7, mariadb-bin.000001:1204-1788, 2024-05-01 10:00:00 UTC, server 1
    BEGIN;
    INSERT INTO `shop`.`orders` (`id`, `note`) VALUES (5, 'caf\\'e');
    UPDATE `shop`.`orders` SET `id`=6, `note`='x' WHERE `id`=5;
    DELETE FROM `shop`.`orders` WHERE `id`=6;
    COMMIT;

`render_sql(transactions, flashback=True)` undoes them, like `mysqlbinlog --flashback` and
`binlog2sql -B`: the transactions in reverse order, the changes of each in reverse order, each
inverted (an insert becomes a DELETE, a delete an INSERT, an update an UPDATE back to the before
image).

Each item the iterator gives is one or more lines of the script, ending with a newline
(`sys.stdout.writelines(render_sql(...))`). Every name, value and comment from the binlog goes in
through binlog_grammar.output.quoting (see there why it is safe to pipe into a client as root); a
statement naming an identifier that a client line cannot carry (a control character, a
backslash) runs from its hex through PREPARE/EXECUTE. The script starts with
`/*!\\C utf8mb4 */`, which fixes the mysql/mariadb client's own character set whatever
`--default-character-set` says, and the session settings its literals need: `SET NAMES
utf8mb4` (string literals are UTF-8 text), `SET time_zone='+00:00'`
(TIMESTAMP values are written as UTC text) and a non-strict `sql_mode` without
NO_BACKSLASH_ESCAPES (the literals use backslash escapes), with NO_AUTO_VALUE_ON_ZERO (an
AUTO_INCREMENT column keeps a logged 0) and ALLOW_INVALID_DATES (zero dates, zero months and days,
the ENUM error value '' are stored as they were logged).

WHERE clauses name the primary key (`RowChange.primary_key`: the TABLE_MAP's PRIMARY KEY metadata
or a supplied schema) with the values of the image the row has before the statement. Without a
primary key every column is compared (`IS NULL` for NULLs; strings, binary strings and geometries
byte for byte as `CAST(col AS BINARY) = X'..'`, so neither collations nor trailing-space padding
match a different row) and the statement ends with `LIMIT 1`.

Column values become literals with `sql_literal(value, col)`, written in
binlog_grammar.output.sql_literals (which lists the literal of each kind of value).

What is refused, with a SqlGenError (a BinlogError naming file, offset and event type):
- columns without names (binlog_row_metadata=MINIMAL and no schema): their names are `@1`, `@2`, ...
  which no table has;
- an image that holds neither the primary key nor every column, for a WHERE clause;
- in flashback: an update or delete whose before image lacks columns (binlog_row_image=MINIMAL
  or NOBLOB), since the old values of the missing columns are not in the binlog; and a transaction
  holding a statement other than BEGIN/COMMIT/ROLLBACK/XA/SAVEPOINT (statement-based events
  cannot be inverted).

With `render_sql(..., on_refused=f)` (what the `sql` and `flashback` commands do) nothing is
refused with an error: such a transaction becomes a comment saying why (`-- not replayed: ...`,
`-- not inverted: ...`), f gets the SqlGenError, and the script goes on. Rows a stream shows raw
(`open_stream(..., raw_rows=True)`: rows not decoded, StreamEvent.undecoded) are such a comment
where they are, forwards, and refuse their transaction in flashback.

Transactions: one that ended in ROLLBACK in the binlog (its non-transactional changes stayed)
ends in ROLLBACK here too, forwards and inverted; one the input ends inside ('incomplete') is
rolled back; an XA PREPAREd one is rendered as a plain transaction where its XA COMMIT is, and left
out (with a comment) when it was rolled back or is not completed in the input. DDL and other
statements are run where they are in the binlog, in their default database and under the session
settings their QUERY_EVENT logged (output/sql_statements.py); flashback cannot invert them (a
DDL is a comment there, a transaction holding a statement is refused). SAVEPOINT and ROLLBACK TO are applied as
the server applied them (output/savepoints.py): the row changes a ROLLBACK TO undid are neither
replayed nor inverted (a comment says how many), so the output does not depend on the target's
engines.

Known limits (the binlog does not say enough): a MySQL JSON document is written as JSON text, so
its opaque scalars (DECIMAL, DATE, TIME, DATETIME members) come back as JSON numbers and strings;
a generated column's logged value is written like any other unless `omit_columns` names it
(MariaDB ignores it with a warning, MySQL refuses the statement); replayed statements fire the target's triggers and foreign-key
actions, whose effects the binlog already holds as rows; on MySQL 8 a geographic SRID reads the
WKB in the SRS's axis order (`ST_GeomFromWKB` there takes 'axis-order=long-lat'); columns an
INSERT of a MINIMAL image leaves out get the target's defaults again.
"""
from __future__ import annotations

import datetime as _dt
import os
import re
from typing import Iterable, Iterator, Optional

from ..errors import BinlogError
from .quoting import SCRIPT_HEADER, SESSION_SETTINGS, comment, statement_lines
from .savepoints import savepoints_applied
from .spill import Backwards
from .sql_literals import quote_ident, quote_string, sql_literal, where_term
from .sql_statements import replay_lines

__all__ = ["sql_literal", "render_sql", "SqlGenError", "quote_ident", "quote_string",
           "SESSION_SETTINGS"]

UTC = _dt.timezone.utc

class SqlGenError(BinlogError):
    """A row change that cannot become SQL (or cannot be inverted): names file, offset, event."""


# ---------------------------------------------------------------------------------------------
# Statements

class _Rendering:
    def __init__(self, flashback, qualify, db_map, update_set, omit_columns=None, on_refused=None):
        if update_set not in ("all", "changed"):
            raise ValueError("update_set is 'all' or 'changed'")
        self.flashback = flashback
        self.on_refused = on_refused
        self.qualify = qualify
        self.db_map = dict(db_map or {})
        self.update_set = update_set
        self.omit = {str(k): set(v) for k, v in (omit_columns or {}).items()}

    def written(self, ch, image) -> list:
        """Names of the image's columns an INSERT or a SET writes (omit_columns left out)."""
        omit = self.omit.get(f"{ch.db}.{ch.table}", ())
        return [c.name for c in ch.columns if c.name in image and c.name not in omit]

    # -- helpers

    @staticmethod
    def error(ch, message):
        return SqlGenError(f"{ch.db}.{ch.table}: {message}", ch.file, ch.pos, ch.event_type)

    def table(self, ch) -> str:
        t = quote_ident(ch.table)
        if not self.qualify:
            return t
        return f"{quote_ident(self.db_map.get(ch.db, ch.db))}.{t}"

    def statement(self, ch, text: str, columns) -> str:
        """The statement as script lines (joined by newlines, no newline at the end): verbatim,
        or run from its hex (quoting.prepared) when a name in it cannot be carried by a line."""
        names = [ch.table, self.db_map.get(ch.db, ch.db) if self.qualify else "", *columns]
        return "\n".join(statement_lines(text, ";", names))

    def columns(self, ch) -> dict:
        cols = {c.name: c for c in ch.columns}
        unnamed = [c for c in ch.columns if str(c.name) == f"@{int(c.index) + 1}"]
        if unnamed:
            raise self.error(ch, "the binlog does not name the table's columns (they are "
                                 f"{', '.join(str(c.name) for c in unnamed[:4])}"
                                 f"{', ...' if len(unnamed) > 4 else ''}), so no SQL can name them: "
                                 "write the binlog with binlog_row_metadata=FULL, or supply the "
                                 "table's schema (--schema / schemas=)")
        return cols

    def literal(self, ch, cols, name, value) -> str:
        try:
            return sql_literal(value, cols.get(name))
        except ValueError as e:
            raise self.error(ch, f"column {name}: {e}") from None

    def full(self, ch, image) -> bool:
        return image is not None and all(c.name in image for c in ch.columns)

    def where(self, ch, cols, image) -> str:
        """WHERE clause that finds the row whose values `image` holds."""
        pk = list(ch.primary_key or ())
        try:
            if pk and all(n in image for n in pk):
                return " WHERE " + " AND ".join(where_term(n, image[n], cols.get(n), False)
                                                for n in pk)
            if self.full(ch, image):
                return " WHERE " + " AND ".join(where_term(c.name, image[c.name], c, True)
                                                for c in ch.columns) + " LIMIT 1"
        except ValueError as e:
            raise self.error(ch, str(e)) from None
        what = f"the primary key ({', '.join(pk)})" if pk else "a primary key (none is known)"
        raise self.error(ch, f"the row image holds neither {what} nor every column, so no WHERE "
                             f"clause finds its row (columns present: {', '.join(image)})")

    def insert(self, ch, cols, image) -> str:
        names = self.written(ch, image)
        if not names:
            return self.statement(ch, f"INSERT INTO {self.table(ch)} () VALUES ()", ())
        return self.statement(
            ch, f"INSERT INTO {self.table(ch)} ({', '.join(quote_ident(n) for n in names)}) "
                "VALUES (" + ", ".join(self.literal(ch, cols, n, image[n]) for n in names) + ")",
            names)

    def delete(self, ch, cols, image) -> str:
        return self.statement(ch, f"DELETE FROM {self.table(ch)}{self.where(ch, cols, image)}",
                              image)

    def update(self, ch, cols, old, new) -> str:
        """UPDATE the row that `old` finds to the values of `new` (the columns `new` holds)."""
        names = self.written(ch, new)
        if not names:
            return "-- " + comment(f"{os.path.basename(os.fspath(ch.file))}:{ch.pos}: an update "
                                   f"of {ch.db}.{ch.table} that writes no column")
        lits = {n: self.literal(ch, cols, n, new[n]) for n in names}
        if self.update_set == "changed":
            changed = [n for n in names if n not in old
                       or self.literal(ch, cols, n, old[n]) != lits[n]]
            names = changed or names
        sets = ", ".join(f"{quote_ident(n)}={lits[n]}" for n in names)
        return self.statement(ch, f"UPDATE {self.table(ch)} SET {sets}{self.where(ch, cols, old)}",
                              [*names, *old])

    # -- one change

    def forward(self, ch) -> str:
        cols = self.columns(ch)
        if ch.op == "c":
            return self.insert(ch, cols, ch.after)
        if ch.op == "d":
            return self.delete(ch, cols, ch.before)
        if ch.op == "u":
            return self.update(ch, cols, ch.before, ch.after)
        raise self.error(ch, f"unknown row change op {ch.op!r}")

    def check_invertible(self, ch):
        self.columns(ch)
        if ch.op in ("u", "d") and not self.full(ch, ch.before):
            missing = [c.name for c in ch.columns if c.name not in (ch.before or {})]
            kind = "update" if ch.op == "u" else "delete"
            raise self.error(ch, f"cannot flash back this {kind}: its before image lacks "
                                 f"{', '.join(missing[:6])}{', ...' if len(missing) > 6 else ''} "
                                 "(binlog_row_image=MINIMAL or NOBLOB), so the old values are not "
                                 "in the binlog; only binlog_row_image=FULL can be flashed back")

    def backward(self, ch) -> str:
        self.check_invertible(ch)
        cols = self.columns(ch)
        if ch.op == "c":
            return self.delete(ch, cols, ch.after)
        if ch.op == "d":
            return self.insert(ch, cols, ch.before)
        if ch.op == "u":
            now = dict(ch.before)
            now.update(ch.after)
            return self.update(ch, cols, now, ch.before)
        raise self.error(ch, f"unknown row change op {ch.op!r}")


# -- transactions

def _query_text(ev) -> Optional[str]:
    """The statement of a QUERY_EVENT (inflated for MariaDB's QUERY_COMPRESSED_EVENT)."""
    from ..binlog.events import query_text

    if ev.type is None or not hasattr(ev.data, "get") or ev.data.get("query") is None:
        return None
    text = query_text(ev)
    return "(compressed statement that does not inflate)" if text is None else text


def _one_line(text: str, limit: int = 300) -> str:
    """A statement shown in a comment: one line (quoting.comment: no line break, NUL, control
    byte or `*/`), at most `limit` characters."""
    flat = comment(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[:limit] + " ..."


def _statements(tx) -> list:
    """(event, statement text) of the QUERY events of a transaction that change data themselves
    (not BEGIN / COMMIT / ROLLBACK / XA control)."""
    out = []
    for se in getattr(tx, "events", None) or ():
        ev = getattr(se, "event", se)
        if ev.type is None or not ev.type.name.startswith("QUERY"):
            continue
        q = _query_text(ev)
        if q is None:
            continue
        head = q.lstrip().upper()
        if head.rstrip(";").strip() in ("BEGIN", "START TRANSACTION", "COMMIT", "ROLLBACK") \
                or head.startswith("XA "):
            continue
        out.append((ev, q))
    return out


def _tx_items(tx) -> list:
    """The transaction's row changes and data statements in binlog order: ('row', RowChange) and
    ('query', event, text). Without `events`, its `changes` alone."""
    events = getattr(tx, "events", None)
    if not events:
        return [("row", ch) for ch in (getattr(tx, "changes", None) or ())]
    queries = {id(ev): q for ev, q in _statements(tx)}
    items = []
    for se in events:
        ev = getattr(se, "event", se)
        if id(ev) in queries:
            items.append(("query", ev, queries[id(ev)]))
        for ch in getattr(se, "changes", None) or ():
            items.append(("row", ch))
        if getattr(se, "undecoded", None) is not None:  # rows shown raw (stream raw_rows=True)
            items.append(("raw", se))
    return savepoints_applied(items)


def _raw_rows_error(se) -> SqlGenError:
    ev = se.event
    return SqlGenError(f"rows not decoded, so they cannot become SQL: {se.undecoded}", ev.file,
                       ev.offset, ev.name)


def _header(tx, flashback: bool) -> str:
    parts = []
    gtid = getattr(tx, "gtid", None)
    if gtid:
        parts.append(f"GTID {gtid}")
    f = getattr(tx, "file", None)
    if f is not None:
        where = f"{os.path.basename(os.fspath(f))}:{getattr(tx, 'start_pos', '?')}"
        end = getattr(tx, "end_pos", None)
        if end is not None:
            where += f"-{end}"
        parts.append(where)
    ts = getattr(tx, "timestamp", None)
    if ts:
        parts.append(_dt.datetime.fromtimestamp(int(ts), UTC).strftime("%Y-%m-%d %H:%M:%S UTC"))
    sid = getattr(tx, "server_id", None)
    if sid is not None:
        parts.append(f"server {sid}")
    text = ", ".join(parts) or "transaction"
    return f"-- {'flashback of ' if flashback else ''}{comment(text)}\n"


# -- XA: a PREPAREd transaction is rendered where its XA COMMIT is (and dropped at its XA ROLLBACK)

_XA_END = re.compile(r"^\s*XA\s+(COMMIT|ROLLBACK)\s+(.*?)\s*;?\s*$", re.I | re.S)
_XID_PART = re.compile(r"\s*(?:[xX]'([0-9a-fA-F]*)'|'((?:[^'\\]|\\.|'')*)'|(\d+))\s*(?:,|$)")


def _xid_key(format_id, gtrid: bytes, bqual: bytes) -> tuple:
    return int(format_id), bytes(gtrid), bytes(bqual)


def _parse_xid(text: str) -> Optional[tuple]:
    """The (format_id, gtrid, bqual) of an xid as a statement writes it: X'..',X'..',N or
    'gtrid'[,'bqual'[,N]]."""
    parts, pos = [], 0
    text = re.sub(r"(?i)\s+ONE\s+PHASE\s*$", "", text.strip())
    while pos < len(text) and len(parts) < 3:
        m = _XID_PART.match(text, pos)
        if not m:
            return None
        if m[1] is not None:
            parts.append(bytes.fromhex(m[1]))
        elif m[2] is not None:
            parts.append(m[2].replace("''", "'").encode("utf-8"))
        else:
            parts.append(int(m[3]))
        pos = m.end()
    if pos < len(text) or not parts or not isinstance(parts[0], bytes):
        return None
    gtrid = parts[0]
    bqual = parts[1] if len(parts) > 1 and isinstance(parts[1], bytes) else b""
    fmt = parts[-1] if isinstance(parts[-1], int) else 1
    return _xid_key(fmt, gtrid, bqual)


def _xid_text(key: tuple) -> str:
    fmt, gtrid, bqual = key
    return f"X'{gtrid.hex()}',X'{bqual.hex()}',{fmt}"


def _xa_completion(tx, items) -> Optional[tuple]:
    """('COMMIT' or 'ROLLBACK', xid key or the statement text, event) when the transaction is an
    XA COMMIT / XA ROLLBACK of an earlier XA PREPARE (no row changes of its own)."""
    if any(i[0] == "row" for i in items):
        return None
    for se in getattr(tx, "events", None) or ():
        ev = getattr(se, "event", se)
        if ev.type is None or not ev.type.name.startswith("QUERY"):
            continue
        q = _query_text(ev) or ""
        m = _XA_END.match(q)
        if m and not re.search(r"(?i)\bONE\s+PHASE\s*;?\s*$", q):
            return m[1].upper(), _parse_xid(m[2]) or m[2].strip(), ev
    return None


def _xa_prepared(tx) -> Optional[tuple]:
    """The xid key of an XA PREPAREd transaction (from its XA_PREPARE_LOG_EVENT)."""
    for se in reversed(getattr(tx, "events", None) or ()):
        ev = getattr(se, "event", se)
        d = ev.data
        if ev.type is not None and ev.type.name.startswith("XA_PREPARE") and hasattr(d, "get"):
            return _xid_key(d.get("format_id"), d.get("gtrid") or b"", d.get("bqual") or b"")
    return None


def _render_tx(r: _Rendering, tx, items, notes=()) -> list:
    """The lines of one transaction (nothing for one without row changes or statements)."""
    end = getattr(tx, "end", "commit") or "commit"
    queries = [i for i in items if i[0] == "query"]
    if end == "ddl" or not any(i[0] in ("row", "raw") for i in items):
        if not queries:
            return []
        if r.flashback and end != "ddl":
            ev = queries[0][1]
            raise SqlGenError("cannot flash back a transaction of statements (statement-based "
                              f"binlog events): {_one_line(queries[0][2], 120)}", ev.file,
                              ev.offset, ev.name)
        if r.flashback:
            return [_header(tx, True)] + [
                f"-- not inverted (a statement, not row changes): {_one_line(q[2])}\n"
                for q in queries]
        if end == "ddl":  # DDL commits by itself: no BEGIN or COMMIT around it
            out = [_header(tx, False)]
            for q in queries:
                out += _statement(r, q)
            return out
    out = [_header(tx, r.flashback)] + [f"-- {comment(n)}\n" for n in notes]
    if end == "incomplete":
        out.append("-- the binlog ends inside this transaction: it is rolled back\n")
    out.append("BEGIN;\n")
    if r.flashback:  # refuse the first change that cannot be inverted, in binlog order
        for item in items:
            if item[0] == "row":
                r.check_invertible(item[1])
            elif item[0] == "raw":
                raise _raw_rows_error(item[1])
            elif item[0] in ("query", "unknown_savepoint"):
                raise _statement_error(item)
    for item in (reversed(items) if r.flashback else items):
        if item[0] == "row":
            out.append((r.backward(item[1]) if r.flashback else r.forward(item[1])) + "\n")
            continue
        if item[0] == "raw":  # forwards only (flashback refused it above)
            if r.on_refused is None:
                raise _raw_rows_error(item[1])
            out.append(f"-- not replayed: {_one_line(str(_raw_rows_error(item[1])), 1000)}\n")
            continue
        if item[0] == "rolled_back":  # the changes it undid are not in `items` (either way)
            _, ev, text, undone = item
            out.append(f"-- {_one_line(text)}: the server rolled back the {undone} row change"
                       f"{'s' * (undone != 1)} logged after its SAVEPOINT: not "
                       f"{'inverted' if r.flashback else 'replayed'}\n")
        elif item[0] == "unknown_savepoint":  # forwards only (flashback refused it above)
            raise _statement_error(item)
        else:
            out += _statement(r, item)
    out.append("ROLLBACK;\n" if end in ("rollback", "incomplete") else "COMMIT;\n")
    return out


def _statement(r: _Rendering, item) -> list:
    """A statement of the binlog run as its server ran it (output/sql_statements.py)."""
    _, ev, text = item
    return replay_lines(ev, text, r.db_map,
                           lambda message: SqlGenError(message, ev.file, ev.offset, ev.name))


def _statement_error(item) -> SqlGenError:
    """Why a transaction holding this statement cannot be inverted (or replayed: a ROLLBACK TO
    whose SAVEPOINT is not in it)."""
    _, ev, text = item
    if item[0] == "unknown_savepoint":
        why = "rolls back to a savepoint the transaction did not set (in the input), so what it undid is not known"
    else:
        why = "cannot flash back a transaction holding a statement (not row changes)"
    return SqlGenError(f"{why}: {_one_line(text, 120)}", ev.file, ev.offset, ev.name)


def _where_text(tx) -> str:
    f = getattr(tx, "file", None)
    return f"{os.path.basename(os.fspath(f)) if f is not None else '?'}:{getattr(tx, 'start_pos', '?')}"


def _render_or_refuse(r: _Rendering, tx, items, notes=()) -> list:
    """_render_tx; with `on_refused`, a transaction that cannot be rendered becomes a comment
    saying why (and on_refused gets the SqlGenError)."""
    if r.on_refused is None:
        return _render_tx(r, tx, items, notes)
    try:
        return _render_tx(r, tx, items, notes)
    except SqlGenError as e:
        r.on_refused(e)
        verb = "inverted" if r.flashback else "replayed"
        return [_header(tx, r.flashback), f"-- not {verb}: {_one_line(str(e), 1000)}\n"]


def _blocks(r: _Rendering, transactions) -> Iterator[list]:
    """The lines of each transaction, in commit order: an XA PREPAREd transaction comes where
    its XA COMMIT is, and is left out (with a comment) at its XA ROLLBACK or when neither is in
    the input."""
    pending = {}
    for tx in transactions:
        items = _tx_items(tx)
        done = _xa_completion(tx, items)
        if done is not None:
            op, key, ev = done
            held = pending.pop(key, None)
            shown = comment(_xid_text(key) if isinstance(key, tuple) else key)
            if held is None:
                yield [_header(tx, r.flashback),
                       f"-- XA {op} {shown}: its XA PREPARE is not in the input\n"]
            elif op == "COMMIT":
                ptx, pitems = held
                yield _render_or_refuse(r, ptx, pitems, [
                    f"XA transaction {shown}: PREPAREd here, committed at {_where_text(tx)}"])
            else:
                ptx, _ = held
                yield [_header(ptx, r.flashback),
                       f"-- XA transaction {shown}: PREPAREd here, rolled back at "
                       f"{comment(_where_text(tx))}: nothing to "
                       f"{'invert' if r.flashback else 'replay'}\n"]
            continue
        if (getattr(tx, "end", None) or "") == "xa_prepare":
            key = _xa_prepared(tx) or ("?", _where_text(tx))
            pending[key] = (tx, items)
            continue
        yield _render_or_refuse(r, tx, items)
    for key, (tx, _) in pending.items():
        shown = _xid_text(key) if len(key) == 3 else "(unknown xid)"
        yield [_header(tx, r.flashback),
               f"-- XA transaction {shown}: PREPAREd, neither committed nor rolled back in the "
               f"input: not {'inverted' if r.flashback else 'replayed'}\n"]


def render_sql(transactions: Iterable, flashback: bool = False, qualify: bool = True,
               db_map: Optional[dict] = None, update_set: str = "all",
               session: bool = True, omit_columns: Optional[dict] = None,
               on_refused=None) -> Iterator[str]:
    """The SQL script, line by line (each line ends with a newline), that replays the row changes
    of `transactions` (stream.Transaction objects, or anything with `changes` and optionally
    `events`, `gtid`, `file`, `start_pos`, `end_pos`, `timestamp`, `server_id`, `end`) or, with
    `flashback=True`, undoes them.

    qualify: name tables `db`.`table` (else `table` alone); db_map: {"old_db": "new_db"} renames
    databases; update_set: "all" (an UPDATE sets every column of the after image, so an ON UPDATE
    CURRENT_TIMESTAMP column keeps its logged value) or "changed" (only the columns whose value
    changed); session: start with the SET statements the literals need (quoting.SCRIPT_HEADER);
    omit_columns: {"db.table": ["col", ...]} columns no INSERT or UPDATE writes (generated
    columns, which the binlog logs but a server will not take a value for; WHERE clauses still
    compare them when there is no primary key).

    Transactions ended by ROLLBACK in the binlog (their non-transactional changes stayed) end in
    ROLLBACK here too; one the input ends inside ('incomplete') is rolled back. An XA PREPAREd
    transaction is rendered as a plain transaction where its XA COMMIT is, and left out when it was
    rolled back or not completed in the input. DDL and other statements are run as their server
    ran them (output/sql_statements.py); in flashback a DDL is a comment.

    Errors are SqlGenError (a BinlogError naming the file, offset and event type of the change).
    With flashback every transaction is rendered before the first line is given, so a refused
    change never leaves half a script (each one's text waits in a temporary file, output/spill.py,
    so memory stays flat; an item is then one transaction's lines); forwards, lines come as
    transactions are read.

    on_refused: a function of a SqlGenError. When given, nothing is refused with an error: a
    transaction that cannot be rendered (or inverted) becomes a comment saying why, `-- not
    replayed: ...` / `-- not inverted: ...`, the function is called with the error, and the
    script goes on; rows a stream shows raw (stream.StreamEvent.undecoded) become such a comment
    where they are, forwards, and refuse their transaction in flashback. The `sql` and
    `flashback` commands use this, and say on stderr how many transactions are comments.
    """
    r = _Rendering(flashback, qualify, db_map, update_set, omit_columns, on_refused)
    blocks = _blocks(r, transactions)
    if not flashback:
        yield from _script_header(session, flashback)
        for lines in blocks:
            yield from lines
        return
    with Backwards() as spill:  # each transaction's inverse on disk as it is made (output/spill.py)
        for lines in blocks:
            spill.add("".join(lines))
        yield from _script_header(session, flashback)
        yield from spill.lines_backwards()


def _script_header(session: bool, flashback: bool) -> Iterator[str]:
    if session:
        yield f"-- {'flashback' if flashback else 'replay'} script written by binlog-grammar\n"
        for s in SCRIPT_HEADER:
            yield s + "\n"
