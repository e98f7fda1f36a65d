#!/usr/bin/env python3
"""A differential campaign for the compiled JSON-lines lane of `dump --format jsonl`
(output/jsonl_lane.py, binlog_grammar.native._jsonl_lane): mutants of a bench-like binlog (the
first sample's transactions repeated) dumped in this process by both backends, `binlog-grammar
--backend c|python dump --no-progress --format jsonl [--no-checksum] [--rows-only] FILE`; the
exit status, stdout and stderr must be equal. Any difference is a finding: the mutant is written
to --findings and its name printed.

Mutations: half the mutants take tests/helpers/native.py's `damage` (flips, cuts, inserted bytes
anywhere; the CRC32s then catch most of it, so those run with --no-checksum too), the other half
rewrite one to three bytes inside events the lane writes (GTID, XID, ANNOTATE_ROWS, TABLE_MAP,
rows events) with interesting values and make their CRC32 right again, so the mutation reaches
the lane's parsing. tests/native/test_jsonl_lane.py runs a bounded share of both in CI; this is
the long run:

    python3 tools/fuzz_jsonl_lane.py --mutants 5000 --seed 27

--envelope debezium runs `dump --format jsonl --envelope debezium` instead (its lane,
output/debezium_lane.py, and the Debezium forms of native/forms_debezium.h), each mutant under
one connector option drawn from those the compiled forms implement (or the defaults):

    python3 tools/fuzz_jsonl_lane.py --envelope debezium --mutants 5000 --seed 31

--sanitize runs the campaign in a Python that loads the extensions built under AddressSanitizer
and UndefinedBehaviorSanitizer (tools/fuzz_lane.py's build, in a temporary copy of the tree): a
sanitizer report ends the run (exit status 86) and the mutant it was on is kept as a finding.

--mysql takes a MySQL 8.0 binlog instead (tests/helpers/mysql_binlog.py: a corpus transaction
repeated, with GTIDs, BEGINs and other QUERY events, each statement twice), whose GTIDs and
QUERY events the lane writes too.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SANITIZED = os.environ.get("BINLOG_GRAMMAR_FUZZ_SANITIZED") == "1"  # the sanitized run's child
# the child imports the sanitized copy of the package (PYTHONPATH), not this tree's
sys.path[:0] = [str(ROOT / "tests")] if SANITIZED else [str(ROOT), str(ROOT / "tests")]

from binlog_grammar.binlog.framing import scan  # noqa: E402
from binlog_grammar.generated.catalog import EVENTS  # noqa: E402
from helpers.native import cli_dump, damage  # noqa: E402

SAMPLE = ROOT / "samples" / "mariadb-10.11-sample.000001"
DEBEZIUM_OPTIONS = [None, "decimal.handling.mode=string", "decimal.handling.mode=double",
                    "time.precision.mode=adaptive", "time.precision.mode=connect",
                    "binary.handling.mode=base64-url-safe", "binary.handling.mode=hex",
                    "bigint.unsigned.handling.mode=precise", "enable.time.adjuster=false",
                    "connector=mysql"]
LANE_EVENTS = {"GTID_EVENT", "XID_EVENT", "ANNOTATE_ROWS_EVENT", "TABLE_MAP_EVENT",
               "GTID_LOG_EVENT", "ANONYMOUS_GTID_LOG_EVENT", "QUERY_EVENT"}


def seed_file(times: int, path: Path) -> bytes:
    """The sample with its events from the first GTID_EVENT on (the ROTATE_EVENT aside)
    repeated `times` times, end_log_pos and CRC32 made again."""
    data = SAMPLE.read_bytes()
    events = list(scan(SAMPLE))
    start = next(p for p, c, _n in events if EVENTS[c].name == "GTID_EVENT")
    out = bytearray(data[:start])
    for _ in range(times):
        for p, c, n in events:
            if p >= start and EVENTS[c].name != "ROTATE_EVENT":
                ev = bytearray(data[p:p + n - 4])
                ev[13:17] = (len(out) + n).to_bytes(4, "little")
                out += ev + zlib.crc32(bytes(ev)).to_bytes(4, "little")
    path.write_bytes(bytes(out))
    return bytes(out)


def rewrite(base: bytes, events, rnd) -> bytes:
    """One to three bytes inside the lane's events rewritten, their CRC32s made right again."""
    data = bytearray(base)
    for _ in range(rnd.randint(1, 3)):
        p, n = rnd.choice(events)
        at = p + rnd.randrange(19, n - 4) if n > 23 else p + 19
        data[at] = rnd.choice([0, 1, 0x7f, 0x80, 0xff, data[at] ^ (1 << rnd.randrange(8)),
                               rnd.randrange(256)])
        data[p + n - 4:p + n] = zlib.crc32(bytes(data[p:p + n - 4])).to_bytes(4, "little")
    return bytes(data)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mutants", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument("--repeat", type=int, default=6, help="transactions of the sample, repeated")
    ap.add_argument("--findings", type=Path, default=Path("/tmp/fuzz_jsonl_lane"))
    ap.add_argument("--mysql", action="store_true", help="a MySQL 8.0 binlog, not the sample's")
    ap.add_argument("--envelope", choices=("native", "debezium"), default="native")
    ap.add_argument("--sanitize", action="store_true",
                    help="under ASan+UBSan (a sanitized build of the extensions)")
    args = ap.parse_args(argv)
    args.findings.mkdir(parents=True, exist_ok=True)
    if args.sanitize and not SANITIZED:
        return _sanitized(args, sys.argv[1:] if argv is None else list(argv))
    if SANITIZED:
        from binlog_grammar import native

        mod = native.rows()
        if mod is None or not str(mod.__file__).startswith(os.environ["PYTHONPATH"].split(":")[0]):
            print(f"not the sanitized build: {mod and mod.__file__}", file=sys.stderr)
            return 2
    base_path = args.findings / "seed.000001"
    if args.mysql:
        from helpers.mysql_binlog import mysql_file, query_data

        statements = [(query_data(q), 0) for q in (b"BEGIN", b"COMMIT", b"CREATE TABLE t (a INT)")]
        base = mysql_file(statements, repeat=args.repeat)
        base_path.write_bytes(base)
    else:
        base = seed_file(args.repeat, base_path)
    events = [(p, n) for p, c, n in scan(base_path)
              if EVENTS.get(c) is not None and (EVENTS[c].name in LANE_EVENTS or EVENTS[c].row_op)]
    rnd = random.Random(args.seed)
    found = 0
    for k in range(args.mutants):
        if k % 2:
            data, runs = rewrite(base, events, rnd), ((), ("--rows-only",))
        else:
            data, runs = base[:4] + damage(base[4:], rnd), ((), ("--no-checksum",),
                                                            ("--no-checksum", "--rows-only"))
        path = args.findings / "mutant.000001"
        path.write_bytes(data)
        for opts in runs:
            if args.envelope == "debezium":  # --rows-only means nothing to it: an option instead
                option = rnd.choice(DEBEZIUM_OPTIONS)
                opts = ("--envelope", "debezium") + tuple(o for o in opts if o != "--rows-only") \
                    + (("--debezium-option", option) if option else ())
            c = _outcome(path, "c", "--format", "jsonl", *opts)
            if c != _outcome(path, "python", "--format", "jsonl", *opts):
                found += 1
                keep = args.findings / f"finding-{args.seed}-{k}.000001"
                keep.write_bytes(data)
                print(f"finding: {keep} ({' '.join(opts) or 'no options'})", flush=True)
                break
    print(f"{args.mutants} mutants, {found} findings")
    return 1 if found else 0


