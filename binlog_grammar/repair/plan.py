"""The repair of one failing transaction: which replica rows to insert and which to delete.

The repair is computed for the whole transaction at once, every event and every row, in
transaction order, by a trial run on the replica itself inside a transaction that is always
rolled back (sql_log_bin=0, so nothing is logged either): the fixes found so far are applied,
then each row change of the failing transaction is run as the SQL thread would run it, and
before each one the planner checks what the SQL thread would check:

- an UPDATE or DELETE must find its row: by the primary key when the table has one, otherwise by
  every column of the before-image byte for byte. When it is missing, the fix is to insert the
  row as the primary had it (the before-image; with binlog_row_image MINIMAL or NOBLOB the
  columns the image lacks are read from the primary by primary key);
- an INSERT, and an UPDATE's new row, must not collide with another row on the primary key or
  on any unique key of the replica's table. Each row in the way is found (with the server's own
  collations) and the fix is to delete it: the replica row as it stood before the transaction,
  found again on a second connection that sees only committed data.

Because the state is the server's own, a later row of the transaction sees what the earlier ones
did (a row inserted then updated, a key freed then reused). A fix found in the middle of a run is
applied there and the run goes on; then the whole run is repeated with every fix applied first,
as the real repair will be, until a run needs no new fix (bounded). Nothing is skipped: the plan
only makes the replica's rows what the transaction expects, and replication then applies the
transaction itself.

The plan and the undo file are scripts a DBA pipes into the `mariadb` client as root, and every
name and value in them came from an application user. They start with quoting.SCRIPT_HEADER
(`/*!\\C utf8mb4 */`: the client's own character set, whatever --default-character-set says),
every comment goes through quoting.comment, and a statement naming a table or column that a
client line cannot carry (a line break, a backslash, ...) runs from its hex (quoting.prepared).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..errors import ReplicationError
from ..output.quoting import SCRIPT_HEADER, SESSION_SETTINGS, comment_line, ident, statement_lines
from .locate import Change, FailingTransaction
from .status import Refused, RepairError
from .tables import (
    TableInfo, binlog_val, exact_term, key_term, key_text, read_expr, row_text, server_val)

OPS = {"c": "insert", "u": "update", "d": "delete"}
SESSION = (*SESSION_SETTINGS, "SET SESSION foreign_key_checks=0;")
NO_LOG = "SET SESSION sql_log_bin=0;"
# the first lines of the plan and of the undo file
HEAD = (*SCRIPT_HEADER, NO_LOG, "SET SESSION foreign_key_checks=0;")
MAX_PASSES = 12


@dataclass
class Step:
    """A row change of the failing transaction with its table and its images as SQL values."""

    change: Change
    info: TableInfo
    before: Optional[dict]
    after: Optional[dict]

    @property
    def text(self) -> str:
        ch = self.change
        return f"the {OPS[ch.op]} at {ch.event.text()}, row {ch.row}"


@dataclass
class Fix:
    """One row the repair inserts or deletes, and why."""

    kind: str  # insert, delete
    info: TableInfo
    row: dict  # name -> Val: the row inserted, or the replica's row deleted
    step: Step
    why: str
    filled: list = field(default_factory=list)  # insert: columns read from the primary
    gtid: Optional[str] = None

    def match(self) -> str:
        """WHERE clause that finds this row: its primary key, else all its columns exactly."""
        return where_row(self.info, self.row)

    def statement(self) -> str:
        """The statement (no delimiter) run on a connection; `script_lines` for a script."""
        if self.kind == "delete":
            return f"DELETE FROM {self.info.sql_name}{self.match()}"
        return insert_sql(self.info, self.row)

    def undo(self) -> str:
        if self.kind == "delete":
            return insert_sql(self.info, self.row)
        return f"DELETE FROM {self.info.sql_name}{self.match()}"

    def comment(self, replaced: Optional[dict] = None) -> str:
        """Why the row is changed: raw text (`script_lines` makes it a comment line)."""
        where = f"{self.step.text}{f', GTID {self.gtid}' if self.gtid else ''}"
        head = f"{self.info.name} ({key_text(self.info, self.row)}): "
        if self.kind == "delete":
            return (head + f"the replica's row {row_text(self.info, self.row)} {self.why} "
                    f"{where}: deleted")
        text = head + f"{self.why}, which {where} needs: inserted as the primary had it"
        if self.filled:
            text += f" ({', '.join(self.filled)} read from the primary)"
        if replaced is not None:
            text += f"; it replaces the replica's row {row_text(self.info, replaced)}"
        return text


def script_lines(info: TableInfo, statement: str) -> list:
    """A statement on the table as lines of a script (newlines included): as it is, or run from
    its hex when a name of the table cannot be carried by a client line."""
    return [ln + "\n" for ln in statement_lines(statement, ";", info.names)]


def where_row(info: TableInfo, row: dict) -> str:
    pk = info.primary_key
    if pk and all(n in row for n in pk):
        return " WHERE " + " AND ".join(key_term(n, row[n]) for n in pk)
    names = [c.name for c in info.columns if not c.generated and c.name in row]
    return " WHERE " + " AND ".join(exact_term(n, row[n]) for n in names) + " LIMIT 1"


def insert_sql(info: TableInfo, row: dict) -> str:
    names = [n for n in info.written if n in row]
    return (f"INSERT INTO {info.sql_name} ({', '.join(ident(n) for n in names)}) VALUES ("
            + ", ".join(row[n].sql for n in names) + ")")


def select_rows(conn, info: TableInfo, where: str, names=None) -> list:
    """Rows of the table, each {column: Val} of the columns `names` (default: all written)."""
    return [row for row, _ in select_flagged(conn, info, where, (), names)]


def select_flagged(conn, info: TableInfo, where: str, flags, names=None) -> list:
    """Rows of the table as (row, [text of each of the `flags` expressions])."""
    cols = [info.column(n) for n in (names or info.written)]
    exprs = [read_expr(c) for c in cols] + list(flags)
    _, rows = conn.query(f"SELECT {', '.join(exprs)} FROM {info.sql_name}{where}")
    return [({c.name: server_val(v, c) for c, v in zip(cols, r)},
             [None if v is None else bytes(v).decode() for v in r[len(cols):]]) for r in rows]


def session(conn, log: bool = False):
    """The session settings every repair connection runs with."""
    for s in SESSION + (() if log else (NO_LOG,)):
        conn.query(s.rstrip(";"))


@dataclass
class Plan:
    tx: FailingTransaction
    fixes: list
    passes: int

    def counts(self) -> dict:
        """{"db.table": {"inserted": n, "deleted": m}} (raw names: a comment quotes them)."""
        out = {}
        for f in self.fixes:
            c = out.setdefault(f.info.name, {"inserted": 0, "deleted": 0})
            c["inserted" if f.kind == "insert" else "deleted"] += 1
        return out

    def ordered(self) -> list:
        """Deletes first (a row in the way goes before the row that replaces it), then inserts."""
        return [f for f in self.fixes if f.kind == "delete"] + \
            [f for f in self.fixes if f.kind == "insert"]

    @staticmethod
    def head() -> list:
        """The lines a plan or undo script starts with: quoting.SCRIPT_HEADER, sql_log_bin=0,
        no foreign key checks."""
        return [s + "\n" for s in HEAD]

    def sql(self, head: bool = True) -> list:
        """The repair as SQL lines: a comment per row, one transaction, sql_log_bin=0 (`head`:
        starting with `Plan.head()`; without it, the caller printed that first)."""
        deleted = {(f.info.key, key_text(f.info, f.row)): f.row for f in self.fixes
                   if f.kind == "delete"}
        out = (self.head() if head else []) + ["BEGIN;\n"]
        for f in self.ordered():
            replaced = deleted.get((f.info.key, key_text(f.info, f.row))) \
                if f.kind == "insert" else None
            out += [comment_line(f.comment(replaced)), *script_lines(f.info, f.statement())]
        return out + ["COMMIT;\n"]

    def undo(self) -> list:
        """SQL that puts back every row the repair changes: the inserted rows deleted, the deleted
        rows inserted again; one transaction, for a script that starts with `Plan.head()`."""
        out = ["BEGIN;\n"]
        for f in reversed(self.ordered()):
            what = "inserted by the repair" if f.kind == "insert" else "deleted by the repair"
            out += [comment_line(f"{f.info.name} ({key_text(f.info, f.row)}): {what}"),
                    *script_lines(f.info, f.undo())]
        return out + ["COMMIT;\n"]


class LazyConnection:
    """A connection made (and given the repair's session settings, without sql_log_bin) the
    first time a query needs it: the primary, which only a before-image lacking columns needs."""

    def __init__(self, factory):
        self.factory = factory
        self.conn = None

    def query(self, sql: str):
        if self.conn is None:
            self.conn = self.factory()
            session(self.conn, log=True)
        return self.conn.query(sql)

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class Planner:
    """Computes the Plan of a failing transaction. `trial`: a connection to the replica that runs
    the trial (its transaction is always rolled back); `state`: another connection to the
    replica, which sees the rows as they are committed; `primary`: a connection to the primary
    with the session settings made (a LazyConnection), needed only when before-images lack
    columns."""

    def __init__(self, trial, state, tx: FailingTransaction, primary=None, max_passes=MAX_PASSES):
        self.a, self.b, self.primary = trial, state, primary
        self.tx = tx
        self.max_passes = max_passes
        self.steps = [self._step(ch) for ch in tx.changes]

    # -- the transaction's rows as steps ------------------------------------------------------
    def _step(self, ch: Change) -> Step:
        info = self.tx.tables.get((ch.db, ch.table))
        if info is None:
            raise Refused(f"table {ch.name}, which the failing transaction changes, does not exist "
                          "on the replica")
        if not info.transactional:
            raise Refused(f"table {ch.name} uses {info.engine or 'an engine'}, which is not "
                          "transactional: its rows cannot be repaired in one transaction")
        if info.triggers:
            raise Refused(f"table {ch.name} has triggers, which the repair's statements would fire "
                          "on the replica (replication does not)")
        if len(info.columns) != len(ch.columns):
            raise Refused(f"table {ch.name} has {len(info.columns)} columns on the replica and "
                          f"{len(ch.columns)} in the binlog: the row images cannot be matched")
        cols = {c.name: c for c in ch.columns}
        generated = {c.name for c in info.columns if c.generated}

        def vals(image):
            if image is None:
                return None
            try:
                return {n: binlog_val(v, cols.get(n)) for n, v in image.items() if n not in generated}
            except ValueError as e:
                raise RepairError(f"{ch.name} at {ch.event.text()}: {e}") from None
        return Step(ch, info, vals(ch.before), vals(ch.after))

    # -- planning --------------------------------------------------------------------------------
    def plan(self) -> Plan:
        session(self.a)
        session(self.b)
        fixes: list = []
        for n in range(1, self.max_passes + 1):
            new = self._pass(fixes)
            fixes += new
            if not new:
                return Plan(self.tx, fixes, n)
        raise RepairError(f"the repair of {self.tx.text()} did not settle in {self.max_passes} "
                          f"trial runs ({len(fixes)} rows so far)")

    def _pass(self, fixes) -> list:
        new: list = []
        self.a.query("START TRANSACTION")
        try:
            for f in [f for f in fixes if f.kind == "delete"] + \
                     [f for f in fixes if f.kind == "insert"]:
                self._run_fix(f, fixes, new)
            for step in self.steps:
                self._run_step(step, fixes, new)
        finally:
            self.a.query("ROLLBACK")
        return new

    def _exec(self, sql: str, what: str):
        try:
            self.a.query(sql)
        except ReplicationError as e:
            raise RepairError(f"the trial run failed at {what}: {e}") from None

    def _run_fix(self, f: Fix, fixes, new):
        if f.kind == "insert":
            for row, key in self._conflicts(f.info, f.row, None):
                self._remove(f.step, row, key, fixes, new, inserted=f)
        self._exec(f.statement(), f"the repair of {f.info.name} ({key_text(f.info, f.row)})")

    def _before_where(self, step: Step) -> str:
        info, bi = step.info, step.before
        if info.primary_key and all(n in bi for n in info.primary_key):
            return " WHERE " + " AND ".join(key_term(n, bi[n]) for n in info.primary_key)
        return " WHERE " + " AND ".join(exact_term(n, v) for n, v in bi.items())

    def _run_step(self, step: Step, fixes, new):
        info, ch = step.info, step.change
        where = None
        current = None
        if ch.op in ("u", "d"):
            where = self._before_where(step)
            rows = select_rows(self.a, info, where + " LIMIT 1")
            if rows:
                current = rows[0]
            else:
                fix = self._insert_fix(step)
                self._run_fix(fix, fixes, new)
                new.append(fix)
                current = fix.row
        if ch.op in ("c", "u"):
            row = dict(current or {})
            row.update(step.after)
            for other, key in self._conflicts(info, row, where):
                self._remove(step, other, key, fixes, new)
        t = info.sql_name
        if ch.op == "c":
            sql = insert_sql(info, step.after)
        elif ch.op == "u":
            names = [n for n in info.written if n in step.after]
            if not names:
                return
            sets = ", ".join(f"{ident(n)}={step.after[n].sql}" for n in names)
            sql = f"UPDATE {t} SET {sets}{where} LIMIT 1"
        else:
            sql = f"DELETE FROM {t}{where} LIMIT 1"
        self._exec(sql, step.text)

    def _conflicts(self, info: TableInfo, row: dict, exclude: Optional[str]) -> list:
        """Rows (of the trial's current state) other than the one `exclude` finds that collide
        with `row` on the primary key or a unique key: [(row, key name)]."""
        terms, names = [], []
        for name, parts in info.keys():
            if all(c in row and not row[c].null for c, _ in parts):
                terms.append("(" + " AND ".join(key_term(c, row[c], p) for c, p in parts) + ")")
                names.append(name)
        if not terms:
            return []
        where = " WHERE (" + " OR ".join(terms) + ")"
        if exclude:
            where += f" AND NOT ({exclude[len(' WHERE '):]})"
        flags = [f"IF({t}, 1, 0)" for t in terms]
        out = []
        for r, got in select_flagged(self.a, info, where, flags):
            hits = [n for n, flag in zip(names, got) if flag == "1"]
            out.append((r, hits[0] if hits else names[0]))
        return out

    def _remove(self, step: Step, row: dict, key: str, fixes, new, inserted: Optional[Fix] = None):
        """Delete a row in the way, as the replica row it was before the transaction."""
        info = step.info if inserted is None else inserted.info
        initial = select_rows(self.b, info, where_row(info, row))
        if not initial:
            made = "a row the repair inserts" if any(
                f.kind == "insert" and f.info.key == info.key and
                key_text(info, f.row) == key_text(info, row) for f in fixes + new) else \
                "a row the transaction itself wrote"
            what = step.text if inserted is None else \
                f"the row {inserted.step.text} needs ({key_text(info, inserted.row)})"
            raise RepairError(f"cannot repair {self.tx.text()}: {what} collides on {key} with "
                              f"{made} ({key_text(info, row)}), not with a row of the replica")
        first = initial[0]
        why = f"conflicts on {'the primary key' if key == 'PRIMARY' else 'unique key ' + key} with"
        target = step if inserted is None else inserted.step
        if inserted is not None:
            why = f"is in the way (on {'the primary key' if key == 'PRIMARY' else 'unique key ' + key}) " \
                  f"of a row inserted for"
        fix = Fix("delete", info, first, target, why, gtid=self.tx.gtid)
        self._exec(f"DELETE FROM {info.sql_name}{where_row(info, row)}"
                   + ("" if where_row(info, row).endswith("LIMIT 1") else " LIMIT 1"),
                   f"the removal of {info.name} ({key_text(info, row)})")
        new.append(fix)

    def _insert_fix(self, step: Step) -> Fix:
        info, ch = step.info, step.change
        row = dict(step.before)
        missing = [n for n in info.written if n not in row]
        filled = []
        why = "missing on the replica"
        if missing:
            pk = info.primary_key
            if not pk or not all(n in row for n in pk):
                raise RepairError(f"{ch.name}: the before-image at {ch.event.text()} lacks "
                                  f"{', '.join(missing)} and the table has no primary key to "
                                  "read them from the primary with")
            if self.primary is None:
                raise Refused(f"{ch.name}: the before-image at {ch.event.text()} lacks "
                              f"{', '.join(missing[:6])} (binlog_row_image MINIMAL or NOBLOB): "
                              "give --primary-user (and --primary-password-env) to read them "
                              "from the primary")
            got = select_rows(self.primary, info, " WHERE " + " AND ".join(
                key_term(n, row[n]) for n in pk), names=missing)
            if got:
                row.update(got[0])
                filled = missing
            else:
                why += (f" (the primary no longer has it either: {', '.join(missing[:6])} take "
                        "their defaults)")
        return Fix("insert", info, row, step, why, filled, gtid=self.tx.gtid)


__all__ = ["Plan", "Planner", "LazyConnection", "Fix", "Step", "select_rows", "select_flagged",
           "session", "where_row", "insert_sql", "script_lines", "SESSION", "NO_LOG", "HEAD"]
