"""Hypothesis strategies for the repair tests: a schema, drift on a replica, and a workload on the
primary that runs into the drift; and `check_repair`, which runs one such example on a
`replicas.ReplicaPair` and checks what `binlog-grammar repair` does with it.

A `Scenario` is text only (its repr is valid Python, so a failing example can be pasted into a
test): the replication settings (GTID or file/position, serial or parallel applier, the primary's
binlog_row_image), the setup SQL (three tables: `ta` and `tb` with primary keys of drawn types,
single or composite, `ta` with a unique key and `tb` maybe; `tn` without any key; initial rows),
the drift (statements run on the replica with sql_log_bin=0: rows deleted, changed, inserted) and
the workload (transactions of multi-row INSERT, UPDATE, DELETE over several tables, some changing
a primary key or taking the unique values drifted rows hold).

The generator keeps a model of the primary's rows, so every workload statement succeeds on the
primary, and it makes sure replication trips on every drifted row (a drifted row the workload
never names is out of any repair's reach, and so is, with MINIMAL images, a changed column the
images do not carry, or a changed row of a table without a primary key): a final transaction
deletes, updates or inserts whatever drift the random part left untouched.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
from dataclasses import dataclass

from hypothesis import strategies as st

from .replicas import ADMIN, PASSWORD, REPL, ReplicaPair

DB = "rp_case"
NKEYS = 10  # key indexes per table
NUNIQUE = 6  # unique values


def _text(s: str) -> str:
    return f"_utf8mb4 X'{s.encode('utf-8').hex()}'" if s else "''"


# key kind -> [(column, type, literal of key index i)]
KEY_KINDS = {
    "int": [("id", "INT", lambda i: str(i * 7 - 20))],
    "bigint_unsigned": [("id", "BIGINT UNSIGNED", lambda i: str(2 ** 63 + i * 1000003))],
    "varchar": [("id", "VARCHAR(24) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
                 lambda i: _text(f"k{i}-é😀'"))],
    "char_latin1": [("id", "CHAR(12) CHARACTER SET latin1", lambda i: _text(f"cä{i}"))],
    "varbinary": [("id", "VARBINARY(16)", lambda i: f"X'{bytes([i, 0, 255 - i, 39]).hex()}'")],
    "datetime": [("id", "DATETIME(6)",
                  lambda i: f"'2024-02-{1 + i % 28:02d} {i % 24:02d}:30:00.{i * 1111:06d}'")],
    "decimal": [("id", "DECIMAL(12,3)", lambda i: f"{i * 1.125 - 3:.3f}")],
    "composite": [("ka", "INT", lambda i: str(i // 3)),
                  ("kb", "VARCHAR(8) CHARACTER SET utf8mb4", lambda i: _text(f"b{i % 3}"))],
}


@dataclass(frozen=True)
class RepSettings:
    gtid: bool = True
    parallel: int = 0
    row_image: str = "FULL"

    @property
    def label(self) -> str:
        return (f"{'gtid' if self.gtid else 'file-pos'},{'parallel' if self.parallel else 'serial'},"
                f"{self.row_image}")


ALL_SETTINGS = [RepSettings(g, p, i) for g in (True, False) for p in (0, 4)
                for i in ("FULL", "MINIMAL")]


@dataclass(frozen=True)
class Scenario:
    settings: RepSettings
    setup: tuple
    drift: tuple
    workload: tuple  # transactions, each a tuple of statements

    def reproducer(self) -> str:
        tx = "\n".join("BEGIN; " + " ".join(s + ";" for s in t) + " COMMIT;" for t in self.workload)
        return (f"-- {self.settings.label}\n-- primary:\n" + ";\n".join(self.setup) +
                ";\n-- replica (sql_log_bin=0):\n" + ";\n".join(self.drift) +
                ";\n-- primary:\n" + tx)


class _Table:
    def __init__(self, name, kind, unique):
        self.name, self.kind, self.unique = name, kind, unique
        self.keys = KEY_KINDS[kind] if kind else []
        self.rows = {}  # key index -> unique index or None (the primary's rows)

    def key_cols(self):
        return [k[0] for k in self.keys]

    def key(self, i) -> str:
        lits = [k[2](i) for k in self.keys]
        return lits[0] if len(lits) == 1 else "(" + ", ".join(lits) + ")"

    def key_list(self, idx) -> str:
        cols = self.key_cols()
        target = cols[0] if len(cols) == 1 else "(" + ", ".join(cols) + ")"
        return f"{target} IN ({', '.join(self.key(i) for i in idx)})"


def _create(t: _Table) -> str:
    if t.kind is None:
        return (f"CREATE TABLE {t.name} (a INT NOT NULL, b VARCHAR(20) CHARACTER SET utf8mb4, "
                "c DOUBLE, KEY (a)) ENGINE=InnoDB")
    cols = [f"{c} {ty} NOT NULL" for c, ty, _ in t.keys]
    if t.name == "ta":
        cols += ["u VARCHAR(12) CHARACTER SET utf8mb4 NULL", "v INT", "note VARCHAR(40) CHARACTER SET "
                 "utf8mb4", "amt DECIMAL(10,2)", "f DOUBLE", "body BLOB", "ts TIMESTAMP(3) NULL"]
    else:
        cols += ["u INT NULL", "v INT", "note TEXT CHARACTER SET utf8mb4"]
    keys = [f"PRIMARY KEY ({', '.join(t.key_cols())})"]
    if t.unique:
        keys.append("UNIQUE KEY uk (u)")
    return f"CREATE TABLE {t.name} ({', '.join(cols + keys)}) ENGINE=InnoDB"


def _uval(t: _Table, u) -> str:
    if u is None:
        return "NULL"
    return _text(f"u{u}") if t.name == "ta" else str(100 + u)


def _row(t: _Table, i: int, u, n: int) -> str:
    key = [k[2](i) for k in t.keys]
    if t.name == "ta":
        vals = [_uval(t, u), str(n), _text(f"n{i}.{n} 'é\\\n"), f"{(i * 37 + n) % 1000 - 500}.25",
                repr(i / 7 + n / 3), f"X'{bytes([i, n % 256, 0]).hex() * (1 + n % 5)}'",
                f"'2023-0{1 + n % 9}-1{i % 10} 10:11:12.{n % 1000:03d}'"]
    else:
        vals = [_uval(t, u), str(n), _text(f"tb {i}/{n} ü")]
    return "(" + ", ".join(key + vals) + ")"


def _insert_cols(t: _Table) -> str:
    rest = ["u", "v", "note", "amt", "f", "body", "ts"] if t.name == "ta" else ["u", "v", "note"]
    return ", ".join(t.key_cols() + rest)


@st.composite
def scenarios(draw, settings=None):
    """Scenarios (see the module doc); `settings` fixes the replication settings."""
    s = settings if settings is not None else draw(st.sampled_from(ALL_SETTINGS))
    full = s.row_image == "FULL"
    ta = _Table("ta", draw(st.sampled_from(sorted(KEY_KINDS))), True)
    tb = _Table("tb", draw(st.sampled_from(sorted(KEY_KINDS))), draw(st.booleans()))
    tn_rows = {}  # a -> version (the no-key table; a is unique by construction)
    version = [1]

    def nxt():
        version[0] += 1
        return version[0]

    setup = [_create(ta), _create(tb), _create(_Table("tn", None, False))]
    for t in (ta, tb):
        present = draw(st.lists(st.integers(0, NKEYS - 1), min_size=2, max_size=NUNIQUE, unique=True))
        us = draw(st.lists(st.integers(0, NUNIQUE - 1), min_size=len(present),
                           max_size=len(present), unique=True)) if t.unique else [None] * len(present)
        for i, u in zip(present, us):
            t.rows[i] = u if draw(st.integers(0, 4)) else None
        setup.append(f"INSERT INTO {t.name} ({_insert_cols(t)}) VALUES "
                     + ", ".join(_row(t, i, t.rows[i], 1) for i in sorted(t.rows)))
    for a in range(draw(st.integers(2, 5))):
        tn_rows[a] = 1
    setup.append("INSERT INTO tn (a, b, c) VALUES " + ", ".join(
        f"({a}, {_text(f'r{a}')}, {a / 3!r})" for a in sorted(tn_rows)))

    # -- drift on the replica ---------------------------------------------------------------
    drift, todo = [], {}  # todo: (table, key index) -> what must touch it: delete/touch/insert
    used_u = {t.name: {u for u in t.rows.values() if u is not None} for t in (ta, tb)}
    for _ in range(draw(st.integers(1, 4))):
        choice = draw(st.sampled_from(["delete", "change", "insert", "tn"]))
        t = draw(st.sampled_from([ta, tb]))
        if choice == "tn":
            a = draw(st.sampled_from(sorted(tn_rows)))
            if ("tn", a) not in todo:
                drift.append(f"DELETE FROM tn WHERE a = {a}")
                todo[("tn", a)] = "touch"
            continue
        if choice in ("delete", "change"):
            i = draw(st.sampled_from(sorted(t.rows)))
            if (t.name, i) in todo:
                continue
            if choice == "delete":
                drift.append(f"DELETE FROM {t.name} WHERE {t.key_list([i])}")
                todo[(t.name, i)] = "touch"
            else:
                free = [u for u in range(NUNIQUE) if u not in used_u[t.name]]
                newu = draw(st.sampled_from(free)) if t.unique and free and draw(st.booleans()) \
                    else t.rows[i]
                drift.append(f"UPDATE IGNORE {t.name} SET v = -1, u = {_uval(t, newu)}, note = "
                             f"{_text('drift')} WHERE {t.key_list([i])}")
                todo[(t.name, i)] = "touch" if full else "delete"
        else:
            absent = [i for i in range(NKEYS) if i not in t.rows and (t.name, i) not in todo]
            if not absent:
                continue
            i = draw(st.sampled_from(absent))
            free = [u for u in range(NUNIQUE) if u not in used_u[t.name]]
            u = draw(st.sampled_from(free)) if t.unique and free else None
            drift.append(f"INSERT IGNORE INTO {t.name} ({_insert_cols(t)}) VALUES "
                         + _row(t, i, u, 99))
            todo[(t.name, i)] = "insert"

    # -- the workload on the primary ---------------------------------------------------------
    def covered(name, i, op):
        want = todo.get((name, i))
        if want is None:
            return
        if want == "insert" and op == "insert" or want == "touch" and op in ("update", "delete") \
                or want == "delete" and op == "delete":
            del todo[(name, i)]

    def pick_u(t):
        free = [u for u in range(NUNIQUE) if u not in set(t.rows.values())]
        if not t.unique or not free or not draw(st.integers(0, 3)):
            return None
        return draw(st.sampled_from(free))

    def statement():
        t = draw(st.sampled_from([ta, tb, "tn"]))
        if t == "tn":
            op = draw(st.sampled_from(["insert", "update", "delete"]))
            if op == "insert" or not tn_rows:
                a = max(tn_rows, default=-1) + 1
                tn_rows[a] = nxt()
                return f"INSERT INTO tn (a, b, c) VALUES ({a}, {_text(f'w{a}')}, {a / 7!r})"
            a = draw(st.sampled_from(sorted(tn_rows)))
            covered("tn", a, "update")
            if op == "delete":
                del tn_rows[a]
                return f"DELETE FROM tn WHERE a = {a}"
            tn_rows[a] = nxt()
            return f"UPDATE tn SET b = {_text(f'v{tn_rows[a]}')}, c = c + 1 WHERE a = {a}"
        absent = [i for i in range(NKEYS) if i not in t.rows]
        ops = ["insert"] * bool(absent) + ["update", "delete"] * bool(t.rows) + \
            ["rekey"] * bool(full and absent and t.rows)
        op = draw(st.sampled_from(ops))
        if op == "insert":
            idx = draw(st.lists(st.sampled_from(absent), min_size=1, max_size=3, unique=True))
            rows = []
            for i in idx:
                u = pick_u(t)
                t.rows[i] = u
                covered(t.name, i, "insert")
                rows.append(_row(t, i, u, nxt()))
            return f"INSERT INTO {t.name} ({_insert_cols(t)}) VALUES {', '.join(rows)}"
        idx = draw(st.lists(st.sampled_from(sorted(t.rows)), min_size=1, max_size=3, unique=True))
        if op == "delete":
            for i in idx:
                del t.rows[i]
                covered(t.name, i, "delete")
            return f"DELETE FROM {t.name} WHERE {t.key_list(idx)}"
        if op == "rekey":
            i, j = idx[0], draw(st.sampled_from(absent))
            t.rows[j] = t.rows.pop(i)
            covered(t.name, i, "update")
            covered(t.name, j, "insert")
            sets = ", ".join(f"{c} = {lit(j)}" for c, _, lit in t.keys)
            return f"UPDATE {t.name} SET {sets}, v = v + 1 WHERE {t.key_list([i])}"
        for i in idx:
            covered(t.name, i, "update")
        sets = f"v = v + {nxt()}, note = {_text(f'up{version[0]}')}"
        if len(idx) == 1 and t.unique and draw(st.booleans()):
            u = pick_u(t)
            t.rows[idx[0]] = u
            sets += f", u = {_uval(t, u)}"
        return f"UPDATE {t.name} SET {sets} WHERE {t.key_list(idx)}"

    workload = [tuple(statement() for _ in range(draw(st.integers(1, 3))))
                for _ in range(draw(st.integers(1, 4)))]
    cleanup = []
    for (name, i), want in sorted(todo.items(), key=str):
        if name == "tn":
            if i in tn_rows:
                cleanup.append(f"DELETE FROM tn WHERE a = {i}")
            continue
        t = ta if name == "ta" else tb
        if want == "insert" and i not in t.rows:
            t.rows[i] = None
            cleanup.append(f"INSERT INTO {name} ({_insert_cols(t)}) VALUES {_row(t, i, None, nxt())}")
        elif want in ("touch", "delete") and i in t.rows:
            del t.rows[i]
            cleanup.append(f"DELETE FROM {name} WHERE {t.key_list([i])}")
    if cleanup:
        workload.append(tuple(cleanup))
    return Scenario(s, tuple(setup), tuple(drift), tuple(workload))


# ---------------------------------------------------------------------------------------------
# running one

def repair_cli(pair: ReplicaPair, *extra) -> tuple:
    """`binlog-grammar repair` against the pair's replica, in this process: (exit, stdout, stderr)."""
    from ..cli import main

    os.environ["BINLOG_GRAMMAR_REPAIR_PW"] = PASSWORD
    argv = ["repair", "--port", str(pair.replica.port), "--user", ADMIN, "--password-env",
            "BINLOG_GRAMMAR_REPAIR_PW", "--primary-user", REPL, "--primary-password-env",
            "BINLOG_GRAMMAR_REPAIR_PW", *extra]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


