"""Applying a repair: the undo file first, then the plan in one transaction with sql_log_bin=0,
then the SQL thread started and watched until it has caught up or stops again.

The undo file holds, for every round applied so far, the SQL that puts back each row the round
changed (the rows it inserted deleted, the rows it deleted inserted again with the values read
from the replica), newest round first, so running it as a whole undoes the repair (of course it
does not undo what replication applied afterwards). It is written and flushed to disk before the
round changes anything. Like the plan it is a script for the `mariadb` client: it starts with
`Plan.head()` (quoting.SCRIPT_HEADER and sql_log_bin=0), and its comments and statements are
written through binlog_grammar.output.quoting (see plan.py).
"""
from __future__ import annotations

import datetime as _dt
import os
import time
from typing import Optional

from ..errors import ReplicationError
from ..output.quoting import comment_line
from ..replication import position_key
from .plan import Plan, session
from .status import RepairError, ReplicaStatus, read_sql_error, read_status, refusal


class UndoFile:
    """The undo file of one `repair --apply` run."""

    def __init__(self, path: str, replica: str):
        self.path = path
        self.replica = replica
        self.rounds: list = []  # (round number, what, lines), oldest first

    def add(self, number: int, what: str, plan: Plan):
        self.rounds.append((number, what, plan.undo()))
        self._write()

    def _write(self):
        now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        lines = Plan.head() + [
            comment_line(f"undo of `binlog-grammar repair --apply` on {self.replica}, written {now}"),
            "-- Run it with the SQL thread stopped to put back every row the repair changed "
            "(newest round first).\n"]
        for number, what, undo in reversed(self.rounds):
            lines += [comment_line(f"round {number}: {what}"), *undo]
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.writelines(lines)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)


def apply_plan(conn, plan: Plan):
    """Run the plan's statements in one transaction with sql_log_bin=0. Every row a delete names
    must still be there; otherwise nothing is changed and RepairError says which."""
    session(conn)
    conn.query("START TRANSACTION")
    try:
        for f in plan.ordered():
            conn.query(f.statement())
            if f.kind == "delete":
                _, rows = conn.query("SELECT ROW_COUNT()")
                if not rows or rows[0][0] != b"1":
                    raise RepairError(f"{f.info.name}: the row the repair deletes is no longer on "
                                      "the replica (it changed since the plan was made); nothing "
                                      "was changed")
        conn.query("COMMIT")
    except BaseException as e:
        try:
            conn.query("ROLLBACK")
        except ReplicationError:
            pass
        if isinstance(e, ReplicationError):
            raise RepairError(f"applying the repair failed: {e}; nothing was changed") from None
        raise


def default_undo_path() -> str:
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return os.path.abspath(f"binlog-grammar-repair-undo-{stamp}.sql")


def wait_for_replica(conn, connection_name: Optional[str], timeout: float, past: tuple,
                     poll: float = 0.1):
    """Watch the replica after it was started again: ("caught_up", status, None) once the SQL
    thread runs, has executed the repaired transaction (`past`: the primary's (file, end
    position) of it) and everything else received; ("stopped", status, SqlError) when it
    stops; ("running", status, None) when `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    st: Optional[ReplicaStatus] = None
    while True:
        st = read_status(conn, connection_name)
        if not st.running and st.sql_running != "Preparing":
            return "stopped", st, read_sql_error(conn, st)
        if st.caught_up and position_key(st.relay_source_log_file, st.exec_source_log_pos) >= \
                position_key(*past):
            return "caught_up", st, None
        if time.monotonic() >= deadline:
            return "running", st, None
        time.sleep(poll)


def still_repairable(st: ReplicaStatus, err) -> Optional[str]:
    """Why a stop after a repair is not one to repair again, or None."""
    if err is None or not err.errno:
        return (f"{st.label}'s SQL thread was stopped (without an error) while the repair waited "
                "for it")
    return refusal(st, err)


__all__ = ["UndoFile", "apply_plan", "wait_for_replica", "default_undo_path", "still_repairable"]
