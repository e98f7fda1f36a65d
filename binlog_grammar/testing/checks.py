"""The checks of one case's run (binlog_grammar.testing.differential), each adding the mismatches it
finds to the case's `Result.problems`:

- the Python API: the stream, iter_row_changes and the construct path agree exactly, and the
  changes of each statement, applied to the table as SELECT showed it before the statement, give
  the table SELECT shows after it, each image holding the columns binlog_row_image says;
- `dump --format jsonl --rows-only`: the JSON forms of the values SELECT showed;
- `dump` (text) against `mariadb-binlog -vv`, when an oracle module is given;
- `sql` replayed into a second database gives the source's rows; with FULL images the flashback
  script empties it again.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
from collections import defaultdict
from typing import TYPE_CHECKING

from .selects import SESSION, ColInfo, canon, expected_value, image_columns, render, run_script, short

if TYPE_CHECKING:
    from .differential import DiffServer, Result, Run
    from .schema import Case


class _Wild:
    def __repr__(self):
        return "<not in the image>"


WILD = _Wild()


def _key_of(c: ColInfo, full: bool) -> str:
    return c.name if full else f"@{c.position}"


def _rows(run: Run, snap, full: bool) -> list:
    return [{c.name: expected_value(c, text, full) for c, text in zip(run.columns, row)}
            for row in snap]


def _decoded_changes(files, schemas=None):
    """Changes by the stream (what the CLI reads), iter_row_changes, and the construct path."""
    from ..binlog.reader import BinlogFile, inner_events
    from ..binlog.rows import RowDecoder, iter_row_changes
    from ..binlog.stream import open_stream

    stream = open_stream([str(f) for f in files], schemas=schemas)
    txs = list(stream.transactions())
    fallbacks = {os.path.basename(str(p)): dict(c) for p, c in
                 (getattr(stream, "fallbacks", None) or {}).items() if c}
    api = list(iter_row_changes([str(f) for f in files], schemas=schemas))
    slow = []
    for path in files:
        dec = RowDecoder(schemas, fast=False)
        bf = BinlogFile(str(path), fast=False)
        for ev in bf:
            evs = [ev]
            if ev.type is not None and any(d.target == "events" for d in ev.type.decode):
                evs += list(inner_events(ev, bf.state))
            for e in evs:
                if e.type is None:
                    continue
                if e.type.name == "TABLE_MAP_EVENT":
                    dec.table_map(e)
                elif e.type.row_op:
                    slow += dec.changes(e)
    return txs, api, slow, fallbacks


def _change_key(ch):
    def img(d):
        return None if d is None else tuple(sorted((k, canon(v)) for k, v in d.items()))

    return (ch.op, ch.db, ch.table, ch.pos, img(ch.before), img(ch.after))


def check_run(server: DiffServer, case: Case, run: Run, res: Result):
    settings = case.settings
    full = settings.metadata == "FULL"
    cols = run.columns
    by_key = {_key_of(c, full): c for c in cols}
    txs, api, slow, fallbacks = _decoded_changes(run.files)
    if fallbacks:  # a server's binlog is valid: the generated readers must take all of it
        res.problems.append(f"the fast readers fell back to the construct structs: {fallbacks}")
    changes = [ch for tx in txs for ch in tx.changes]
    res.changes = len(changes)
    # the three Python paths agree exactly
    ref = [_change_key(ch) for ch in changes]
    for label, other in (("iter_row_changes", api), ("the construct path (fast=False)", slow)):
        keys = [_change_key(ch) for ch in other]
        if keys != ref:
            bad = next((i for i, (a, b) in enumerate(zip(keys, ref)) if a != b), min(len(keys), len(ref)))
            res.problems.append(f"{label} gives other changes than the stream: {len(keys)} vs "
                                f"{len(ref)}, first difference at change {bad}")
    # changes by statement
    per_stmt = defaultdict(list)
    for tx in txs:
        chs = tx.changes
        if not chs:
            continue
        k = int(tx.gtid.rsplit("-", 1)[1]) - run.base_seq if tx.gtid else -1
        if not 0 <= k < len(case.statements):
            res.problems.append(f"row changes in a transaction of no statement (GTID {tx.gtid})")
            continue
        per_stmt[k] += chs
    expected_images = {}  # id(change) -> (before row, after row) as SELECT showed them
    for k, st in enumerate(case.statements):
        prev, cur = run.snapshots[k], run.snapshots[k + 1]
        _check_statement(res, settings, run, k, st, _rows(run, prev, full), _rows(run, cur, full),
                         per_stmt.get(k, []), by_key, expected_images)
    _check_jsonl(res, run, changes, expected_images, by_key)
    if server.oracle is not None:
        _check_oracle(res, server.oracle, run)
    _check_replay(res, server, case, run, full)


def _named(image, by_key):
    return {by_key[k].name: v for k, v in image.items() if k in by_key}


def _matches(row, image):
    return all(canon(row.get(n, WILD)) == canon(v) or row.get(n) is WILD for n, v in image.items())


def _diff(row, image):
    return [n for n, v in image.items() if row.get(n) is not WILD and canon(row.get(n)) != canon(v)]


def _nearest(rows, image):
    if not rows:
        return None, list(image)
    best = min(rows, key=lambda r: len(_diff(r, image)))
    return best, _diff(best, image)


def _describe(run, where, row, image, names):
    types = {c.name: c.column_type for c in run.columns}
    return "; ".join(f"{where} {n} ({types.get(n)}): SELECT {short(row.get(n) if row else None)}, "
                     f"decoded {short(image.get(n))}" for n in names)


def _check_statement(res, settings, run, k, st, prev, cur, chs, by_key, expected_images):
    label = f"statement {k + 1} ({st.kind})"
    if prev is None or cur is None:
        res.problems.append(f"{label}: no snapshot")
        return
    pool = list(prev)
    produced = []  # (row, change, decoded names)
    for i, ch in enumerate(chs):
        unknown = [k2 for img in (ch.before, ch.after) if img for k2 in img if k2 not in by_key]
        if unknown:
            res.problems.append(f"{label} change {i}: columns {unknown} the table has not")
        want_before, want_after = image_columns(settings, run.columns, ch.op, st.named)
        before = None if ch.before is None else _named(ch.before, by_key)
        after = None if ch.after is None else _named(ch.after, by_key)
        for side, got, want in (("before", before, want_before), ("after", after, want_after)):
            if (got is None) != (want is None):
                res.problems.append(f"{label} change {i} ({ch.op}): {side} image "
                                    f"{'missing' if got is None else 'unexpected'}")
            elif got is not None and set(got) != want:
                res.problems.append(f"{label} change {i} ({ch.op}): {side} image holds "
                                    f"{sorted(got)}, expected {sorted(want)} "
                                    f"(binlog_row_image={settings.row_image})")
        old = None
        if before is not None:
            res.values += len(before)
            j = next((j for j, r in enumerate(pool) if _matches(r, before)), None)
            if j is None:
                old, bad = _nearest(pool, before)
                res.wrong += len(bad)
                res.problems.append(f"{label} change {i} ({ch.op}): the before image matches no "
                                    f"row; " + _describe(run, "before", old, before, bad))
                if old is not None:
                    pool.remove(old)
                old = dict(old or {})
            else:
                old = pool.pop(j)
                expected_images[id(ch)] = (old, None)
        if after is not None:
            res.values += len(after)
            if ch.op == "u":
                new = dict(old or {})
                new.update(after)
            else:
                new = {c.name: after.get(c.name, WILD) for c in run.columns}
            produced.append((new, ch, set(after)))
    # the rows the statement did not touch, then the rows it made, against the SELECT
    left = {}
    for r in cur:
        left.setdefault(_row_key(r), []).append(r)
    for r in pool:
        key = _row_key(r)
        if left.get(key):
            left[key].pop()
        else:
            res.problems.append(f"{label}: a row the decoded changes leave as it was is not in the "
                                f"table: {short(r, 400)}")
    unmatched = []
    for new, ch, names in produced:
        if any(v is WILD for v in new.values()):
            unmatched.append((new, ch, names))
            continue
        key = _row_key(new)
        if left.get(key):
            row = left[key].pop()
            b = expected_images.get(id(ch), (None, None))[0]
            expected_images[id(ch)] = (b, row)
        else:
            unmatched.append((new, ch, names))
    rest = [r for rs in left.values() for r in rs]
    for new, ch, names in unmatched:
        cand = [r for r in rest if _matches(r, {n: v for n, v in new.items() if v is not WILD})]
        if cand:
            rest.remove(cand[0])
            b = expected_images.get(id(ch), (None, None))[0]
            expected_images[id(ch)] = (b, cand[0])
            continue
        image = {n: new[n] for n in names}
        row, bad = _nearest(rest, {n: v for n, v in new.items() if v is not WILD})
        bad_decoded = [n for n in bad if n in names]
        res.wrong += len(bad_decoded) or 1
        res.problems.append(f"{label} ({ch.op} at {os.path.basename(ch.file)}:{ch.pos}): the row "
                            "it makes is not in the table; "
                            + (_describe(run, "after", row, image, bad_decoded) if bad_decoded else
                               f"columns that differ: {bad}"))
        if row is not None:
            rest.remove(row)
    for r in rest:
        res.problems.append(f"{label}: a row of the table no decoded change gives: {short(r, 400)}")


def _row_key(row):
    return tuple(sorted((n, canon(v)) for n, v in row.items()))


def _capture(argv) -> tuple:
    from ..cli import main

    out = io.StringIO()
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _check_jsonl(res, run, changes, expected_images, by_key):
    from ..output.dump import json_value

    code, out, err = _capture(["dump", "--format", "jsonl", "--rows-only", *map(str, run.files)])
    if code != 0:
        res.problems.append(f"dump --format jsonl exited {code}: {err.strip()[:500]}")
        return
    try:
        # lines end with "\n" only: str.splitlines() would also split at U+0085, U+2028 ...,
        # which JSON strings may hold as they are
        records = [json.loads(line) for line in out.split("\n") if line]
    except ValueError as e:
        res.problems.append(f"dump --format jsonl printed a line that is not JSON: {e}")
        return
    if len(records) != len(changes):
        res.problems.append(f"dump --format jsonl: {len(records)} records for {len(changes)} changes")
        return
    for i, (rec, ch) in enumerate(zip(records, changes)):
        if (rec.get("op"), rec["source"].get("db"), rec["source"].get("table")) != (ch.op, ch.db, ch.table):
            res.problems.append(f"jsonl record {i}: op/db/table {rec.get('op')} "
                                f"{rec['source'].get('db')}.{rec['source'].get('table')}")
            continue
        exp = expected_images.get(id(ch))
        if exp is None:
            continue
        for side, row in zip(("before", "after"), exp):
            image = getattr(ch, side)
            if row is None or image is None:
                continue
            got = rec.get(side) or {}
            for key in image:
                c = by_key.get(key)
                if c is None:
                    continue
                want = json_value(row[c.name])
                res.jsonl_values += 1
                if got.get(key, WILD) != want or type(got.get(key)) is not type(want):
                    res.jsonl_wrong += 1
                    res.problems.append(f"jsonl record {i} {side} {key} ({c.column_type}): "
                                        f"expected {short(want)}, got {short(got.get(key, '<none>'))}")


UNCOMPARABLE = ("COMPRESSED",)  # mariadb-binlog prints the stored (compressed) bytes


def _check_oracle(res, oracle, run):
    code, out, err = _capture(["dump", "--format", "text", *map(str, run.files)])
    if code != 0:
        res.problems.append(f"dump exited {code}: {err.strip()[:500]}")
        return
    ours = oracle.parse(out).changes
    theirs = []
    runner = getattr(oracle.run, "__wrapped__", oracle.run)
    for f in run.files:
        r = runner(f)
        if r.returncode != 0 or r.problems:
            res.problems.append(f"mariadb-binlog on {f.name}: exit {r.returncode} "
                                f"{r.stderr.strip()[:300]} {r.problems[:3]}")
        theirs += r.changes
    if len(ours) != len(theirs):
        res.problems.append(f"dump prints {len(ours)} changes, mariadb-binlog -vv {len(theirs)}")
        return
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if (a.op, a.db, a.table) != (b.op, b.db, b.table):
            res.problems.append(f"dump change {i}: {a.op} {a.db}.{a.table}, mariadb-binlog "
                                f"{b.op} {b.db}.{b.table}")
            continue
        for side in ("before", "after"):
            mine, other = getattr(a, side), getattr(b, side)
            if (mine is None) != (other is None):
                res.problems.append(f"dump change {i} {side}: one image, mariadb-binlog another")
                continue
            if mine is None:
                continue
            if set(mine) != set(other):
                res.problems.append(f"dump change {i} {side}: columns @{sorted(mine)}, "
                                    f"mariadb-binlog @{sorted(other)}")
            for n in sorted(set(mine) & set(other)):
                (vt, ct), (ovt, oct_) = mine[n], other[n]
                res.oracle_values += 1
                if ct != oct_:
                    res.oracle_wrong += 1
                    res.problems.append(f"dump change {i} {side} @{n}: type comment {ct!r}, "
                                        f"mariadb-binlog {oct_!r}")
                elif vt != ovt and not any(u in ct for u in UNCOMPARABLE):
                    res.oracle_wrong += 1
                    res.problems.append(f"dump change {i} {side} @{n} ({ct}): {short(vt)}, "
                                        f"mariadb-binlog {short(ovt)}")


def _check_replay(res, server, case, run, full):
    from ..output.sql import render_sql
    from ..binlog.stream import open_stream

    files = [str(f) for f in run.files]
    schemas = None
    argv = ["sql"]
    if not full:
        schemas = {f"{run.db}.t": {"columns": [c.name for c in run.columns],
                                   "primary_key": list(run.primary_key)}}
        path = server.tmp / f"{run.db}.json"
        path.write_text(json.dumps(schemas))
        argv += ["--schema", str(path)]
    code, out, err = _capture(argv + files)
    api = "".join(render_sql(open_stream(files, schemas=schemas).transactions()))
    if code != 0:
        res.problems.append(f"sql exited {code}: {err.strip()[:500]}")
    elif out != api:
        res.problems.append("the sql command prints another script than render_sql")
    target = f"{run.db}_r"
    script = "".join(render_sql(open_stream(files, schemas=schemas).transactions(),
                                db_map={run.db: target}))
    parts = [f"SET sql_log_bin = 0; CREATE DATABASE {target} CHARACTER SET utf8mb4; USE {target};\n",
             SESSION, case.create, ";\n", script, "SELECT '#R#';\n",
             "SELECT " + ", ".join(render(c) for c in run.columns) + f" FROM {target}.t;\n"]
    flash = case.settings.row_image == "FULL"
    if flash:
        parts += ["".join(render_sql(open_stream(files, schemas=schemas).transactions(),
                                     flashback=True, db_map={run.db: target})),
                  f"SELECT '#F#', COUNT(*) FROM {target}.t;\n"]
    out, errors = run_script(server.db, "".join(parts))
    for e in errors:
        res.problems.append(f"replaying the sql output: {e[:500]}")
    rows, count, mode = [], None, None
    for line in out.split("\n")[:-1]:
        f = line.split("\t")
        if f[0] == "#R#":
            mode = "r"
        elif f[0] == "#F#":
            count = int(f[1])
        elif mode == "r":
            rows.append(f)
    want = sorted(run.snapshots[-1] or [])
    if sorted(rows) != want:
        only_r = [r for r in sorted(rows) if r not in want][:3]
        only_s = [r for r in want if r not in rows][:3]
        res.problems.append(f"replay of the sql output: {len(rows)} rows, the source {len(want)}; "
                            f"only in the replay {short(only_r, 600)}; only in the source "
                            f"{short(only_s, 600)}")
    elif flash and count != 0:
        res.problems.append(f"flashback of the sql output left {count} rows (expected 0)")
    else:
        res.replayed = True