def load(pair: ReplicaPair, sc: Scenario) -> dict:
    """Set the pair up for the scenario and run it: the replica's status afterwards (stopped on
    a conflict, or caught up when replication never tripped)."""
    s = sc.settings
    pair.configure(gtid=s.gtid, parallel=s.parallel, row_image=s.row_image)
    pair.primary.sql(f"CREATE DATABASE {DB}; USE {DB}; " + "; ".join(sc.setup) + ";")
    pair.wait_caught_up()
    pair.replica.sql(f"SET sql_log_bin=0; USE {DB}; " + "; ".join(sc.drift) + ";")
    pair.primary.sql(f"USE {DB}; SET time_zone='+00:00'; " + " ".join(
        "BEGIN; " + " ".join(q + ";" for q in tx) + " COMMIT;" for tx in sc.workload))
    return pair.wait_settled()


def check_repair(pair: ReplicaPair, sc: Scenario, workdir: str) -> dict:
    """Run the scenario and check the repair: a dry run changes nothing; `--apply --no-start`
    followed by its undo file gives back the replica's rows; `--apply` ends with the replica
    running, caught up, every table's CHECKSUM equal to the primary's and no transaction of
    the replica's own in its binlog. The figures of the run, or AssertionError."""
    st = load(pair, sc)
    report = {"stopped": st.get("Slave_SQL_Running") == "No", "rounds": 0, "rows": 0}
    if not report["stopped"]:
        code, out, err = repair_cli(pair)
        assert code == 0 and "nothing to repair" in out, (code, out, err)
    else:
        before = pair.checksums(DB)[1]
        error = st.get("Last_SQL_Error")
        code, out, err = repair_cli(pair)
        assert code == 0, f"dry run: exit {code}: {err}\n{out}"
        assert pair.checksums(DB)[1] == before, "the dry run changed the replica"
        assert pair.status().get("Last_SQL_Error") == error
        undo = os.path.join(workdir, "undo.sql")
        code, out, err = repair_cli(pair, "--apply", "--no-start", "--undo", undo)
        assert code == 0, f"--apply --no-start: exit {code}: {err}\n{out}"
        pair.replica.sql(open(undo, encoding="utf-8").read())
        assert pair.checksums(DB)[1] == before, "the undo file did not restore the replica's rows"
        code, out, err = repair_cli(pair, "--apply", "--max-rounds", "60", "--wait", "60",
                                    "--undo", undo)
        assert code == 0, f"--apply: exit {code}: {err}\n{out}"
        report["rounds"] = out.count("-- round ")
        report["rows"] = sum(int(x) for x in re.findall(r"(\d+) (?:inserted|deleted)",
                                                        out.split("rows repaired")[-1]))
    pair.wait_caught_up()
    primary, replica = pair.checksums(DB)
    assert primary == replica, f"checksums differ: primary {primary}, replica {replica}"
    own = pair.replica.sql("SELECT @@gtid_binlog_pos").strip()
    assert all(p.split("-")[1] != "2" for p in own.split(",") if p), \
        f"the replica logged transactions of its own: {own}"
    return report


