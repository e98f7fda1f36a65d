"""One run of `binlog-grammar repair`: read the replica's status, locate the failing
transaction, plan its repair, then print the plan (dry run) or apply it round after round until
the replica has caught up (--apply). binlog_grammar.cli.repair builds the options; this module
does the work.

What it prints is a script a DBA may pipe into the `mariadb` client, and the names in it (tables,
error texts that quote them) come from application users: the dry run starts with `Plan.head()`
(quoting.SCRIPT_HEADER first), and every line it prints besides the plan's statements is a
comment made by quoting.comment_line.
"""
from __future__ import annotations

import os
import sys

from ..output.quoting import comment_line
from ..replication import Connection, ReplicationSource, TLSOptions
from .apply import UndoFile, apply_plan, default_undo_path, still_repairable, wait_for_replica
from .locate import (
    FailingTransaction, ReplicaSchemas, decode_transaction, find_transaction, primary_events, relay_events, relay_log_files, relay_position_agrees)
from .plan import LazyConnection, Plan, Planner
from .status import (
    ROW_CONFLICTS, Refused, RepairError, applied_gtids, first_line, parallel_appliers, read_sql_error, read_status, refusal, restart, restart_statements)


def _env(var, option):
    if not var:
        return None
    value = os.environ.get(var)
    if value is None:
        raise Refused(f"the environment variable {var} ({option}) is not set")
    return value


