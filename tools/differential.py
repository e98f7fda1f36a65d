#!/usr/bin/env python3
"""Randomized differential runs against a real MariaDB, for maintainers: thousands of examples.

    python tools/differential.py --examples 200              # every settings combination
    python tools/differential.py --examples 1000 --combos image=MINIMAL,metadata=FULL,compress=ON
    python tools/differential.py --examples 200 --jobs 2 --report diff.json

For each combination of binlog_row_image (FULL, MINIMAL, NOBLOB) x binlog_row_metadata (FULL,
MINIMAL) x log_bin_compress (OFF, ON) (12 in all, or those --combos names), Hypothesis draws
--examples random tables and workloads (binlog_grammar.testing.schema.cases) and each is run on one
throwaway MariaDB server per job and checked (binlog_grammar.testing.differential: the Python API,
`dump --format jsonl`, `dump` against `mariadb-binlog -vv`, and the `sql` output replayed). The
examples of a combination are drawn in chunks of --chunk, chunk i of combination number c (0..11,
in the order above) with Hypothesis seed --seed + 100000 c + i: a line per chunk names its seed.
A failing example is shrunk by Hypothesis and printed with its seed, the problems, the SQL that
reproduces it and the Python `Case(...)` to paste into REGRESSIONS of
tests/binlog/test_differential.py; the run goes on with the next chunk.

At the end a summary per combination: schemas tried, statements, row changes, values compared with
SELECT and how many were wrong, the same for the JSON lines and for mariadb-binlog, replays, failed
examples, wall time. The exit status is 1 when any example failed.

To replay one chunk with the seed S its line names:
`--combos LABEL --exact-seed --seed S --examples CHUNK --chunk CHUNK`.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # helpers/oracle.py: the parser of mariadb-binlog -vv


def _notes(e: BaseException) -> str:
    return "\n".join([str(e)] + list(getattr(e, "__notes__", []) or []))


def run_combination(server, settings, examples, seed, chunk, max_columns, max_statements, max_rows,
                    out=print):
    """Run `examples` cases of one settings combination; (Tally, [failure dict])."""
    from hypothesis import HealthCheck, Phase, given
    from hypothesis import seed as hseed
    from hypothesis import settings as hsettings

    from binlog_grammar.testing.differential import Tally
    from binlog_grammar.testing.schema import cases

    tally = Tally()
    failures = []
    done = 0
    i = 0
    while done < examples:
        size = min(chunk, examples - done)
        s = seed + i
        i += 1
        state = {"counted": 0, "failing": False, "tally": Tally()}

        @hsettings(max_examples=size, database=None, deadline=None, print_blob=False,
                   suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink])
        @hseed(s)
        @given(case=cases(settings, max_columns, max_statements, max_rows))
        def one(case):
            r = server.check(case)
            if not state["failing"]:
                state["tally"].add(r)
                state["counted"] += 1
            if not r.ok:
                state["failing"] = True
                raise AssertionError(r.report())

        started = time.monotonic()
        try:
            one()
            failed = None
        except AssertionError as e:
            failed = _notes(e)
        except Exception as e:  # noqa: BLE001 - report and go on
            failed = f"{type(e).__name__}: {_notes(e)}"
        t = state["tally"]
        for name in vars(tally):
            setattr(tally, name, getattr(tally, name) + getattr(t, name))
        done += max(state["counted"], 1)
        out(f"  seed {s}: {t.line()} ({time.monotonic() - started:.0f}s wall)")
        if failed:
            out(f"  FAILED with seed {s} ({settings.label}), shrunk:\n" +
                "\n".join("    " + line for line in failed.splitlines()))
            failures.append({"combination": settings.label, "seed": s, "report": failed})
    return tally, failures


def combination_seed(seed: int, label: str, exact=False) -> int:
    """The seed of a combination's first chunk: --seed plus 100000 x its number (0..11), so that
    the combinations try different tables (--exact-seed: --seed itself)."""
    if exact:
        return seed
    from binlog_grammar.testing.schema import ALL_SETTINGS

    return seed + 100000 * [s.label for s in ALL_SETTINGS].index(label)


def _job(args_dict, labels, queue):
    """One process: one server, the combinations `labels` in turn."""
    from binlog_grammar.testing.differential import DiffServer
    from binlog_grammar.testing.schema import Settings
    from helpers import oracle

    def out(line):
        queue.put(("line", line))

    with DiffServer(oracle=oracle if not args_dict["no_oracle"] else None) as server:
        for label in labels:
            settings = Settings.parse(label)
            started = time.monotonic()
            out(f"{settings.label}: {args_dict['examples']} examples from seed "
                f"{combination_seed(args_dict['seed'], label, args_dict['exact_seed'])}")
            tally, failures = run_combination(server, settings, args_dict["examples"],
                                              combination_seed(args_dict["seed"], label,
                                                               args_dict["exact_seed"]),
                                              args_dict["chunk"],
                                              args_dict["max_columns"], args_dict["max_statements"],
                                              args_dict["max_rows"], out)
            wall = time.monotonic() - started
            queue.put(("done", label, vars(tally), failures, wall))


def main(argv=None) -> int:
    from binlog_grammar.testing.schema import ALL_SETTINGS, Settings

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--examples", type=int, default=200, help="examples per combination")
    p.add_argument("--combos", action="append", default=[],
                   help="a combination, as image=FULL|MINIMAL|NOBLOB,metadata=FULL|MINIMAL,"
                        "compress=ON|OFF (repeatable; default: all 12)")
    p.add_argument("--seed", type=int, default=int(time.time()) % 100000,
                   help="Hypothesis seed of the first chunk (default: from the clock)")
    p.add_argument("--exact-seed", action="store_true",
                   help="the first chunk of every combination has seed --seed (to replay a chunk)")
    p.add_argument("--chunk", type=int, default=25, help="examples per Hypothesis run (seed)")
    p.add_argument("--jobs", type=int, default=1, help="servers run side by side")
    p.add_argument("--max-columns", type=int, default=10)
    p.add_argument("--max-statements", type=int, default=6)
    p.add_argument("--max-rows", type=int, default=6)
    p.add_argument("--no-oracle", action="store_true", help="do not compare with mariadb-binlog")
    p.add_argument("--report", help="write the figures and failures as JSON to this file")
    args = p.parse_args(argv)
    labels = [Settings.parse(c).label for c in args.combos] or [s.label for s in ALL_SETTINGS]
    jobs = max(1, min(args.jobs, len(labels)))
    print(f"binlog-grammar differential run: {len(labels)} combinations x {args.examples} examples, "
          f"seed {args.seed}, chunks of {args.chunk}, {jobs} job(s)", flush=True)
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_job, args=(vars(args), labels[j::jobs], queue)) for j in range(jobs)]
    started = time.monotonic()
    for pr in procs:
        pr.start()
    results = {}
    while len(results) < len(labels):
        try:
            msg = queue.get(timeout=5)
        except Exception:  # noqa: BLE001 - queue.Empty: check the workers are alive
            if not any(pr.is_alive() for pr in procs):
                break
            continue
        if msg[0] == "line":
            print(msg[1], flush=True)
        else:
            _, label, tally, failures, wall = msg
            results[label] = {"tally": tally, "failures": failures, "wall_seconds": round(wall, 1)}
    for pr in procs:
        pr.join()
    wall = time.monotonic() - started
    print("\nsummary (per combination: schemas, values compared with SELECT, wrong, jsonl values, "
          "mariadb-binlog values, replayed, failed, wall):")
    total_failed = 0
    for label in labels:
        r = results.get(label)
        if r is None:
            print(f"  {label}: no result (the job died)")
            total_failed += 1
            continue
        t = r["tally"]
        total_failed += len(r["failures"])
        print(f"  {label:45s} {t['cases']:5d} schemas {t['values']:8d} values {t['wrong']:4d} wrong "
              f"{t['jsonl_values']:8d} jsonl ({t['jsonl_wrong']} wrong) {t['oracle_values']:8d} "
              f"mariadb-binlog ({t['oracle_wrong']} wrong) {t['replayed']:5d} replayed "
              f"{len(r['failures']):3d} failed {r['wall_seconds']:7.0f}s")
        for f in r["failures"]:
            print(f"      failed: seed {f['seed']}")
    print(f"total wall time {wall:.0f}s; {total_failed} failing examples")
    if args.report:
        Path(args.report).write_text(json.dumps({"seed": args.seed, "examples": args.examples,
                                                 "chunk": args.chunk, "results": results,
                                                 "wall_seconds": round(wall, 1)}, indent=2))
    return 1 if total_failed else 0


if __name__ == "__main__":
    sys.exit(main())