def _outcome(path, backend, *opts):
    """cli_dump's (status, stdout, stderr), or the exception the command raised (both backends
    must raise alike: a traceback is the Python readers', not a difference; a mutant of seed 32
    reaches an OverflowError of runtime/values.py's DateTime on both)."""
    try:
        return cli_dump(path, backend, *opts)
    except Exception as e:  # noqa: BLE001 - compared, not hidden
        return ("raised", type(e).__name__, str(e))


def _sanitized(args, argv) -> int:
    """This campaign again in a child Python that loads the sanitized extensions."""
    sys.path.insert(0, str(ROOT / "tools"))
    import fuzz_lane  # the sanitized build and its environment (tools/fuzz_lane.py)

    tmp = Path(tempfile.mkdtemp(prefix="fuzz-jsonl-lane-"))
    try:
        pkg = fuzz_lane.build(tmp)
        env = fuzz_lane.sanitized_env(pkg)
        env.update(BINLOG_GRAMMAR_FUZZ_SANITIZED="1", PYTHONPATH=f"{pkg}:{ROOT / 'tests'}")
        r = subprocess.run([sys.executable, str(Path(__file__).resolve()), *argv], env=env,
                           cwd=tmp)
        if r.returncode == 86:  # a sanitizer report: the mutant it was on
            keep = args.findings / f"finding-sanitizer-{args.seed}.000001"
            shutil.copy(args.findings / "mutant.000001", keep)
            print(f"finding (sanitizer): {keep}")
        return r.returncode
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
