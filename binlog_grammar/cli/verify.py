"""`binlog-grammar verify`: parse and rebuild every event of each file and check its CRC32
(binlog_grammar.binlog.verify), one report a file, as text or JSON."""
from __future__ import annotations

import os

from .options import add_quiet_option
from .reading import Progress, progress_wanted


def add(sub):
    v = sub.add_parser("verify", help="parse and rebuild every event, check CRC32s")
    v.add_argument("files", nargs="+", metavar="FILE")
    v.add_argument("--json", action="store_true", help="one JSON object per file")
    v.add_argument("--no-checksum", action="store_true", help="do not verify CRC32s")
    add_quiet_option(v)
    v.set_defaults(func=run)


def run(args) -> int:
    import json

    from ..binlog.stream import expand_inputs
    from ..binlog.verify import verify_file

    ok = True
    paths = [p for f in args.files for p in (expand_inputs([f]) if f.endswith(".index") else [f])]
    sizes = [os.path.getsize(p) if os.path.isfile(p) else 0 for p in paths]
    # each file's report is printed after its bar is cleared, so a terminal stdout is no bar
    bar, before, total = Progress(progress_wanted(args, False), "verify"), 0, sum(sizes)
    for path, size in zip(paths, sizes):
        try:
            report = verify_file(path, verify_checksum=not args.no_checksum,
                                 progress=lambda end, b=before: bar(b + end, total))
        finally:
            bar.close()  # before the file's report, which goes to the same terminal
        before += size
        ok = ok and report["ok"]
        if args.json:
            print(json.dumps(report, sort_keys=True))
        else:
            print(report_text(report))
    return 0 if ok else 1


def report_text(r) -> str:
    """The text form of one file's report."""
    lines = [f"{r['file']}: {r['events']} events, {r['byte_identical']} rebuilt byte-identical, "
             f"{r['checksums_verified']} checksums verified, {r['checksum_failures']} checksum failures"
             + (f", {r['inner_events']} events inside payloads" if r.get("inner_events") else "")]
    for e in r["errors"]:
        where = f"at offset {e['offset']}" if e["offset"] is not None else "in the file"
        what = f" ({e['event_type']})" if e["event_type"] else ""
        lines.append(f"  error {where}{what}: {e['message']}")
    lines.append("  OK" if r["ok"] else "  FAILED")
    return "\n".join(lines)