def check_types_case(pair: ReplicaPair, case, workdir: str, metadata: str = "NO_LOG") -> str:
    """Every column type family through the repair: a `schema.Case` (one table of any column
    types, a workload) is run on the replica first (sql_log_bin=0), then on the primary, so the
    primary's INSERTs collide with the replica's own copies of the rows (error 1062). The repair
    deletes the replica's rows, whose values it reads back from the server (the undo file must
    restore them exactly) and replication inserts the primary's: a dry run changes nothing, the
    undo file of `--apply --no-start` restores the replica's rows, and `--apply` ends with equal
    CHECKSUMs when the table has a primary key (without one, the replica keeps its duplicates:
    drift replication never trips on). What happened, as a word: ok, no-stop, failed-workload."""
    pair.configure(gtid=True, row_image=case.settings.row_image, metadata=metadata)
    db = "rp_types"
    pair.primary.sql(f"CREATE DATABASE {db}; USE {db}; {case.create};")
    pair.wait_caught_up()
    work = f"SET sql_mode=''; USE {db}; " + " ".join(st.sql + ";" for st in case.statements)
    try:
        pair.replica.sql("SET sql_log_bin=0; " + work)
        pair.primary.sql(work)
    except RuntimeError:
        return "failed-workload"  # a statement the server refuses: nothing to check
    st = pair.wait_settled()
    if st.get("Slave_SQL_Running") != "No":
        return "no-stop"
    before = pair.checksums(db)[1]
    code, out, err = repair_cli(pair)
    assert code == 0, f"dry run: exit {code}: {err}\n{out}"
    assert pair.checksums(db)[1] == before, "the dry run changed the replica"
    undo = os.path.join(workdir, "undo.sql")
    code, out, err = repair_cli(pair, "--apply", "--no-start", "--undo", undo)
    assert code == 0, f"--apply --no-start: exit {code}: {err}\n{out}"
    pair.replica.sql(open(undo, encoding="utf-8").read())
    assert pair.checksums(db)[1] == before, "the undo file did not restore the replica's rows"
    code, out, err = repair_cli(pair, "--apply", "--max-rounds", "60", "--wait", "60",
                                "--undo", undo)
    if "PRIMARY KEY" in case.create:
        assert code == 0, f"--apply: exit {code}: {err}\n{out}"
        primary, replica = pair.checksums(db)
        assert primary == replica, f"checksums differ: primary {primary}, replica {replica}"
    return "ok"


__all__ = ["check_types_case", "Scenario", "RepSettings", "ALL_SETTINGS", "scenarios", "check_repair", "repair_cli",
           "load", "DB", "KEY_KINDS"]
