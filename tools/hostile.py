#!/usr/bin/env python3
"""The long run of the hostile-content suite (tests/output/test_hostile.py is its bounded form).

Draws N cases (binlog_grammar.testing.hostile.cases), runs each on a real source MariaDB and pipes
`binlog-grammar sql` (then `flashback`) and `binlog-grammar dump` into a real target through the
`mariadb` client under every client charset (utf8mb4, latin1, gbk, big5, sjis, cp932) and every
target sql_mode (default, NO_BACKSLASH_ESCAPES, ANSI_QUOTES), and prints

    cases: N (refused by the server: R), executions: E, injections: 0, differences: 0,
    client failures: 0

A case the source refuses (a name MariaDB does not accept) is drawn again and counted as refused.
With --shrink, the first failing case is shrunk by Hypothesis to a minimal one (printed as a
`Case(...)` to paste into test_hostile.py's REGRESSIONS). Exit status 1 when anything failed.

    python3 tools/hostile.py --examples 200 [--seed 1] [--shrink] [--charsets gbk,sjis]
        [--modes default,ANSI_QUOTES] [--outputs sql,dump] [--cli-path DIR]

--cli-path runs another checkout's binlog-grammar (PYTHONPATH=DIR), e.g. an older commit unpacked
with `git archive COMMIT binlog_grammar | tar -x -C DIR`, to see what the suite finds there.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hypothesis import HealthCheck, Phase, given, reject, settings  # noqa: E402

from binlog_grammar.testing.hostile import cases  # noqa: E402
from binlog_grammar.testing.hostile_harness import (  # noqa: E402
    CLIENT_CHARSETS, OUTPUTS, SQL_MODES, Harness, Refused, summary)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False,
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--examples", type=int, default=50, help="cases to draw (default 50)")
    ap.add_argument("--seed", type=int, default=0, help="Hypothesis seed (default 0)")
    ap.add_argument("--shrink", action="store_true", help="shrink the first failing case")
    ap.add_argument("--charsets", default=",".join(CLIENT_CHARSETS))
    ap.add_argument("--modes", default=",".join(SQL_MODES))
    ap.add_argument("--outputs", default=",".join(OUTPUTS))
    ap.add_argument("--cli-path", help="run binlog-grammar from this folder (PYTHONPATH)")
    ap.add_argument("--max-rows", type=int, default=3, help="rows per case (default 3)")
    args = ap.parse_args(argv)
    charsets, modes = args.charsets.split(","), args.modes.split(",")
    outputs = tuple(args.outputs.split(","))
    totals = {"cases": 0, "refused": 0, "executions": []}
    failures = []
    t0 = time.time()

    with Harness(args.cli_path) as h:
        def one(case, record=True):
            try:
                done = h.check(case, charsets=charsets, modes=modes, outputs=outputs)
            except Refused:
                if record:
                    totals["refused"] += 1
                reject()
            bad = [e for e in done if e.problems]
            if record:
                totals["cases"] += 1
                totals["executions"] += done
                if bad:
                    failures.append((case, bad))
                    print(f"case {totals['cases']}: {len(bad)} failing runs, e.g. {bad[0]}"[:2000],
                          file=sys.stderr)
            return bad

        # with --shrink the first failure raises, and Hypothesis shrinks it and prints the minimal
        # case (the counts then include the shrinking runs)
        phases = [Phase.generate, Phase.shrink] if args.shrink else [Phase.generate]

        @settings(max_examples=args.examples, deadline=None, database=None, phases=phases,
                  suppress_health_check=list(HealthCheck), print_blob=False)
        @given(case=cases(max_rows=args.max_rows))
        def run(case):
            bad = one(case)
            if bad and args.shrink:
                raise AssertionError("\n".join(sorted({str(e) for e in bad}))[:3000])

        run._hypothesis_internal_use_seed = args.seed
        try:
            run()
        except AssertionError as e:
            print(f"minimal failing case (above) fails with:\n{e}")
        print(summary(totals["cases"], totals["executions"], totals["refused"]) +
              f" ({time.time() - t0:.0f}s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