class Repair:
    """One run of the command."""

    def __init__(self, args, out=None):
        self.args = args
        self.out = out or sys.stdout
        self.password = _env(args.password_env, "--password-env")
        self.primary_password = _env(args.primary_password_env, "--primary-password-env")
        self.tls = TLSOptions(args.ssl_mode, args.ssl_ca, args.ssl_cert, args.ssl_key,
                              allow_cleartext=args.enable_cleartext_plugin)
        self.replica_name = f"{args.host}:{args.port}"

    # -- connections -------------------------------------------------------------------------
    def _connection(self, host, port, user, password) -> Connection:
        a = self.args
        return Connection(host, port, user, password, tls=self.tls, connect_timeout=a.connect_timeout,
                          read_timeout=a.read_timeout, server_public_key=a.server_public_key,
                          get_server_public_key=a.get_server_public_key).connect()

    def replica(self) -> Connection:
        return self._connection(self.args.host, self.args.port, self.args.user, self.password)

    def _primary_address(self, st):
        return self.args.primary_host or st.source_host, self.args.primary_port or st.source_port

    def primary(self, st) -> Connection:
        host, port = self._primary_address(st)
        return self._connection(host, port, self.args.primary_user, self.primary_password)

    def say(self, text: str = ""):
        """Print one comment line (`text` without its `-- `; quoting.comment makes it safe)."""
        self.out.write(comment_line(text))
        self.out.flush()

    # -- the run -------------------------------------------------------------------------------
    def run(self) -> int:
        conn = self.replica()
        try:
            st = read_status(conn, self.args.connection_name)
            if st.running:
                self.say(f"{st.label} is running (its SQL thread has no error): nothing to repair")
                return 0
            err = read_sql_error(conn, st)
            reason = refusal(st, err)
            if reason:
                raise Refused(reason)
            tx, plan = self.compute(conn, st, err)
            if not self.args.apply:
                self.print_plan(conn, st, err, tx, plan)
                return 0
            return self.apply_rounds(conn, st, err, tx, plan)
        finally:
            conn.close()

    def locate(self, conn, st, err) -> FailingTransaction:
        applied = applied_gtids(conn, st) if st.gtid_mode else None
        schemas = ReplicaSchemas(conn)
        why = "--from-primary"
        executed = (st.relay_source_log_file, st.exec_source_log_pos)
        if not self.args.from_primary:
            paths, at, why = relay_log_files(conn, st, self.args.relay_log_dir)
            if paths:
                _, rows = conn.query("SELECT @@server_id")
                server_id = int(rows[0][0])
                agrees = relay_position_agrees(paths[at], st.relay_log_pos, st, server_id)
                # from Relay_Log_Pos; when it lies inside the failing transaction, from the
                # first relay log still there (transactions executed already are passed over)
                bar = getattr(self.args, "progress", None)  # cli/repair.py's progress bar
                events = relay_events(paths, st.relay_log_pos, st.relay_source_log_file, server_id,
                                      at, bar) if agrees else \
                    relay_events(paths, 4, st.relay_source_log_file, server_id, 0, bar)
                found = find_transaction(events, err, applied, executed)
                if bar is not None:
                    bar.close()
                if found:
                    tx = decode_transaction(found, schemas)
                    tx.relay_position_inside = not agrees
                    return tx
                why = (f"the relay logs from {st.relay_log_file}:{st.relay_log_pos} do not hold the "
                       f"event at {err.position}")
        if not self.args.primary_user:
            raise Refused(f"{why}: give --primary-user (and --primary-password-env) to read the "
                          "failing transaction from the primary")
        host, port = self._primary_address(st)
        a = self.args
        src = ReplicationSource(host, port, a.primary_user, self.primary_password,
                                file=st.relay_source_log_file, pos=st.exec_source_log_pos,
                                blocking=False, reconnect=False, require_row_format=False,
                                tls=self.tls, connect_timeout=a.connect_timeout,
                                read_timeout=a.read_timeout, server_public_key=a.server_public_key,
                                get_server_public_key=a.get_server_public_key)
        found = find_transaction(primary_events(src), err, applied, executed)
        if not found:
            raise RepairError(f"the primary's binlog from {st.relay_source_log_file}:"
                              f"{st.exec_source_log_pos} does not hold the event at {err.position}")
        return decode_transaction(found, schemas)

    def compute(self, conn, st, err) -> tuple:
        tx = self.locate(conn, st, err)
        failing = tx.failing.name
        if failing.startswith("QUERY"):
            raise Refused(f"the failing event at {tx.failing.text()} is a statement (binlog_format "
                          "STATEMENT or MIXED): the binlog does not hold its rows")
        if tx.statements:
            raise Refused(f"the failing transaction {tx.text()} holds statements besides row events "
                          f"(binlog_format MIXED): {first_line(tx.statements[0], 120)}")
        if not tx.changes:
            raise RepairError(f"the failing transaction {tx.text()} holds no row changes")
        a, b = self.replica(), self.replica()
        primary = LazyConnection(lambda: self.primary(st)) if self.args.primary_user else None
        try:
            plan = Planner(a, b, tx, primary).plan()
        finally:
            for c in (a, b, primary):
                if c is not None:
                    c.close()
        return tx, plan

    # -- output --------------------------------------------------------------------------------
    def describe(self, st, err, tx, plan) -> list:
        events = len({(c.event.source_file, c.event.source_end) for c in tx.changes})
        source = f"relay log {tx.source}" if tx.failing.relay else tx.source
        where = f", connection '{st.connection_name}'" if st.connection_name else ""
        lines = [f"replica {self.replica_name}{where}: stopped with error {err.errno} "
                 f"({ROW_CONFLICTS.get(err.errno, '?')}) at {err.position}",
                 f"  {first_line(err.text, 300)}",
                 f"failing transaction: {tx.text()}, read from {source}"
                 f"{'' if tx.complete else ' (the input ends inside it)'}: {len(tx.changes)} row "
                 f"changes in {events} rows events; failing event {tx.failing.name} at "
                 f"{tx.failing.text()}"]
        counts = plan.counts()
        if counts:
            lines.append("the repair: " + "; ".join(
                f"{t}: {c['inserted']} inserted, {c['deleted']} deleted" for t, c in counts.items())
                + f" (trial runs: {plan.passes}); replication then applies the transaction itself")
        else:
            lines.append("a trial run of the transaction on the replica needs no change now: "
                         "starting the SQL thread applies it")
        return lines

    def print_plan(self, conn, st, err, tx, plan: Plan):
        """The dry run: a script that starts with Plan.head(), before any name is printed."""
        self.out.writelines(plan.head())
        self.say("binlog-grammar repair: dry run, nothing has been changed (--apply applies it)")
        for line in self.describe(st, err, tx, plan):
            self.say(line)
        if plan.fixes:
            self.out.writelines(plan.sql(head=False))
        statements, why = self.restart_plan(conn, st, tx)
        if why:
            self.say(why)
        self.say(f"then: {'; '.join(statements)} (replication applies the failing transaction "
                 "itself)")

    # -- --apply -----------------------------------------------------------------------------------
    def apply_rounds(self, conn, st, err, tx, plan) -> int:
        a = self.args
        undo = UndoFile(a.undo or default_undo_path(), f"{self.replica_name} ({st.label})")
        totals: dict = {}
        rounds = 0
        while True:
            rounds += 1
            what = f"{tx.text()}, error {err.errno} at {err.position}"
            if plan.fixes:
                undo.add(rounds, what, plan)
                applier = self.replica()
                try:
                    apply_plan(applier, plan)
                finally:
                    applier.close()
            for t, c in plan.counts().items():
                tot = totals.setdefault(t, {"inserted": 0, "deleted": 0})
                tot["inserted"] += c["inserted"]
                tot["deleted"] += c["deleted"]
            summary = "; ".join(f"{t} {c['inserted']} inserted, {c['deleted']} deleted"
                                for t, c in plan.counts().items()) or "no row changed"
            self.say(f"round {rounds}: {what}: {summary}")
            if a.no_start:
                statements, why = self.restart_plan(conn, st, tx)
                self.say(f"the SQL thread is left stopped (--no-start); undo file: {undo.path}")
                self.say(f"start replication with: {'; '.join(statements)}"
                         + (f" ({why})" if why else ""))
                return 0
            statements, why = self.restart_plan(conn, st, tx)
            if why:
                self.say(why)
            restart(conn, st, bool(why))
            state, st, err2 = wait_for_replica(conn, a.connection_name, a.wait,
                                               (tx.end.source_file, tx.end.source_end))
            if state == "caught_up":
                self.say(self._final(st, totals, rounds, undo))
                return 0
            if state == "running":
                raise RepairError(f"{st.label} runs but has not caught up in {a.wait:g} s (executed "
                                  f"{st.relay_source_log_file}:{st.exec_source_log_pos}, received "
                                  f"{st.source_log_file}:{st.read_source_log_pos}); "
                                  f"{self._totals(totals)}; undo file: {undo.path}")
            reason = still_repairable(st, err2)
            if reason:
                raise RepairError(f"after {rounds} round(s) ({self._totals(totals)}): {reason}; "
                                  f"undo file: {undo.path}")
            if (err2.errno, err2.source_file, err2.end_log_pos) == \
                    (err.errno, err.source_file, err.end_log_pos):
                raise RepairError(f"{st.label} stopped again on the same event ({err2.position}) "
                                  f"after its repair: {first_line(err2.text, 160)}; undo file: "
                                  f"{undo.path}")
            if rounds >= a.max_rounds:
                raise RepairError(f"{st.label} still stops on row conflicts after {rounds} rounds "
                                  f"(--max-rounds): now {err2.errno} at {err2.position}; "
                                  f"{self._totals(totals)}; undo file: {undo.path}")
            err = err2
            tx, plan = self.compute(conn, st, err)

    def restart_plan(self, conn, st, tx) -> tuple:
        """(statements that start replication again, why not START SLAVE SQL_THREAD or None).
        The SQL thread alone would start inside the failing transaction when Relay_Log_Pos lies
        in it (MariaDB's parallel applier, see locate.relay_position_agrees); when the relay logs
        could not be read here a parallel applier is not trusted either. Then replication
        restarts from the executed position."""
        why = None
        if st.mariadb and tx.relay_position_inside:
            why = "lies inside the failing transaction (MariaDB's parallel applier)"
        elif st.mariadb and not tx.failing.relay and parallel_appliers(conn, st) > 0:
            why = "cannot be checked here (the relay logs were not read; parallel applier)"
        if why:
            why = (f"Relay_Log_Pos {st.relay_log_file}:{st.relay_log_pos} {why}: replication "
                   f"restarts from the executed position {st.relay_source_log_file}:"
                   f"{st.exec_source_log_pos}{' by GTID' if st.gtid_mode else ''}")
        return restart_statements(st, bool(why)), why

    @staticmethod
    def _totals(totals: dict) -> str:
        if not totals:
            return "no row repaired"
        return "rows repaired: " + ", ".join(
            f"{t} {c['inserted'] + c['deleted']} ({c['inserted']} inserted, {c['deleted']} deleted)"
            for t, c in sorted(totals.items()))

    def _final(self, st, totals, rounds, undo) -> str:
        return (f"{st.label} runs and has caught up with what it received "
                f"({st.source_log_file}:{st.read_source_log_pos}) after {rounds} round(s); "
                f"{self._totals(totals)}; undo file: {undo.path if undo.rounds else '(none: no row changed)'}")


__all__ = ["Repair"]
