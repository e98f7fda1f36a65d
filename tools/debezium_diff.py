#!/usr/bin/env python3
"""The `debezium` envelope against the real Debezium MySQL connector, for maintainers: many drawn
tables and workloads per option set (tests/debezium runs a few).

    python3 tools/debezium_diff.py --examples 50                   # every option set
    python3 tools/debezium_diff.py --examples 20 --only decimal-string --seed 7
    python3 tools/debezium_diff.py --samples /tmp/dbz-samples      # the connector's records only
    python3 tools/debezium_diff.py --examples 20 --connector-only  # the connector on drawn DDL
    python3 tools/debezium_diff.py --examples 20 --records schema-changes  # DDL records
    python3 tools/debezium_diff.py --examples 20 --records snapshot        # op "r" records

One MariaDB (reporting 5.5.5-<version>, ROW, FULL images and metadata) and, per example, one run
of the connector (binlog_grammar.testing.debezium) capturing --cases drawn cases, each in a
database of its own (binlog_grammar.testing.debezium_diff.connector_cases: the randomized
differential suite's tables but for the column types the connector stops on), then
`binlog-grammar dump --format jsonl --envelope debezium` of the same binlog files with the same
options, every record compared key and value, field by field. The option sets are those of
tests/debezium/test_debezium_diff.py; every chosen set captures the same drawn cases in one
connector run per example (an engine per set in one JVM: DebeziumServer.capture_many), drawn
from --seed (with --connector-only, one run per set and example, seeds --seed + 1000 * the
set's number): a failing example prints its option set, seed, problems and the SQL that
reproduces it.

--records schema-changes compares the schema-change records of the drawn cases' DDL
(binlog_grammar.testing.debezium_schema_diff); --records snapshot fills the drawn tables before
the connector starts and compares its initial snapshot with `dump ... snapshot.mode=initial_only`
(binlog_grammar.testing.debezium_snapshot_diff).

--samples DIR writes the connector's records for the table of every column type under each
option set (binlog_grammar.testing.debezium_samples) and copies of the binlog files, for the
envelope's author. --connector-only runs the connector alone (no dump): which drawn DDL and
workloads it takes.

At the end: per option set, examples, change records and values compared, values differing,
fields explained (binlog_grammar.testing.debezium_diff: the connector's clock, ...), the
connector's known mistakes (debezium_diff.connector_wrong: values where the connector is wrong and
the envelope writes what the server stored); then failures and wall time; exit status 1 when any
failed. --records snapshot counts the snapshot's rows and schema-change records together.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OPTION_SETS = {
    "default": ({}, False),
    "decimal-string": ({"decimal.handling.mode": "string"}, False),
    "decimal-double": ({"decimal.handling.mode": "double"}, False),
    "time-connect": ({"time.precision.mode": "connect"}, False),
    "binary-base64": ({"binary.handling.mode": "base64"}, False),
    "binary-base64-url-safe": ({"binary.handling.mode": "base64-url-safe"}, False),
    "binary-hex": ({"binary.handling.mode": "hex"}, False),
    "bigint-precise": ({"bigint.unsigned.handling.mode": "precise"}, False),
    "transactions": ({"provide.transaction.metadata": "true"}, False),
    "schemas": ({}, True),
}


def _other_records(server, kind, cases, options, schemas):
    """(Comparison, None) of the schema-change or snapshot records of `cases`."""
    from binlog_grammar.testing import debezium_diff as dd

    if kind == "schema-changes":
        from binlog_grammar.testing.debezium_schema_diff import check_cases

        count, problems = check_cases(server, cases, options, schemas)
        return dd.Comparison(changes=count, problems=problems), None
    from binlog_grammar.testing.debezium_snapshot_diff import check

    count, values, problems = check(server, cases, options, schemas)
    return dd.Comparison(changes=count, values=values, problems=problems), None


def _many(server, kind, cases, option_sets):
    """[(Comparison, Capture or None)] of `cases` under every option set, one JVM."""
    from binlog_grammar.testing import debezium_diff as dd

    if kind == "changes":  # an option set whose engine stopped is that set's failure alone
        return dd.check_many(server, cases, option_sets, tolerate=True)
    if kind == "schema-changes":
        from binlog_grammar.testing.debezium_schema_diff import case_statements, check_many

        sql, dbs, base = case_statements(server, cases)
        return [(dd.Comparison(changes=count, problems=problems), None)
                for count, problems in check_many(server, sql, dbs, option_sets, base=base)]
    from binlog_grammar.testing.debezium_snapshot_diff import check_many

    return [(dd.Comparison(changes=count, values=values, problems=problems), None)
            for count, values, problems in check_many(server, cases, option_sets)]


def run_sets(server, names, examples, seed, n_cases, out=print, kind="changes"):
    """Every option set of `names` on the same drawn cases, each example one connector run
    (an engine per option set in one JVM); a line of figures per option set."""
    from hypothesis import HealthCheck, Phase, given
    from hypothesis import seed as hseed
    from hypothesis import settings as hsettings
    from hypothesis import strategies as st

    from binlog_grammar.testing import debezium_diff as dd

    totals = {name: dd.Comparison() for name in names}
    state = {"failures": 0, "examples": 0, "start": []}

    @hsettings(max_examples=examples, database=None, deadline=None, print_blob=False,
               suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @hseed(seed)
    @given(cases=st.lists(dd.connector_cases(), min_size=n_cases, max_size=n_cases))
    def one(cases):
        state["examples"] += 1
        try:
            results = _many(server, kind, cases, [OPTION_SETS[n] for n in names])
        except Exception as e:  # the connector stopped, or dump failed: a failure, go on
            state["failures"] += 1
            out(f"  seed {seed} example {state['examples']}: {str(e)[-2000:]}")
            out("  " + "\n  ".join(c.reproducer() for c in cases))
            return
        for name, (res, cap) in zip(names, results):
            if cap is not None:
                state["start"].append(cap.start_seconds)
            totals[name].add(res)
            if res.problems:
                state["failures"] += 1
                out(f"  [{name}] seed {seed} example {state['examples']}: "
                    f"{len(res.problems)} problems")
                out("    " + "\n    ".join(res.problems[:20]))
                out("  " + "\n  ".join(c.reproducer() for c in cases))

    began = time.monotonic()
    one()
    for name, total in totals.items():
        out(f"{name}: {state['examples']} examples, {total.changes} "
            f"{'change' if kind == 'changes' else kind} records, {total.values} "
            f"values compared, {total.differing} differing, explained {total.explained or '{}'}, "
            f"the connector's known mistakes {total.connector_wrong or '{}'}")
    start = state["start"]
    out(f"{state['failures']} failed; connector streaming after "
        f"{(sum(start) / len(start)) if start else 0:.1f} s on average; "
        f"{time.monotonic() - began:.0f} s for {len(names)} option sets")
    return state["failures"]


def run_set(server, name, options, schemas, examples, seed, n_cases, connector_only, out=print,
            kind="changes"):
    from hypothesis import HealthCheck, Phase, given
    from hypothesis import seed as hseed
    from hypothesis import settings as hsettings
    from hypothesis import strategies as st

    from binlog_grammar.testing import debezium_diff as dd

    total = dd.Comparison()
    state = {"failures": 0, "examples": 0, "start": [], "changes": 0}

    @hsettings(max_examples=examples, database=None, deadline=None, print_blob=False,
               suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @hseed(seed)
    @given(cases=st.lists(dd.connector_cases(), min_size=n_cases, max_size=n_cases))
    def one(cases):
        state["examples"] += 1
        try:
            if connector_only:
                server.count += 1
                base = f"dbz{server.count}"
                sql, dbs = [], []
                for i, case in enumerate(cases):
                    dbs.append(f"{base}_{i}")
                    sql += dd.case_sql(case, dbs[-1])
                cap = server.capture(sql + [f"USE `{base}`"], options, schemas=schemas, db=base,
                                     force=True, include=f"{base}(_[0-9]+)?")
                res = dd.Comparison(changes=len(dd.change_records(cap.records, schemas, set(dbs))))
            elif kind != "changes":
                res, cap = _other_records(server, kind, cases, options, schemas)
            else:
                res, cap = dd.check(server, cases, options, schemas)
        except Exception as e:  # the connector stopped, or dump failed: a failure, go on
            state["failures"] += 1
            out(f"  [{name}] seed {seed} example {state['examples']}: {str(e)[-2000:]}")
            out("  " + "\n  ".join(c.reproducer() for c in cases))
            return
        if cap is not None:
            state["start"].append(cap.start_seconds)
        total.add(res)
        if res.problems:
            state["failures"] += 1
            out(f"  [{name}] seed {seed} example {state['examples']}: {len(res.problems)} problems")
            out("    " + "\n    ".join(res.problems[:20]))
            out("  " + "\n  ".join(c.reproducer() for c in cases))

    began = time.monotonic()
    one()
    start = state["start"]
    out(f"{name}: {state['examples']} examples, {total.changes} change records, {total.values} "
        f"values compared, {total.differing} differing, explained {total.explained or '{}'}, "
        f"the connector's known mistakes {total.connector_wrong or '{}'}, "
        f"{state['failures']} failed; connector streaming after "
        f"{(sum(start) / len(start)) if start else 0:.1f} s on average; "
        f"{time.monotonic() - began:.0f} s")
    return state["failures"]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--examples", type=int, default=10, help="connector runs per option set")
    p.add_argument("--cases", type=int, default=3, help="drawn cases per connector run")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", action="append", choices=sorted(OPTION_SETS),
                   help="this option set only (repeatable)")
    p.add_argument("--samples", metavar="DIR", help="write the table of every type's samples")
    p.add_argument("--connector-only", action="store_true",
                   help="run the connector alone on the drawn cases (no dump, no comparison)")
    p.add_argument("--records", choices=["changes", "schema-changes", "snapshot"],
                   default="changes", help="which records to compare (default: changes)")
    args = p.parse_args(argv)

    from binlog_grammar.testing.debezium import DebeziumServer, missing

    why = missing()
    if why:
        print(why, file=sys.stderr)
        return 2
    with DebeziumServer() as server:
        if args.samples:
            from binlog_grammar.testing.debezium_samples import write_samples

            write_samples(args.samples, server)
            return 0
        failed = 0
        if not args.connector_only:  # every option set in one connector run per example
            names = [n for n in OPTION_SETS if not args.only or n in args.only]
            failed = run_sets(server, names, args.examples, args.seed, args.cases,
                              kind=args.records)
            print(f"failed examples: {failed}")
            return 1 if failed else 0
        for number, name in enumerate(OPTION_SETS):
            if args.only and name not in args.only:
                continue
            options, schemas = OPTION_SETS[name]
            failed += run_set(server, name, options, schemas, args.examples,
                              args.seed + 1000 * number, args.cases, args.connector_only,
                              kind=args.records)
    print(f"failed examples: {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
