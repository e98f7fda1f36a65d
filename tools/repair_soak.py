#!/usr/bin/env python3
"""Run many more repair examples than CI does, on one throwaway MariaDB primary and replica.

    python tools/repair_soak.py --examples 400            # 50 per settings combination
    python tools/repair_soak.py --examples 100 --only gtid,parallel,MINIMAL
    python tools/repair_soak.py --minutes 30              # as many as fit in 30 minutes
    python tools/repair_soak.py --hostile --examples 200  # hostile names and values (issue 25)

Each example is what tests/repair/test_repair.py checks (binlog_grammar.testing.drift.check_repair): a
drawn schema, drift on the replica and a workload on the primary that runs into it; a dry run
must change nothing, the undo file of `repair --apply --no-start` must give the replica's rows
back, and `repair --apply` must end with the replica running, caught up, and every table's
CHECKSUM TABLE equal to the primary's. The settings combinations (GTID or file/position,
serial or parallel applier, FULL or MINIMAL images) take turns. A failure is shrunk by Hypothesis
and printed as a pasteable Scenario and as SQL; the run goes on with the next combination unless
--stop. The summary gives examples, how many stopped replication, repair rounds, rows repaired,
time, per combination. Exit 1 when an example failed.

--hostile runs what tests/repair/test_repair_hostile.py checks instead
(binlog_grammar.testing.repair_hostile.check_case): database, table and column names and key
and row values drawn from dangerous pieces, the dry run's plan and the undo file piped into the
replica through the `mariadb` client under every client character set of CLIENT_RUNS; the
canary table must survive, no file appear, the client exit 0, the rows come out exact. The
summary gives cases, client executions, injections (0) and differences (0).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _runner(combo, batch, pair, st, given, settings, HealthCheck, scenarios, check_repair):
    """A Hypothesis test of `batch` examples of one settings combination, adding to `st`."""

    @settings(max_examples=batch, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(sc=scenarios(settings=combo))
    def run(sc):
        t = time.monotonic()
        report = check_repair(pair, sc, tempfile.mkdtemp(prefix="repair-soak-"))
        st["examples"] += 1
        st["stopped"] += report["stopped"]
        st["rounds"] += report["rounds"]
        st["rows"] += report["rows"]
        st["seconds"] += time.monotonic() - t

    return run


def hostile(args) -> int:
    """The --hostile soak: random hostile cases until --examples or --minutes."""
    from hypothesis import HealthCheck, given, seed, settings

    from binlog_grammar.testing.repair_hostile import cases, check_case
    from binlog_grammar.testing.replicas import ReplicaPair

    deadline = time.monotonic() + args.minutes * 60 if args.minutes else None
    st = {"cases": 0, "client runs": 0, "failed": 0}
    started = time.monotonic()
    pair = ReplicaPair().start()
    try:
        while st["cases"] < args.examples and not st["failed"]:
            if deadline is not None and time.monotonic() > deadline:
                break

            @settings(max_examples=min(10, args.examples - st["cases"]), deadline=None,
                      database=None, suppress_health_check=list(HealthCheck))
            @given(case=cases())
            def run(case):
                if deadline is not None and time.monotonic() > deadline:
                    return
                report = check_case(pair, case, tempfile.mkdtemp(prefix="repair-soak-hostile-"))
                st["cases"] += 1
                st["client runs"] += report["client_runs"]

            if args.seed is not None:
                run = seed(args.seed + st["cases"])(run)
            try:
                run()
            except Exception as e:  # noqa: BLE001 - report it (with the shrunk case) and stop
                st["failed"] += 1
                notes = "\n".join(getattr(e, "__notes__", []))
                print(f"FAILED: {type(e).__name__}: {e}\n{notes}", flush=True)
            print(f"  {st['cases']} cases, {st['client runs']} client runs "
                  f"({time.monotonic() - started:.0f} s)", flush=True)
    finally:
        pair.cleanup()
    print(f"hostile: {st['cases']} cases, {st['client runs']} executions of a plan or undo file "
          f"through the mariadb client, {st['failed']} failed (an injection or a difference); "
          f"wall time {time.monotonic() - started:.0f} s")
    return 1 if st["failed"] else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", type=int, default=160, help="examples in all (default 160)")
    ap.add_argument("--minutes", type=float, help="stop starting new examples after this long")
    ap.add_argument("--only", action="append", default=[],
                    help="a settings combination to run (repeatable), e.g. gtid,parallel,MINIMAL")
    ap.add_argument("--seed", type=int, help="Hypothesis seed (default: random)")
    ap.add_argument("--stop", action="store_true", help="stop at the first failure")
    ap.add_argument("--hostile", action="store_true",
                    help="hostile names and values through the plan and the undo file (issue 25)")
    args = ap.parse_args(argv)

    from hypothesis import HealthCheck, given, seed, settings

    from binlog_grammar.testing import mariadb
    from binlog_grammar.testing.drift import ALL_SETTINGS, check_repair, scenarios
    from binlog_grammar.testing.replicas import ReplicaPair

    if not mariadb.available():
        print("repair_soak: mariadbd is not installed (apt-get install -y mariadb-server)")
        return 2
    if args.hostile:
        return hostile(args)
    combos = [s for s in ALL_SETTINGS if not args.only or s.label in args.only]
    if not combos:
        print(f"repair_soak: no combination matches {args.only}; they are: "
              + ", ".join(s.label for s in ALL_SETTINGS))
        return 2
    per = max(1, args.examples // len(combos))
    deadline = time.monotonic() + args.minutes * 60 if args.minutes else None
    stats = defaultdict(lambda: defaultdict(float))
    failures = []
    started = time.monotonic()
    pair = ReplicaPair(replica_options=["--max-relay-log-size=4096"]).start()
    print(f"primary port {pair.primary.port}, replica port {pair.replica.port}; {per} examples "
          f"per combination, {len(combos)} combinations", flush=True)
    try:
        rounds_left = True
        while rounds_left:
            rounds_left = False
            for combo in combos:
                if stats[combo.label]["examples"] >= per or stats[combo.label]["failures"]:
                    continue
                if deadline is not None and time.monotonic() > deadline:
                    break
                rounds_left = True
                batch = min(10, per - int(stats[combo.label]["examples"]))

                run = _runner(combo, batch, pair, stats[combo.label], given, settings,
                              HealthCheck, scenarios, check_repair)

                if args.seed is not None:
                    run = seed(args.seed)(run)
                try:
                    run()
                except Exception as e:  # noqa: BLE001 - report it and go on
                    failures.append((combo.label, e))
                    stats[combo.label]["failures"] += 1  # no more of this combination
                    notes = "\n".join(getattr(e, "__notes__", []))  # Hypothesis: the shrunk example
                    print(f"FAILED {combo.label}: {type(e).__name__}: {e}\n{notes}", flush=True)
                    if args.stop:
                        rounds_left = False
                        break
                done = int(sum(s["examples"] for s in stats.values()))
                print(f"  {combo.label}: {int(stats[combo.label]['examples'])} done "
                      f"({done} in all, {time.monotonic() - started:.0f} s)", flush=True)
    finally:
        pair.cleanup()
    print(f"\n{'combination':28} {'examples':>8} {'stopped':>8} {'rounds':>7} {'rows':>6} "
          f"{'s/example':>9} {'failed':>6}")
    total = defaultdict(float)
    for combo in combos:
        st = stats[combo.label]
        n = int(st["examples"])
        for k in ("stopped", "rounds", "rows", "seconds", "failures"):
            total[k] += st[k]
        total["examples"] += n
        print(f"{combo.label:28} {n:8d} {int(st['stopped']):8d} {int(st['rounds']):7d} "
              f"{int(st['rows']):6d} {st['seconds'] / max(n, 1):9.2f} {int(st['failures']):6d}")
    n = int(total["examples"])
    print(f"{'all':28} {n:8d} {int(total['stopped']):8d} {int(total['rounds']):7d} "
          f"{int(total['rows']):6d} {total['seconds'] / max(n, 1):9.2f} {int(total['failures']):6d}")
    print(f"wall time {time.monotonic() - started:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
